/**
 * The real-time warning (src/clock/realtime.ts): a process under SCHED_FIFO/SCHED_RR without
 * node --single-threaded-gc is told so, since V8's sweeper can then spin its event loop for good. The policy is
 * read from /proc/<pid>/stat lines: this process's own (not real-time) and written ones, whose name holds the
 * spaces and ")" a thread's name may.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { realtimeGcHazard } from '../src/clock/index.js';
import { policyFromStat } from '../src/clock/realtime.js';

/** A stat line with this name, policy and real-time priority (fields 40 and 41), the rest as Linux writes them. */
function statLine(name: string, policy: number, priority: number): string {
  const after = Array.from({ length: 50 }, (_, k) => String(k + 3));
  after[0] = 'S';
  after[40 - 3] = String(priority);
  after[41 - 3] = String(policy);
  return `4242 (${name}) ${after.join(' ')}\n`;
}

describe('realtime GC hazard', () => {
  it('reads the policy after a name with spaces and parentheses', () => {
    assert.equal(policyFromStat(statLine('node', 0, 0)), 0);
    assert.equal(policyFromStat(statLine('a) b (c', 1, 20)), 1);
    assert.equal(policyFromStat(statLine('x', 2, 5)), 2);
    assert.equal(policyFromStat('4242 (short) S 1 2'), undefined);
  });

  it('is a hazard under SCHED_FIFO or SCHED_RR without --single-threaded-gc', () => {
    assert.equal(realtimeGcHazard(statLine('node', 1, 20), []), true);
    assert.equal(realtimeGcHazard(statLine('node', 2, 20), ['--max-old-space-size=512']), true);
    assert.equal(realtimeGcHazard(statLine('node', 1, 20), ['--single-threaded-gc']), false);
    assert.equal(realtimeGcHazard(statLine('node', 1, 20), ['--single_threaded_gc']), false);
    assert.equal(realtimeGcHazard(statLine('node', 2, 20), ['--single-threaded']), false);
    assert.equal(realtimeGcHazard(statLine('node', 0, 0), []), false, 'SCHED_OTHER');
    assert.equal(realtimeGcHazard(statLine('node', 3, 0), []), false, 'SCHED_BATCH');
  });

  it("reads this process's own policy (Linux)", { skip: process.platform !== 'linux' }, () => {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const policy = policyFromStat(stat);
    assert.ok(policy !== undefined && policy >= 0 && policy <= 6, `policy ${policy}`);
    // The suite does not run real-time: the warning would be noise here.
    if (policy === 0) assert.equal(realtimeGcHazard(stat, process.execArgv), false);
  });
});
