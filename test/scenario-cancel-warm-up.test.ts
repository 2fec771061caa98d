/**
 * A scenario cancelled during the process's warm-up (src/scenario/warm-up.ts) stops at once: it
 * does not wait out the ~0.6 s of warm-up load, and the warm-up it started is stopped with it, so
 * nothing of it is left open when the call returns. Its own file, so this process has not warmed
 * up yet.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { CancelledError } from '../src/errors.js';
import { generatorThreadResources } from '../src/load/index.js';
import { proxyThreadResources } from '../src/proxy-host/index.js';
import { runScenario, scenarioFromArguments } from '../src/scenario/index.js';
import { warmUpOnce } from '../src/scenario/warm-up.js';
import { startApp } from './fixtures/scenario/app.js';

/** Sockets, listening servers and timers alive now, here and on the load generator's and the proxy's threads. */
async function handles(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const resource of [...process.getActiveResourcesInfo(), ...(await generatorThreadResources()), ...(await proxyThreadResources())]) {
    if (resource === 'TCPServerWrap' || resource === 'TCPSocketWrap' || resource === 'Timeout') counts[resource] = (counts[resource] ?? 0) + 1;
  }
  return counts;
}

test('a cancel during the warm-up ends the scenario and its warm-up at once; the next scenario warms up again', async () => {
  const app = await startApp();
  try {
    const spec = await scenarioFromArguments('latency', { url: `${app.origin}/ok`, duration: '1s', num_clients: 1, rps: 10, latency: 1 }, makeConfig().scenario);
    const before = await handles();
    const controller = new AbortController();
    const started = performance.now();
    const run = runScenario(spec, { signal: controller.signal });
    setTimeout(() => controller.abort(), 150); // the warm-up's load is under way by then
    await assert.rejects(run, CancelledError);
    const cancelledAfter = performance.now() - started;
    // Closed sockets are released on the next turns of the loop: far sooner than the warm-up's load would end.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await handles(), before, 'the warm-up was stopped: nothing of it is left');
    assert.equal(app.arrivals.length, 0, 'nothing reached the app');

    // Not counted as done: the next caller warms up, for its whole length.
    const again = performance.now();
    await warmUpOnce();
    const warmUpTook = performance.now() - again;
    assert.ok(cancelledAfter < warmUpTook * 0.75, `cancelled after ${cancelledAfter.toFixed(0)} ms; a whole warm-up took ${warmUpTook.toFixed(0)} ms`);
  } finally {
    await app.close();
  }
});
