/**
 * The wake-up service's contract (src/clock/wake-ups.ts), the one the open-loop pacer and the
 * proxy's links rely on: callbacks come in due order (ties in the order asked), never before their
 * time, each once; a cancelled one never comes; entries due closer than MIN_WAKE_GAP_MS share a
 * wake; one added by a callback waits for the next wake; a callback that throws loses no other;
 * no timer is left once nothing is pending. Where time matters the clock and the backstop timer are
 * injected and driven by hand. With the real clock: the helper thread is what wakes, a pending
 * wake-up keeps a process alive and a cancelled one does not; a board's slots are given back and
 * reused, never woken for their previous owner; a helper that dies is replaced, within a bound. How late a wake comes is a figure of
 * bench/checks/load.ts (load.send-lag) and bench/checks/proxy.ts (proxy.latency-accuracy).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { EventEmitter } from 'node:events';
import { HELPER_RESTARTS, keepHelper, type HelperThread } from '../src/clock/helper.js';
import { MIN_WAKE_GAP_MS, monotonicMs, WakeUps } from '../src/clock/index.js';
import { boardViews, CLAIMED, GONE, newBoard, READY, takenIndex, wakeSeqIndex, wakeSlot } from '../src/clock/shared.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

/** A clock and backstop timer moved by hand: `advance` runs the timer when its time comes. */
function manualClock() {
  let now = 1_000;
  let timer: { callback: () => void; at: number } | undefined;
  const service = new WakeUps({
    now: () => now,
    timer: {
      set: (callback, delayMs) => {
        assert.ok(delayMs >= 0 && Number.isFinite(delayMs), `a backstop of ${delayMs} ms`);
        timer = { callback, at: now + delayMs };
        return timer;
      },
      clear: (handle) => {
        if (handle === timer) timer = undefined;
      },
    },
  });
  return {
    service,
    now: () => now,
    armed: () => timer !== undefined,
    /** Moves the clock to the timer's time and runs it: one wake. */
    next() {
      assert.ok(timer !== undefined, 'no timer armed');
      const due = timer;
      now = Math.max(now, due.at);
      timer = undefined;
      due.callback();
    },
    /** Moves the clock to `to`, running the timer each time it is due on the way. */
    advance(to: number) {
      while (timer !== undefined && timer.at <= to) {
        const due = timer;
        now = Math.max(now, due.at);
        timer = undefined;
        due.callback();
      }
      now = Math.max(now, to);
    },
  };
}

