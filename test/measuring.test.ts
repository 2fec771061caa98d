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
import { runCliProcess } from './helpers/processes.js';

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

/** The time of the first stderr line matching `pattern` (the logger stamps each line), or undefined. */
function loggedAt(stderr: string, pattern: RegExp): number | undefined {
  const line = stderr.split('\n').find((text) => pattern.test(text));
  return line === undefined ? undefined : Date.parse(line.slice(0, line.indexOf(' ')));
}

/** The warm-up's delay the test asks for: a scenario call under load began up to ~3 s after start-up. */
const WARM_UP_DELAY_MS = 4_000;

test("the MCP server's code warm-up waits while a scenario measures, then runs", async (t) => {
  const target = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
  try {
    // The warm-up's timer fires WARM_UP_DELAY_MS after the server is ready, inside the 6 s of load
    // of a scenario that began before then: every step of it is held until the load is over. One
    // that began later (a busy machine that slow to start the call) tells nothing: try again. With
    // the default 1 s delay a loaded machine began the scenario too late in 2 attempts of 3.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const session = await connectStdio(['--log-level', 'debug', 'mcp'], {
        FAULTLINE_CODE_WARM_UP_DELAY_MS: String(WARM_UP_DELAY_MS),
      });
      try {
        const result = await session.client.callTool({
          name: 'fault_run_latency_impact_scenario',
          arguments: { url, duration: '6s', latency: 20 },
        });
        assert.notEqual(result.isError, true);
        for (let i = 0; i < 600 && !/code warm-up: done/.test(session.stderr()); i++)
          await new Promise((resolve) => setTimeout(resolve, 100));
        const stderr = session.stderr();
        const ready = loggedAt(stderr, /MCP server ready/)!;
        const started = loggedAt(stderr, /fault_run_latency_impact_scenario: GET/)!;
        const done = loggedAt(stderr, /code warm-up: done/);
        assert.ok(done !== undefined, 'the warm-up ran once the scenario was over');
        if (started - ready >= WARM_UP_DELAY_MS - 10) {
          t.diagnostic(
            `attempt ${attempt}: the scenario began ${started - ready} ms ` +
              `after start-up, when the warm-up may already have been under way`,
          );
          continue;
        }
        assert.ok(done - started >= 6000, `the warm-up was done ${done - started} ms into the 6 s scenario`);
        return;
      } finally {
        await session.close();
      }
    }
    t.skip('inconclusive: in 3 attempts no scenario began before the warm-up was due');
  } finally {
    await new Promise<void>((resolve) => target.close(() => resolve()));
  }
});

test('a warm-up delay that is not a whole number of ms from 0 to 60000 is refused, naming its variable', async () => {
  for (const value of ['soon', '60001']) {
    const run = await runCliProcess(['mcp'], { FAULTLINE_CODE_WARM_UP_DELAY_MS: value });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, new RegExp(`FAULTLINE_CODE_WARM_UP_DELAY_MS .*"${value}"`));
  }
});
