/**
 * The scenario's warm-up (src/scenario/warm-up.ts): once per process, on loopback only, and it
 * leaves nothing behind — no socket, no listening server, no timer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatorThreadResources } from '../src/load/index.js';
import { warmUpOnce } from '../src/scenario/warm-up.js';

/** Handles of these kinds that are alive now (sockets, listening servers, timers), here and on the load generator's thread. */
async function handles(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const generatorThread = await generatorThreadResources();
  for (const resource of [...process.getActiveResourcesInfo(), ...generatorThread]) if (resource === 'TCPServerWrap' || resource === 'TCPSocketWrap' || resource === 'Timeout') counts[resource] = (counts[resource] ?? 0) + 1;
  return counts;
}

test('the warm-up runs once per process and leaves no socket, server or timer open', async () => {
  const before = await handles();
  const first = warmUpOnce();
  assert.equal(warmUpOnce(), first, 'a second caller shares the first warm-up');
  // Watched while it runs (~600 ms of load), however long its listen and first connections take.
  let done = false;
  void first.then(() => (done = true));
  let mostSockets = 0;
  while (!done) {
    mostSockets = Math.max(mostSockets, (await handles())['TCPSocketWrap'] ?? 0);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.ok(mostSockets > (before['TCPSocketWrap'] ?? 0), 'it holds connections while it runs');
  await first;
  // Closed sockets are released on the next turns of the loop.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(await handles(), before);
  await warmUpOnce();
  assert.deepEqual(await handles(), before, 'already warm: nothing runs again');
});
