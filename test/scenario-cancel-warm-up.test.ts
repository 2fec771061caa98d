/**
 * A scenario cancelled during the process's warm-up (src/scenario/warm-up.ts) stops at once: it
 * does not wait out the ~0.6 s of warm-up load. Its own file, so this process has not warmed up yet.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { CancelledError } from '../src/errors.js';
import { runScenario, scenarioFromArguments } from '../src/scenario/index.js';
import { warmUpOnce } from '../src/scenario/warm-up.js';
import { startApp } from './fixtures/scenario/app.js';

test('a cancel during the warm-up ends the scenario long before the warm-up does', async () => {
  const app = await startApp();
  try {
    const spec = await scenarioFromArguments('latency', { url: `${app.origin}/ok`, duration: '1s', num_clients: 1, rps: 10, latency: 1 }, makeConfig().scenario);
    const controller = new AbortController();
    const started = performance.now();
    const run = runScenario(spec, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(run, CancelledError);
    const cancelledAfter = performance.now() - started;
    await warmUpOnce(); // the one the scenario started: it goes on to its end
    const warmUpTook = performance.now() - started;
    assert.ok(cancelledAfter < warmUpTook / 2, `cancelled after ${cancelledAfter.toFixed(0)} ms; the warm-up ended after ${warmUpTook.toFixed(0)} ms`);
    assert.equal(app.arrivals.length, 0, 'nothing reached the app');
  } finally {
    await app.close();
  }
});
