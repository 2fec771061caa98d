/**
 * The open loop's pacer (src/load/pacer.ts): callbacks come in due order and never before their
 * time, a cancelled one never comes, requests due closer than MIN_WAKE_GAP_MS share a wake, the
 * clock thread is what wakes them once it runs, and without it the timer alone paces. No
 * timer is left behind once nothing is due. How late a wake comes is a figure of
 * bench/checks/load.ts (load.send-lag), not of this test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_WAKE_GAP_MS, Pacer } from '../src/load/pacer.js';

const timeouts = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

/** Asks `pacer` for a wake at each offset (ms from now); resolves with the order they came in and how early each was (≤ 0: not early). */
function schedule(pacer: Pacer, offsetsMs: number[]): Promise<{ order: number[]; earliestMs: number }> {
  const start = performance.now();
  const order: number[] = [];
  let earliestMs = -Infinity;
  return new Promise((resolve) => {
    offsetsMs.forEach((offset, index) =>
      pacer.wakeAt(start + offset, () => {
        earliestMs = Math.max(earliestMs, start + offset - performance.now());
        order.push(index);
        if (order.length === offsetsMs.length) resolve({ order, earliestMs });
      }),
    );
  });
}

async function precise(pacer: Pacer): Promise<void> {
  for (let waited = 0; !pacer.precise; waited += 5) {
    assert.ok(waited < 10_000, 'the clock thread did not start within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('wakes come in due order, never early, and the clock thread sends them', async () => {
  const pacer = new Pacer();
  await precise(pacer);
  const before = timeouts();
  const { order, earliestMs } = await schedule(pacer, [30, 5, 20, 10, 10.5, 40]);
  assert.deepEqual(order, [1, 3, 4, 2, 0, 5]);
  assert.ok(earliestMs <= 0, `a callback came ${earliestMs} ms early`);
  assert.ok(pacer.wakes.clock >= 1, 'the clock thread woke none');
  assert.equal(timeouts(), before, 'a backstop timer outlived the last wake');
});

test('a cancelled wake never comes, and cancelling the last leaves no timer', async () => {
  const pacer = new Pacer();
  const before = timeouts();
  let called = 0;
  const wake = pacer.wakeAt(performance.now() + 20, () => (called += 1));
  assert.ok(timeouts() > before, 'the backstop timer was not armed');
  wake.cancel();
  wake.cancel(); // twice is harmless
  assert.equal(timeouts(), before);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(called, 0);
});

test(`wakes due closer than ${MIN_WAKE_GAP_MS} ms apart are sent together`, async () => {
  const pacer = new Pacer();
  await precise(pacer);
  const offsets = Array.from({ length: 200 }, (_, k) => 5 + k * 0.01); // 200 due within 2 ms
  const { order } = await schedule(pacer, offsets);
  assert.deepEqual(
    order,
    offsets.map((_, k) => k),
  );
  const wakes = pacer.wakes.clock + pacer.wakes.timer;
  assert.ok(wakes < 100, `${wakes} wakes for 200 callbacks due within 2 ms`);
});

test('without a clock thread the timer alone paces, in order and never early', async () => {
  const pacer = new Pacer({ clockThread: false });
  assert.equal(pacer.precise, false);
  const { order, earliestMs } = await schedule(pacer, [15, 3, 8]);
  assert.deepEqual(order, [1, 2, 0]);
  assert.ok(earliestMs <= 0, `a callback came ${earliestMs} ms early`);
  assert.equal(pacer.wakes.clock, 0);
  assert.ok(pacer.wakes.timer >= 1);
});