describe('the wake-up service, on an injected clock', () => {
  it('calls in due order, ties in the order asked, each once and never before its time', () => {
    const clock = manualClock();
    const calls: { name: string; at: number; due: number }[] = [];
    const ask = (name: string, waitMs: number) => {
      const due = clock.now() + waitMs;
      clock.service.after(waitMs, () => calls.push({ name, at: clock.now(), due }));
    };
    ask('30', 30);
    ask('5a', 5);
    ask('20', 20);
    ask('5b', 5);
    ask('0', 0);
    ask('12', 12);
    ask('5c', 5);
    clock.advance(clock.now() + 100);
    assert.deepEqual(
      calls.map((call) => call.name),
      ['0', '5a', '5b', '5c', '12', '20', '30'],
    );
    for (const call of calls) assert.ok(call.at >= call.due, `${call.name} came at ${call.at}, due ${call.due}`);
    assert.equal(clock.service.pending, 0);
    assert.equal(clock.armed(), false, 'a backstop timer outlived the last wake-up');
  });

  it("many due at the same times come in the order asked (a link's pieces, a run's requests)", () => {
    const clock = manualClock();
    const start = clock.now();
    const asked = Array.from({ length: 60 }, (_, k) => ({ k, due: start + [3, 1, 2][k % 3]! }));
    const order: number[] = [];
    for (const { k, due } of asked) clock.service.at(due, () => order.push(k));
    clock.advance(start + 50);
    const expected = [...asked].sort((a, b) => a.due - b.due || a.k - b.k).map(({ k }) => k);
    assert.deepEqual(order, expected);
  });

  it('after a stall, every entry overdue comes in one wake, in due order', () => {
    const clock = manualClock();
    const order: number[] = [];
    const start = clock.now();
    [15, 3, 8].forEach((offset, index) => clock.service.at(start + offset, () => order.push(index)));
    clock.advance(start + 1); // nothing due yet
    assert.deepEqual(order, []);
    clock.advance(start + 50);
    assert.deepEqual(order, [1, 2, 0]);
  });

  it('a cancelled wake-up never comes; cancelling twice, after the call or the last one is harmless', () => {
    const clock = manualClock();
    const fired: string[] = [];
    const first = clock.service.after(2, () => fired.push('first'));
    const middle = clock.service.after(6, () => fired.push('middle'));
    clock.service.after(15, () => fired.push('last'));
    clock.service.cancel(first);
    clock.service.cancel(first);
    clock.advance(clock.now() + 20);
    clock.service.cancel(middle);
    clock.service.cancel(undefined);
    assert.deepEqual(fired, ['middle', 'last']);
    const lone = clock.service.after(5, () => fired.push('lone'));
    assert.equal(clock.armed(), true, 'the backstop timer was not armed');
    clock.service.cancel(lone);
    assert.equal(clock.armed(), false, 'cancelling the last left its timer');
    clock.advance(clock.now() + 20);
    assert.deepEqual(fired, ['middle', 'last']);
  });

  it(`entries due closer than ${MIN_WAKE_GAP_MS} ms after a wake wait for the gap and go together`, () => {
    const clock = manualClock();
    const at: number[] = [];
    clock.service.after(10, () => at.push(clock.now()));
    clock.next();
    const woke = at[0]!;
    // Due 0.05 and 0.1 ms after that wake: neither before the gap has passed, both at once.
    clock.service.at(woke + 0.05, () => at.push(clock.now()));
    clock.service.at(woke + 0.1, () => at.push(clock.now()));
    clock.advance(woke + 0.2);
    assert.equal(at.length, 1, 'woken again within the gap');
    clock.next();
    assert.equal(at.length, 3);
    assert.ok(at[1]! >= woke + MIN_WAKE_GAP_MS, `the second wake came ${at[1]! - woke} ms after the first`);
    assert.equal(at[1], at[2]);
  });

  it('one added by a callback, due at once, comes on the next wake, after the callback returned', () => {
    const clock = manualClock();
    const order: string[] = [];
    clock.service.after(1, () => {
      clock.service.after(0, () => order.push('inner'));
      order.push('outer');
    });
    clock.next();
    assert.deepEqual(order, ['outer'], "a callback's own wake-up ran in the same wake");
    clock.next();
    assert.deepEqual(order, ['outer', 'inner']);
  });

  it('one added by a callback and cancelled by a later callback of the same wake never comes', () => {
    const clock = manualClock();
    const fired: string[] = [];
    let added: ReturnType<WakeUps['after']> | undefined;
    const start = clock.now();
    // Added overdue, so it is reached before the canceller in the same wake.
    clock.service.at(start + 1, () => (added = clock.service.at(clock.now() - 0.5, () => fired.push('added'))));
    clock.service.at(start + 1.9, () => clock.service.cancel(added));
    clock.advance(clock.now() + 10);
    assert.deepEqual(fired, []);
    assert.equal(clock.service.pending, 0);
  });

  it('a callback that throws loses none of the others: they come on the next wake', () => {
    const clock = manualClock();
    const fired: string[] = [];
    clock.service.after(1, () => {
      throw new Error('boom');
    });
    clock.service.after(1, () => fired.push('second'));
    assert.throws(() => clock.next(), /boom/);
    assert.deepEqual(fired, []);
    clock.next();
    assert.deepEqual(fired, ['second']);
  });

  it('without a helper thread, the backstop timer paces: never before the time, and not precise', () => {
    const clock = manualClock();
    assert.equal(clock.service.precise, false);
    let calledAt = Number.NaN;
    const due = clock.now() + 3.4;
    clock.service.at(due, () => (calledAt = clock.now()));
    clock.advance(due + 2);
    assert.ok(calledAt >= due, `called at ${calledAt}, due ${due}`);
    assert.equal(clock.service.wakes.timer, 1);
    assert.equal(clock.service.wakes.thread, 0);
  });
});

const timeouts = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

/** Backstop timers that never fire: every wake is the helper's (or the test's, standing in for it). */
const never = { set: () => undefined, clear: () => {} };

