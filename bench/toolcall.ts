/**
 * Tool-call-plane proxy overhead, measured side by side in one run on loopback (bench/lib/
 * toolcall-overhead.ts): the official SDK client calling our SDK-built test server directly and
 * through each proxy with an empty plan. Prints p50 and p99 each way and what the proxy adds.
 * Goal: p50 added < 1 ms over stdio, < 2 ms over HTTP (bench:check's toolcall.proxy-overhead).
 *
 * Run: npx tsc -p . && node dist/bench/toolcall.js   (BENCH_TOOLPLANE_CALLS, default 2000 per path)
 */
import { percentile, toolcallOverhead } from './lib/toolcall-overhead.js';

const CALLS = Number(process.env['BENCH_TOOLPLANE_CALLS'] ?? 2000);
const out = (line = ''): void => void process.stdout.write(`${line}\n`);

out(`tool-call-plane proxy overhead, ${CALLS} calls per path, empty plan, get_items(count 5)`);
for (const [transport, goalMs] of [
  ['stdio', 1],
  ['http', 2],
] as const) {
  const { direct: a, proxied: b } = await toolcallOverhead(transport, CALLS);
  const added = percentile(b, 50) - percentile(a, 50);
  out(
    `${transport.padEnd(6)} direct p50 ${percentile(a, 50).toFixed(3)} ` +
      `ms p99 ${percentile(a, 99).toFixed(3)} ms | proxied p50 ${percentile(b, 50).toFixed(3)} ` +
      `ms p99 ${percentile(b, 99).toFixed(3)} ms | ` +
      `added p50 ${added.toFixed(3)} ms (goal < ${goalMs} ms: ` +
      `${added < goalMs ? 'met' : 'missed'}), ratio ` +
      `${(percentile(b, 50) / percentile(a, 50)).toFixed(2)}×`,
  );
}
