/**
 * The links' wake-up timers: never before the wait asked for, in due order, cancellable, and
 * neither keeping a process alive once nothing is pending nor letting it exit while something is.
 * How soon after the due time they fire is a timing property: bench/checks/proxy.ts holds it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cancelWake, wakeAfter } from '../src/proxy/wake-timers.js';

const wakeTimersPath = fileURLToPath(new URL('../src/proxy/wake-timers.js', import.meta.url));

const elapsedAfter = (waitMs: number): Promise<number> =>
  new Promise((resolve) => {
    const started = performance.now();
    wakeAfter(waitMs, () => resolve(performance.now() - started));
  });

test('wake-ups: never before the wait, including sub-millisecond and zero waits', async () => {
  for (const waitMs of [0, 0.3, 1.5, 4, 10.25]) {
    for (let i = 0; i < 5; i++) {
      const elapsed = await elapsedAfter(waitMs);
      assert.ok(elapsed >= waitMs - 1e-6, `a ${waitMs} ms wake-up came after ${elapsed.toFixed(4)} ms`);
    }
  }
});

test('wake-ups: fire in due order whatever the order they were asked in, each once and none early', async () => {
  const fired: number[] = [];
  const waits = [30, 5, 20, 5, 0, 12, 1, 1.2, 2];
  const started = performance.now();
  await new Promise<void>((resolve) => {
    waits.forEach((waitMs) =>
      wakeAfter(waitMs, () => {
        const elapsed = performance.now() - started;
        assert.ok(elapsed >= waitMs - 1e-6, `a ${waitMs} ms wake-up among others came after ${elapsed.toFixed(4)} ms`);
        fired.push(waitMs);
        if (fired.length === waits.length) resolve();
      }),
    );
  });
  assert.deepEqual(
    fired,
    [...waits].sort((a, b) => a - b),
  );
});

test('wake-ups: a cancelled one never fires, the others still do; cancelling twice or after firing is harmless', async () => {
  const fired: string[] = [];
  const first = wakeAfter(2, () => fired.push('first'));
  const middle = wakeAfter(6, () => fired.push('middle'));
  await new Promise<void>((resolve) => {
    wakeAfter(15, () => {
      fired.push('last');
      resolve();
    });
    cancelWake(first);
    cancelWake(first);
  });
  cancelWake(middle);
  assert.deepEqual(fired, ['middle', 'last']);
});

test('wake-ups: one scheduled from a callback fires on its own time, after the callback returns', async () => {
  const order: string[] = [];
  const elapsed = await new Promise<number>((resolve) => {
    wakeAfter(1, () => {
      const started = performance.now();
      wakeAfter(3, () => {
        order.push('inner');
        resolve(performance.now() - started);
      });
      order.push('outer');
    });
  });
  assert.deepEqual(order, ['outer', 'inner']);
  assert.ok(elapsed >= 3 - 1e-6);
});

/** Runs a script in a fresh Node process; resolves with its stdout, or rejects past `timeoutMs`. */
function runNode(script: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { timeout: timeoutMs },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
}

test('wake-ups: a pending one keeps the process alive until it fires; then the helper thread lets it exit', async () => {
  const script = `
    import { wakeAfter } from ${JSON.stringify(wakeTimersPath)};
    wakeAfter(200, () => { process.stdout.write('fired\\n'); wakeAfter(1, () => process.stdout.write('again\\n')); });
  `;
  assert.equal(await runNode(script, 20_000), 'fired\nagain\n');
});

test('wake-ups: a cancelled one does not keep the process alive', async () => {
  const script = `
    import { cancelWake, wakeAfter } from ${JSON.stringify(wakeTimersPath)};
    cancelWake(wakeAfter(60_000, () => process.stdout.write('fired\\n')));
    process.stdout.write('done\\n');
  `;
  assert.equal(await runNode(script, 20_000), 'done\n');
});
