/**
 * The scenario's warm-up (src/scenario/warm-up.ts): once per process, on loopback only, shared by
 * concurrent callers (one caller's cancel does not stop it for another), and it leaves nothing
 * behind — no socket, no listening server, no timer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatorThreadResources } from '../src/load/index.js';
import { proxyThreadResources } from '../src/proxy-host/index.js';
import { warmUpOnce } from '../src/scenario/warm-up.js';

/** Handles of these kinds that are alive now (sockets, listening servers, timers), here and on the load generator's and the proxy's threads. */
async function handles(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const threads = [...(await generatorThreadResources()), ...(await proxyThreadResources())];
  for (const resource of [...process.getActiveResourcesInfo(), ...threads]) if (resource === 'TCPServerWrap' || resource === 'TCPSocketWrap' || resource === 'Timeout') counts[resource] = (counts[resource] ?? 0) + 1;
  return counts;
}

test('the warm-up runs once per process, shared by its callers, and leaves no socket, server or timer open', async () => {
  const before = await handles();
  const cancelled = new AbortController();
  const started = performance.now();
  let cancelledAt = Infinity;
  // Two callers share one warm-up; the first one's cancel leaves it running for the second.
  const first = warmUpOnce(cancelled.signal).then(() => (cancelledAt = performance.now() - started));
  const second = warmUpOnce();
  setTimeout(() => cancelled.abort(), 100);
  // Watched while it runs (~600 ms of load), however long its listen and first connections take.
  let done = false;
  void second.then(() => (done = true));
  let mostSockets = 0;
  let mostServers = 0;
  while (!done) {
    const now = await handles();
    mostSockets = Math.max(mostSockets, now['TCPSocketWrap'] ?? 0);
    mostServers = Math.max(mostServers, now['TCPServerWrap'] ?? 0);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const tookMs = performance.now() - started;
  await first;
  assert.ok(mostSockets > (before['TCPSocketWrap'] ?? 0), 'it holds connections while it runs');
  assert.equal(mostServers - (before['TCPServerWrap'] ?? 0), 2, 'one warm-up: one sink and one proxy listening');
  assert.ok(cancelledAt < tookMs * 0.75, `the cancelled caller returned after ${cancelledAt.toFixed(0)} ms, the warm-up took ${tookMs.toFixed(0)} ms`);
  // Closed sockets are released on the next turns of the loop.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(await handles(), before);
  const again = performance.now();
  await warmUpOnce();
  assert.ok(performance.now() - again < tookMs / 4, 'already warm: nothing runs again');
  assert.deepEqual(await handles(), before, 'already warm: nothing runs again');
});
