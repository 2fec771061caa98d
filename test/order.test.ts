/**
 * Sorted output is in code-unit order, never the locale's: the same rows in the same order on
 * every machine, whatever LANG says.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byCodeUnits } from '../src/order.js';
import { LanguageSelection } from '../src/search/languages.js';
import { walkSourceTree } from '../src/search/walk.js';
import { FileAccess } from '../src/access.js';
import { computeSlis, type CallRecord } from '../src/toolcall/metrics.js';

test('byCodeUnits orders by UTF-16 code units: upper case before lower, no locale folding', () => {
  assert.deepEqual(['beta', 'alpha', 'Alpha', 'Beta', 'älpha', '_x'].sort(byCodeUnits), [
    'Alpha',
    'Beta',
    '_x',
    'alpha',
    'beta',
    'älpha',
  ]);
  // Characters outside the BMP compare by their surrogates (0xD83D…), after every BMP letter below them.
  assert.deepEqual(['😀', 'z', '\uFFFD', 'é'].sort(byCodeUnits), ['z', 'é', '😀', '\uFFFD']);
  assert.equal(byCodeUnits('same', 'same'), 0);
});

test('the files of an indexed tree are walked in code-unit order, whatever the directory lists first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-order-'));
  try {
    for (const name of ['beta.py', 'alpha.py', 'Alpha.py', 'Beta.py', 'älpha.py', '_x.py'])
      writeFileSync(join(dir, name), 'def f():\n    return 1\n');
    mkdirSync(join(dir, 'B'));
    writeFileSync(join(dir, 'B', 'inner.py'), 'x = 1\n');
    const walked = await walkSourceTree(dir, { selection: LanguageSelection.parse('all'), access: new FileAccess() });
    assert.deepEqual(
      walked.files.map((file) => file.path),
      ['Alpha.py', 'B/inner.py', 'Beta.py', '_x.py', 'alpha.py', 'beta.py', 'älpha.py'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
  const slis = computeSlis([
    failed(1, 'search', 'error'),
    failed(2, 'Search', 'error'),
    failed(3, 'search', 'Timeout'),
    failed(4, 'ásk', 'error'),
  ]);
  assert.deepEqual(
    slis.verdicts.map((v) => `${v.tool}/${v.fault}`),
    ['Search/error', 'search/Timeout', 'search/error', 'ásk/error'],
  );
});