describe("a board's slots and its helper, by hand", () => {
  it('a slot given back is claimed again; a wake meant for its previous owner fails and reaches nobody', () => {
    const board = newBoard(2);
    const { ints } = boardViews(board);
    const first = new WakeUps({ board, timer: never });
    first.at(monotonicMs() + 60_000, () => assert.fail('a dropped entry was called'));
    // The helper reads the slot's wake sequence, then its arm; then the service ends and another takes the slot.
    const seen = Atomics.load(ints, wakeSeqIndex(0));
    first.close();
    assert.equal(Atomics.load(ints, takenIndex(0)), 0, 'the slot was given back');
    const next = new WakeUps({ board, timer: never });
    next.at(monotonicMs() + 60_000, () => {});
    assert.equal(Atomics.load(ints, takenIndex(0)), 1, 'the next service took the same slot');
    assert.equal(Atomics.load(ints, CLAIMED), 1, 'no other slot was used');
    const before = Atomics.load(ints, wakeSeqIndex(0));
    assert.equal(wakeSlot(ints, 0, seen), false, "the fire for the previous owner's arm failed");
    assert.equal(Atomics.load(ints, wakeSeqIndex(0)), before, 'the next owner was not woken');
    assert.equal(wakeSlot(ints, 0, before), true, "a fire for the next owner's own arm goes through");
    next.close();
    assert.throws(() => next.at(0, () => {}), /closed/);
  });

  /** Stand-ins for helper threads: each `run()`s (sets READY, as a helper does) or not, then exits. */
  function fakeHelpers() {
    const started: Array<HelperThread & EventEmitter> = [];
    const start = () => {
      const thread = Object.assign(new EventEmitter(), { terminate: () => thread.emit('exit', 1) });
      started.push(thread);
      return thread;
    };
    return { started, start };
  }

  it(`a helper that exits after it ran is replaced, at most ${HELPER_RESTARTS} times; then the board is GONE`, () => {
    const board = newBoard(1);
    const { ints } = boardViews(board);
    const { started, start } = fakeHelpers();
    const kept = keepHelper(board, start);
    for (let round = 0; round <= HELPER_RESTARTS; round++) {
      assert.equal(started.length, round + 1);
      assert.equal(Atomics.load(ints, READY), 0, 'not ready until the new helper runs');
      Atomics.store(ints, READY, 1);
      assert.equal(kept.current, started[round]);
      started[round]!.emit('exit', 1);
    }
    assert.equal(started.length, HELPER_RESTARTS + 1, 'no helper after the last replacement');
    assert.equal(Atomics.load(ints, GONE), 1);
    assert.equal(kept.current, undefined);
  });

  it('a helper that exits before it ran is not replaced (it would die again): the board is GONE at once', () => {
    const board = newBoard(1);
    const { ints } = boardViews(board);
    const { started, start } = fakeHelpers();
    keepHelper(board, start);
    const seq = Atomics.load(ints, wakeSeqIndex(0));
    started[0]!.emit('error', new Error('failed to start'));
    started[0]!.emit('exit', 1);
    assert.equal(started.length, 1);
    assert.equal(Atomics.load(ints, GONE), 1);
    assert.equal(Atomics.load(ints, wakeSeqIndex(0)), seq + 1, 'every service waiting is told');
    const none = newBoard(1);
    keepHelper(none, () => undefined);
    assert.equal(Atomics.load(boardViews(none).ints, GONE), 1, 'no thread to be had: GONE');
  });

  it('stopping the kept helper ends it and starts no other', () => {
    const board = newBoard(1);
    const { started, start } = fakeHelpers();
    const kept = keepHelper(board, start);
    Atomics.store(boardViews(board).ints, READY, 1);
    kept.stop();
    assert.equal(started.length, 1);
    assert.equal(Atomics.load(boardViews(board).ints, GONE), 1);
  });
});

