/**
 * What the tool-call plane's fault proxies add to a tool call when their plan is empty, over
 * stdio (the `faultline toolcall proxy stdio` process) and over HTTP (the in-process proxy).
 */
import { percentile, toolcallOverhead } from '../lib/toolcall-overhead.js';
import type { BenchCheck, Row } from '../lib/check.js';

const proxyOverhead: BenchCheck = {
  name: 'toolcall.proxy-overhead',
  measures:
    'p50 of 600 get_items calls from the official SDK client through ' +
    'the tool-call proxy with an empty plan, over stdio and over HTTP',
  peer: 'the same calls straight to the same server, alternating in blocks of 100',
  target: 'at most 1 ms added over stdio, 2 ms over HTTP',
  tests: ['test/toolcall-stdio.test.ts', 'test/toolcall-http.test.ts'],
  async run() {
    const rows: Row[] = [];
    for (const [transport, goalMs] of [
      ['stdio', 1],
      ['http', 2],
    ] as const) {
      const { direct, proxied } = await toolcallOverhead(transport, 600);
      rows.push({
        label: transport,
        ours: { label: 'through the proxy', value: percentile(proxied, 50), unit: 'ms' },
        peer: { label: 'direct', value: percentile(direct, 50), unit: 'ms' },
        target: { on: 'difference', atMost: goalMs },
      });
    }
    return rows;
  },
};

export const checks: BenchCheck[] = [proxyOverhead];
