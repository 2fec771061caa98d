/**
 * A scenario cancelled during the process's warm-up (src/scenario/warm-up.ts) stops: the warm-up
 * it started is stopped with it, so nothing of it is left open when the call returns, and it does
 * not count as done. (That it returns well before the ~0.6 s of warm-up load would end is
 * bench/checks/scenario.ts's, scenario.warm-up-cancel.) Its own file, so this process has not
 * warmed up yet.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { CancelledError } from '../src/kernel/errors.js';
import { generatorThreadResources } from '../src/load/index.js';
import { proxyThreadResources } from '../src/proxy-host/index.js';
import { runScenario, scenarioFromArguments } from '../src/scenario/index.js';
import { warmUpOnce } from '../src/scenario/warm-up.js';
import { startApp } from './fixtures/scenario/app.js';

/** Sockets, listening servers and timers alive now, here and on the load generator's and the proxy's threads. */
async function handles(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const resource of [
    ...process.getActiveResourcesInfo(),
    ...(await generatorThreadResources()),
    ...(await proxyThreadResources()),
  ]) {
    if (resource === 'TCPServerWrap' || resource === 'TCPSocketWrap' || resource === 'Timeout')
      counts[resource] = (counts[resource] ?? 0) + 1;
  }
  return counts;
}

test(
  'a cancel during the warm-up ends the scenario and its warm-up at ' + 'once; the next scenario warms up again',
  async () => {
    const app = await startApp();
    try {
      const spec = await scenarioFromArguments(
        'latency',
        { url: `${app.origin}/ok`, duration: '1s', num_clients: 1, rps: 10, latency: 1 },
        makeConfig().scenario,
      );
      const before = await handles();
      const servers = async (): Promise<number> =>
        ((await handles())['TCPServerWrap'] ?? 0) - (before['TCPServerWrap'] ?? 0);
      const controller = new AbortController();
      const run = runScenario(spec, { signal: controller.signal });
      // Cancelled once the warm-up's load is under way (its sink and proxy listening).
      for (let i = 0; i < 2000 && (await servers()) < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok((await servers()) >= 2, 'the warm-up started');
      controller.abort();
      await assert.rejects(run, CancelledError);
      // Closed sockets are released on the next turns of the loop.
      for (let i = 0; i < 100 && JSON.stringify(await handles()) !== JSON.stringify(before); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(await handles(), before, 'the warm-up was stopped: nothing of it is left');
      assert.equal(app.arrivals.length, 0, 'nothing reached the app');

      // Not counted as done: the next caller warms up again (its sink and proxy listen).
      let most = 0;
      let done = false;
      const again = warmUpOnce().then(() => (done = true));
      while (!done) {
        most = Math.max(most, await servers());
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await again;
      assert.equal(most, 2, 'the next caller ran a warm-up of its own');
    } finally {
      await app.close();
    }
  },
);
