/**
 * Sorted output is in code-unit order, never the locale's: the same rows in the same order on
 * every machine, whatever LANG says.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byCodeUnits } from '../src/order.js';
import { computeSlis, type CallRecord } from '../src/toolcall/metrics.js';

test('byCodeUnits orders by UTF-16 code units: upper case before lower, no locale folding', () => {
  assert.deepEqual(['beta', 'alpha', 'Alpha', 'Beta', 'älpha', '_x'].sort(byCodeUnits), ['Alpha', 'Beta', '_x', 'alpha', 'beta', 'älpha']);
  // localeCompare would put "alpha" next to "Alpha" and "älpha" before "beta".
  assert.notDeepEqual(['beta', 'alpha', 'Alpha', 'älpha'].sort((a, b) => a.localeCompare(b)), ['Alpha', 'alpha', 'beta', 'älpha']);
});

test('the tool-call plane verdicts are listed by tool then fault in code-unit order', () => {
  const failed = (seq: number, tool: string, fault: string): CallRecord => ({
    ts: new Date(0).toISOString(),
    seq,
    tool,
    task: 't',
    logical: seq,
    attempt: 0,
    upstream_ms: null,
    queued_ms: 0,
    injected_delay_ms: 0,
    latency_ms: 1,
    deadline_ms: 1000,
    fault,
    outcome: 'is_error',
    error_shape: 'is_error',
    responded: true,
    schema_ok: true,
    correct: false,
    within_deadline: true,
    success: false,
    unsafe_retry: false,
  });
  const slis = computeSlis([failed(1, 'search', 'error'), failed(2, 'Search', 'error'), failed(3, 'search', 'Timeout'), failed(4, 'ásk', 'error')]);
  assert.deepEqual(
    slis.verdicts.map((v) => `${v.tool}/${v.fault}`),
    ['Search/error', 'search/Timeout', 'search/error', 'ásk/error'],
  );
});
