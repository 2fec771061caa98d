/**
 * A scenario's measured run and the MCP server's idle-time code warm-up: the warm-up runs on the
 * thread the scenario's fault proxy runs on, so it waits until no scenario measures
 * (src/measuring.ts). Without the gate an agent's first scenario call, made right after start-up,
 * had its second 0 stalled by the grammar's compile (p95 ~300–500 ms where later seconds had
 * ~105 ms with a 100 ms latency fault).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { beginMeasuring, whenNotMeasuring } from '../src/measuring.js';
import { connectStdio } from './helpers/mcp.js';

test('whenNotMeasuring waits for the last of overlapping measured runs; ending twice counts once', async () => {
  await whenNotMeasuring();
  const endFirst = beginMeasuring();
  const endSecond = beginMeasuring();
  let idle = false;
  const waiting = whenNotMeasuring().then(() => (idle = true));
  endFirst();
  endFirst();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(idle, false, 'one run still measures');
  endSecond();
  await waiting;
  assert.equal(idle, true);
});

test("the MCP server's code warm-up waits while a scenario measures, then runs", async () => {
  const target = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
  const session = await connectStdio(['--log-level', 'debug', 'mcp']);
  try {
    // Called at once: the warm-up's timer (1 s after start-up) fires during the 3 s run.
    const result = await session.client.callTool({
      name: 'fault_run_latency_impact_scenario',
      arguments: { url, duration: '3s', latency: 20 },
    });
    assert.notEqual(result.isError, true);
    assert.doesNotMatch(session.stderr(), /code warm-up: done/, 'the warm-up ran while the scenario measured');
    // And it runs once the scenario is over.
    for (let i = 0; i < 300 && !/code warm-up: done/.test(session.stderr()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.match(session.stderr(), /code warm-up: done/);
  } finally {
    await session.close();
    await new Promise<void>((resolve) => target.close(() => resolve()));
  }
});
