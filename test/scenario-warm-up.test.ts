/**
 * The scenario's warm-up (src/scenario/warm-up.ts): once per process, on loopback only, shared by
 * concurrent callers (one caller's cancel does not stop it for another), and it leaves nothing
 * behind — no socket, no listening server, no timer. It runs at the rate of the run that asks for it (bounded), and
 * again, faster, only for a faster run. Order and counts here; how soon a cancelled
 * caller returns and what a warm call costs, against a whole warm-up, are bench/checks/scenario.ts's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatorThreadResources } from '../src/load/index.js';
import { proxyThreadResources } from '../src/proxy-host/index.js';
import { warmUpFor, warmUpOnce, WARM_UP_MAX_RATE } from '../src/scenario/warm-up.js';

/** Handles of these kinds that are alive now (sockets, listening servers, timers), here and on the load generator's and
 * the proxy's threads. */
async function handles(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const threads = [...(await generatorThreadResources()), ...(await proxyThreadResources())];
  for (const resource of [...process.getActiveResourcesInfo(), ...threads])
    if (resource === 'TCPServerWrap' || resource === 'TCPSocketWrap' || resource === 'Timeout')
      counts[resource] = (counts[resource] ?? 0) + 1;
  return counts;
}

/** Listening servers now, here and on the generator's and the proxy's threads. */
async function listening(): Promise<number> {
  return (await handles())['TCPServerWrap'] ?? 0;
}

/** `warmUpOnce(undefined, rate, othersMeasuring)`, and the most servers listening while it ran. */
async function watched(
  rate: number,
  othersMeasuring?: () => boolean,
): Promise<{ warmUp: Awaited<ReturnType<typeof warmUpOnce>>; most: number }> {
  let most = await listening();
  let done = false;
  const call = warmUpOnce(undefined, rate, othersMeasuring).finally(() => (done = true));
  while (!done) {
    most = Math.max(most, await listening());
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { warmUp: await call, most };
}

// First in this file: the process has not warmed up yet.
test("the warm-up runs at five times the run's rate, bounded, and again only for a faster run", async () => {
  assert.deepEqual(warmUpFor(200), { ratePerSecond: 1000, durationMs: 1000 });
  assert.equal(warmUpFor(1).ratePerSecond, 20, 'a slow run still warms with a few requests a pass');
  assert.equal(warmUpFor(1_000).ratePerSecond, WARM_UP_MAX_RATE);
  assert.equal(warmUpFor(Number.NaN).ratePerSecond, WARM_UP_MAX_RATE);
  const servers = await listening();
  // A 20 req/s run: 100 req/s for 0.6 + 0.4 s, 100 scheduled requests and up to 2 warm ones on each of 8
  // connections a pass.
  const slow = await watched(20);
  assert.equal(slow.most - servers, 2, 'it ran: its sink and proxy listened');
  assert.equal(slow.warmUp?.ratePerSecond, 100);
  assert.equal(slow.warmUp?.durationMs, 1000);
  assert.equal(slow.warmUp.requests, 100, 'its paced requests');
  assert.ok(slow.warmUp.connectionRequests <= 32, `${slow.warmUp.connectionRequests} as its connections opened`);
  // A slower run finds its rate warm: the same warm-up, nothing opened.
  const slower = await watched(10);
  assert.equal(slower.most, servers, 'nothing ran for a slower run');
  assert.deepEqual(slower.warmUp, slow.warmUp);
  // A faster one, while another run of the process measures, takes the warm-up done: no load lands in its figures.
  const held = await watched(60, () => true);
  assert.equal(held.most, servers, 'nothing ran while another run measured');
  assert.deepEqual(held.warmUp, slow.warmUp);
  // Else a faster one is warmed at five times its own rate.
  const faster = await watched(60);
  assert.equal(faster.most - servers, 2, 'a faster run warmed again');
  assert.equal(faster.warmUp?.ratePerSecond, 300);
  assert.equal(faster.warmUp.requests, 300, 'its paced requests');
  assert.ok(faster.warmUp.connectionRequests <= 32, `${faster.warmUp.connectionRequests} as its connections opened`);
  assert.deepEqual(await warmUpOnce(undefined, 60), faster.warmUp, 'now warm for 60 req/s');
});

test(
  'the warm-up runs once per process, shared by its callers, and ' + 'leaves no socket, server or timer open',
  async () => {
    const before = await handles();
    const cancelled = new AbortController();
    // Two callers share one warm-up; the first one's cancel leaves it running for the second.
    let firstBack = false;
    let secondBack = false;
    let secondBackWhenFirstReturned: boolean | undefined;
    const first = warmUpOnce(cancelled.signal).then(() => {
      firstBack = true;
      secondBackWhenFirstReturned = secondBack;
    });
    const second = warmUpOnce();
    void second.then(() => (secondBack = true));
    // Watched while it runs (~600 ms of load), however long its listen and first connections take;
    // the first caller cancels once both of its servers listen, mid-run.
    let mostSockets = 0;
    let mostServers = 0;
    while (!secondBack) {
      const now = await handles();
      mostSockets = Math.max(mostSockets, now['TCPSocketWrap'] ?? 0);
      mostServers = Math.max(mostServers, now['TCPServerWrap'] ?? 0);
      if (mostServers - (before['TCPServerWrap'] ?? 0) === 2 && !cancelled.signal.aborted) cancelled.abort();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await first;
    assert.ok(mostSockets > (before['TCPSocketWrap'] ?? 0), 'it holds connections while it runs');
    assert.equal(mostServers - (before['TCPServerWrap'] ?? 0), 2, 'one warm-up: one sink and one proxy listening');
    assert.ok(firstBack);
    assert.equal(
      secondBackWhenFirstReturned,
      false,
      'the cancelled caller returned while the warm-up went on for the other',
    );
    // Closed sockets are released on the next turns of the loop.
    for (let i = 0; i < 100 && JSON.stringify(await handles()) !== JSON.stringify(before); i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await handles(), before);
    // Already warm: the next call resolves before this turn's immediates run, opening nothing.
    const race = await Promise.race([
      warmUpOnce().then(() => 'warm'),
      new Promise((resolve) => setImmediate(() => resolve('ran'))),
    ]);
    assert.equal(race, 'warm', 'already warm: nothing runs again');
    assert.deepEqual(await handles(), before, 'already warm: nothing runs again');
  },
);