describe('the wake-up service, on the monotonic clock', () => {
  it('its helper thread wakes it, in due order, never early, leaving no timer behind', async () => {
    const service = new WakeUps();
    service.prepare();
    for (let waited = 0; !service.precise; waited += 5) {
      assert.ok(waited < 30_000, 'the helper thread did not start within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const before = timeouts();
    const offsets = [30, 5, 20, 10, 10.5, 40, 0.3, 0];
    const start = monotonicMs();
    const calls: { index: number; early: number }[] = [];
    await new Promise<void>((resolve) =>
      offsets.forEach((offset, index) =>
        service.at(start + offset, () => {
          calls.push({ index, early: start + offset - monotonicMs() });
          if (calls.length === offsets.length) resolve();
        }),
      ),
    );
    assert.deepEqual(
      calls.map((call) => call.index),
      [7, 6, 1, 3, 4, 2, 0, 5],
    );
    for (const call of calls) assert.ok(call.early <= 0, `entry ${call.index} came ${call.early} ms early`);
    assert.ok(service.wakes.thread >= 1, 'the helper thread woke none');
    assert.equal(timeouts(), before, 'a backstop timer outlived the last wake-up');
  });

  const wakeUpsPath = fileURLToPath(new URL('../src/clock/index.js', import.meta.url));
  /** Runs a script in a fresh Node process; resolves with its stdout, or rejects past `timeoutMs`. */
  const runNode = (script: string, timeoutMs: number): Promise<string> =>
    new Promise((resolve, reject) =>
      execFile(
        process.execPath,
        ['--input-type=module', '-e', `import { threadWakeUps } from ${JSON.stringify(wakeUpsPath)};\n${script}`],
        { timeout: timeoutMs },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );

  it('a pending wake-up keeps the process alive until it comes; then the helper thread lets it exit', async () => {
    const script = `const w = threadWakeUps();
      w.after(200, () => { process.stdout.write('fired\\n'); w.after(1, () => process.stdout.write('again\\n')); });`;
    assert.equal(await runNode(script, HANG_GUARD_MS), 'fired\nagain\n');
  });

  it('a cancelled wake-up does not keep the process alive', async () => {
    const script = `const w = threadWakeUps();
      w.cancel(w.after(600_000, () => process.stdout.write('fired\\n')));
      process.stdout.write('done\\n');`;
    // Its exit within the hang guard is the point: the cancelled wake-up would hold it 600 s.
    assert.equal(await runNode(script, HANG_GUARD_MS), 'done\n');
  });

  it("one helper thread wakes every thread's service: each in its own due order, never early", async () => {
    // The main thread's service and two on other threads, all on the process's board (shareClock): the process
    // has one helper thread, named HELPER_NAME, where it had one per thread. Their backstop timers never fire, so
    // every wake below is the helper's whatever the machine's load (an interval only keeps each thread alive); a
    // service it did not serve would never answer, and the run would time out.
    const script = `import { Worker } from 'node:worker_threads';
      import { readdirSync, readFileSync } from 'node:fs';
      const { monotonicMs, shareClock, HELPER_NAME, WakeUps } = await import(${JSON.stringify(wakeUpsPath)});
      const never = { set: () => undefined, clear: () => {} };
      const worker = (offsets) => new Worker(\`
        const { workerData, parentPort } = require('node:worker_threads');
        const alive = setInterval(() => {}, 60_000);
        import(\${JSON.stringify(${JSON.stringify(pathToFileURL(wakeUpsPath).href)})}).then((clock) => {
          const never = { set: () => undefined, clear: () => {} };
          const w = new clock.WakeUps({ board: workerData.clock, timer: never });
          const start = clock.monotonicMs(), order = [];
          workerData.offsets.forEach((offset, index) => w.at(start + offset, () => {
            order.push(start + offset <= clock.monotonicMs() ? index : 'early ' + index);
            if (order.length < workerData.offsets.length) return;
            parentPort.postMessage(order.join(','));
            clearInterval(alive);
          }));
        });\`, { eval: true, execArgv: [], workerData: { clock: board, offsets } });
      const board = shareClock();
      const w = new WakeUps({ board, timer: never });
      // Once the helper runs (it takes tens of ms to start).
      w.prepare();
      while (!w.precise) await new Promise((resolve) => setTimeout(resolve, 5));
      const done = (thread) => new Promise((resolve) => thread.once('message', resolve));
      const mine = new Promise((resolve) => {
        const start = monotonicMs(), order = [];
        [12, 3, 7].forEach((offset, index) => w.at(start + offset, () => {
          order.push(start + offset <= monotonicMs() ? index : 'early ' + index);
          if (order.length === 3) resolve(order.join(','));
        }));
      });
      const results = await Promise.all([mine, done(worker([9, 1, 4, 25])), done(worker([2, 30, 2.5]))]);
      const helpers = readdirSync('/proc/self/task').filter((id) => {
        try {
          return readFileSync('/proc/self/task/' + id + '/comm', 'utf8').trim() === HELPER_NAME;
        } catch {
          return false;
        }
      }).length;
      process.stdout.write(results.join(' ') + ' helpers ' + helpers + '\\n');
      process.exit(0);`;
    assert.equal(await runNode(script, HANG_GUARD_MS), '1,2,0 1,2,0,3 0,2,1 helpers 1\n');
  });

  const wakeUpsModule = fileURLToPath(new URL('../src/clock/wake-ups.js', import.meta.url));
  const sharedPath = fileURLToPath(new URL('../src/clock/shared.js', import.meta.url));
  /** A script's lines that count this process's helper threads (by HELPER_NAME) into `helpers`. */
  const countHelpers = `const helpers = readdirSync('/proc/self/task').filter((id) => {
        try {
          return readFileSync('/proc/self/task/' + id + '/comm', 'utf8').trim() === HELPER_NAME;
        } catch {
          return false;
        }
      }).length;`;

  it('threads started and ended again and again reuse one slot of the board and share the one helper', async () => {
    // Each thread is lent a slot (lendClock) and terminated, as a crashed or stopped generator or proxy thread is:
    // the slot comes back on its exit. 17 rounds outlast the board's 16 slots. A thread's backstop never fires, so
    // a wake the helper did not give would time the run out.
    const script = `import { Worker } from 'node:worker_threads';
      import { readdirSync, readFileSync } from 'node:fs';
      const { lendClock, HELPER_NAME } = await import(${JSON.stringify(wakeUpsPath)});
      const { boardViews, CLAIMED } = await import(${JSON.stringify(sharedPath)});
      const { shareClock } = await import(${JSON.stringify(wakeUpsModule)});
      let lent = 0, woken = 0, helpersSeen = 0;
      for (let round = 0; round < 17; round++) {
        const thread = lendClock((clock) => {
          if (clock) lent++;
          return new Worker(\`
            const { workerData, parentPort } = require('node:worker_threads');
            const alive = setInterval(() => {}, 60_000);
            import(\${JSON.stringify(${JSON.stringify(pathToFileURL(wakeUpsPath).href)})}).then((clock) => {
              const never = { set: () => undefined, clear: () => {} };
              const w = new clock.WakeUps({ ...(workerData.clock ?? {}), timer: never });
              w.at(clock.monotonicMs() + 2, () => parentPort.postMessage('woken'));
            });\`, { eval: true, execArgv: [], workerData: { clock } });
        });
        await new Promise((resolve) => thread.once('message', resolve));
        woken++;
        ${countHelpers}
        helpersSeen = Math.max(helpersSeen, helpers);
        const exited = new Promise((resolve) => thread.once('exit', resolve));
        await thread.terminate();
        await exited;
      }
      const used = Atomics.load(boardViews(shareClock()).ints, CLAIMED);
      process.stdout.write('lent ' + lent + ' woken ' + woken + ' helpers ' + helpersSeen + ' slots ' + used + '\\n');
      process.exit(0);`;
    assert.equal(await runNode(script, HANG_GUARD_MS), 'lent 17 woken 17 helpers 1 slots 1\n');
  });

  it('a process helper that dies is replaced: the services waiting on it are woken by the next', async () => {
    const script = `import { readdirSync, readFileSync } from 'node:fs';
      const { monotonicMs, shareClock, HELPER_NAME, WakeUps } = await import(${JSON.stringify(wakeUpsPath)});
      const { processClockHelper } = await import(${JSON.stringify(wakeUpsModule)});
      const never = { set: () => undefined, clear: () => {} };
      // The backstop that would keep the process alive never fires: an interval does.
      setInterval(() => {}, 60_000);
      const w = new WakeUps({ board: shareClock(), timer: never });
      w.prepare();
      const ready = async (what) => {
        for (let waited = 0; !w.precise; waited += 5) {
          if (waited > 30_000) throw new Error(what + ' did not run within 30 s');
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      };
      await ready('the helper');
      const first = processClockHelper();
      // Armed once the first helper is gone, before the next runs: only the next can wake them.
      const woken = await new Promise((resolve) => {
        first.once('exit', () => {
          const start = monotonicMs(), order = [];
          [4, 1].forEach((offset, index) => w.at(start + offset, () => {
            order.push(start + offset <= monotonicMs() ? index : 'early ' + index);
            if (order.length === 2) resolve(order.join(','));
          }));
        });
        first.terminate();
      });
      await ready('the next helper');
      ${countHelpers}
      const replaced = processClockHelper() !== undefined && processClockHelper() !== first;
      process.stdout.write(woken + ' helpers ' + helpers + (replaced ? ' replaced' : '') + '\\n');
      process.exit(0);`;
    assert.equal(await runNode(script, HANG_GUARD_MS), '1,0 helpers 1 replaced\n');
  });
});
