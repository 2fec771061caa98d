/**
 * GROWTH_PATIENCE_MS pinned without the machine's speed: the assertion is a lower bound the generator's own logic
 * guarantees (a request that finds every connection busy gets a new one no sooner than GROWTH_PATIENCE_MS after it
 * queued), and the server decides the counts (it answers nothing measured until both requests arrived, so no
 * connection frees early and the run ends however slow the machine is).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { test } from 'node:test';
import { runOpenLoop } from '../src/load/index.js';
import { GROWTH_PATIENCE_MS } from '../src/load/open-loop.js';
import { serverPool } from './fixtures/load/servers.js';

const { server } = serverPool();

/** Unmeasured requests first (answered at once): a cold first send can hold the generator's thread for ms. */
const WARM = 50;
/** Two requests due 0.01 ms apart (100,000 req/s for 0.02 ms): the second finds the one connection busy. */
const TWO_AT_ONCE = { ratePerSecond: 100_000, durationMs: 0.02, connections: 1, maxConnections: 2 } as const;
const GAP_MS = 0.01;

/** How much later than the first the second request was sent, over their intended starts' gap (ms). */
async function secondRequestWaitedMs(): Promise<number> {
  const held: ServerResponse[] = [];
  let arrivals = 0;
  const target = await server((_request, response) => {
    if (++arrivals <= WARM) return void response.end('ok');
    held.push(response);
    if (held.length === 2) for (const each of held) each.end('ok');
  });
  const result = await runOpenLoop({
    url: `${target.origin}/`,
    ...TWO_AT_ONCE,
    timeoutMs: 60_000,
    warmRequestsPerConnection: WARM,
  });
  assert.equal(result.errors, 0, JSON.stringify(result.errorDetails));
  assert.equal(result.connectionsOpened, 2, 'the second request got a connection of its own: patience ends');
  // Send lag = actual send − intended start; the first went on the idle connection as it was dispatched.
  return result.sendLag!.max - result.sendLag!.min;
}

test('a request that finds every connection busy waits GROWTH_PATIENCE_MS before a new one opens', async () => {
  // With the patience every run holds the bound; without it the new connection opens in the loop turn that queued
  // the request (about 1 ms here at load ~10), and a stall of this machine passes one run, not all three.
  for (let run = 0; run < 3; run++) {
    const waitedMs = await secondRequestWaitedMs();
    assert.ok(waitedMs >= GROWTH_PATIENCE_MS - GAP_MS - 1e-6, `run ${run}: the second request waited ${waitedMs} ms`);
  }
});

test('a request waiting at the cap counts as queued and in the queue depth, however soon it is sent', async () => {
  // Two requests due together (1 ns apart: the first tick finds both due) on the one connection the cap allows: the
  // second waits for the first's answer, which comes within the patience on any machine that answers in 5 ms.
  // Three runs: without the count at the push, a machine whose answer takes over 5 ms passes one, not all three.
  const target = await server();
  for (let run = 0; run < 3; run++) {
    const result = await runOpenLoop({
      url: `${target.origin}/`,
      ratePerSecond: 1e9,
      durationMs: 2e-6,
      connections: 1,
      maxConnections: 1,
      timeoutMs: 60_000,
    });
    assert.equal(result.errors, 0, JSON.stringify(result.errorDetails));
    assert.equal(result.maxQueueDepth, 1, `run ${run}`);
    // Growth at the cap is not put off, so it is tried in the loop turn that queued the request: only a response read
    // in that same turn could free the connection first.
    assert.equal(result.queuedAtCap, result.queued, `run ${run}`);
  }
});
