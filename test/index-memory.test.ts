/**
 * What keeps indexing's memory bounded (ARCHITECTURE.md, "Memory while indexing"): structural
 * facts, not sizes: the memos are bounded and hold copies, the read-ahead is bounded in files and
 * bytes, and without vectors a file's chunks go to the store as soon as the file is chunked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { GenerationalMemo } from '../src/search/memo.js';
import { codeTokens } from '../src/search/tokens.js';
import { indexSourceTree, readAheadGroups } from '../src/search/indexer.js';
import { scratchTree } from './helpers/index-tree.js';

test('a generational memo holds at most two generations and keeps a key in frequent use', () => {
  const memo = new GenerationalMemo<number>(100);
  for (let i = 0; i < 10_000; i++) {
    memo.set(`key${i}`, i);
    if (memo.get('frequent') === undefined) {
      assert.equal(i, 0, 'only the first lookup misses');
      memo.set('frequent', -1);
    }
    assert.ok(memo.size <= 200, `at most 2 × 100 entries (${memo.size} after ${i + 1} keys)`);
  }
  assert.equal(memo.get('frequent'), -1, 'used every turn, it survived 100 generations');
  assert.equal(memo.get('key0'), undefined, 'an old key used once is gone');
  assert.equal(memo.get('key9999'), 9999);
});

test('read-ahead groups are bounded in files and in bytes, and a bigger file goes alone', () => {
  const files = [10, 10, 10, 10, 10, 50, 200, 10, 10].map((size, index) => ({ size, index }));
  const groups = [...readAheadGroups(files, 3, 100)].map((group) => group.map((file) => file.index));
  assert.deepEqual(groups, [[0, 1, 2], [3, 4, 5], [6], [7, 8]]);
  assert.deepEqual([...readAheadGroups([], 3, 100)], []);
});

test('memoised identifiers do not keep the text they were found in alive', async (t) => {
  // V8 keeps a substring of 13+ characters as a view of its parent: a memo keyed by identifiers
  // as matched held every chunk's file. The parent here is unique, and found in a heap snapshot
  // only if something still refers to it.
  const marker = `MARKER_${process.pid}_${Date.now()}`;
  let source: string | undefined =
    `# ${marker} -- this text must not survive\n${Array.from({ length: 500 }, (_, i) => `def long_identifier_number_${marker}_${i}(): pass`).join('\n')}`;
  assert.ok(codeTokens(source).length > 500);
  source = undefined;
  // RegExp's legacy statics (RegExp.input) keep the subject of the last match: one string, not this one.
  /x/.exec('x');
  const file = writeHeapSnapshot(join(tmpdir(), `faultline-memo-${process.pid}.heapsnapshot`));
  t.after(() => rmSync(file, { force: true }));
  const strings = (JSON.parse(readFileSync(file, 'utf8')) as { strings: string[] }).strings;
  assert.ok(
    strings.some((text) => text.includes(`long_identifier_number_${marker}_499`)),
    'the memo holds the identifiers',
  );
  assert.ok(!strings.some((text) => text.includes(`# ${marker} --`)), 'but not the text they came from');
});

test("without vectors each file's chunks reach the store as it is chunked, not in batches", async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const seen: number[] = [];
  const stats = await indexSourceTree(tree.settings, {
    sourceDir: tree.dir,
    onProgress: ({ embedded }) => seen.push(embedded),
  });
  const distinct = [...new Set(seen)].filter((count) => count > 0);
  assert.ok(stats.changed >= 5);
  assert.ok(distinct.length >= stats.changed, `stored counts rise file by file: ${distinct.join(', ')}`);
  assert.equal(distinct.at(-1), stats.chunks);
});
