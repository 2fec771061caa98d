/**
 * Search quality on a small fixed corpus shaped like the Python standard library
 * (test/fixtures/search/corpus): judged queries with the rank each must get, with the local
 * embedder (lexical and symbol channels fused). Identifier queries put the definition first,
 * ahead of its callers, its tests, its abstract stubs and the fragments of split functions;
 * natural-language queries find the definition their words describe. bench/search.ts measures
 * the same on the whole standard library.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeConfig } from '../src/config.js';
import { indexSourceTree, searchIndex } from '../src/search/index.js';
import { closeReaders } from '../src/search/sqlite-store.js';
import { PREFIX_FLOOR, rankCandidates } from '../src/search/fusion.js';
import { queryOperations } from '../src/search/vocabulary.js';
import type { ChunkRecord } from '../src/search/store.js';
import { fixturePath } from './helpers/repo.js';

/** [query, the hit expected, its 1-based rank]. A hit is `path:symbol`. */
const JUDGED: Array<[string, string, number]> = [
  ['urlencode', 'urllib/parse.py:urlencode', 1],
  ['urllib.parse.urlencode', 'urllib/parse.py:urlencode', 1],
  ['HTTPResponse._read_status', 'http/client.py:HTTPResponse._read_status', 1],
  ['_read_status', 'http/client.py:HTTPResponse._read_status', 1],
  ['StreamReader.readuntil', 'asyncio/streams.py:StreamReader.readuntil', 1],
  ['readuntil', 'asyncio/streams.py:StreamReader.readuntil', 1],
  ['call_later', 'asyncio/base_events.py:BaseEventLoop.call_later', 1],
  ['call_later', 'asyncio/events.py:AbstractEventLoop.call_later', 2],
  ['process_records', 'tests/records.py:process_records#part1', 1],
  ['read_status', 'http/client.py:HTTPResponse._read_status', 1],
  // The start of a name finds the names it begins, ahead of any word match, and a split one at its signature.
  ['urlenc', 'urllib/parse.py:urlencode', 1],
  ['StreamReader.readexa', 'asyncio/streams.py:StreamReader.readexactly', 1],
  ['process_rec', 'tests/records.py:process_records#part1', 1],
  // A word match (readline's "Read") would rank first without the prefix tier.
  ['StreamRead', 'asyncio/streams.py:StreamReader', 1],
  // sleep_then_cancel's docstring says "after a delay" word for word: lexical search ranks it first.
  ['schedule a callback after a delay', 'asyncio/tasks.py:sleep_then_cancel', 1],
  ['schedule a callback after a delay', 'asyncio/base_events.py:BaseEventLoop.call_later', 2],
  ['cancel a task', 'asyncio/tasks.py:Task.cancel', 1],
  ['encode a dict into a URL query string', 'urllib/parse.py:urlencode', 1],
  ['read the status line of an HTTP response', 'http/client.py:HTTPResponse._read_status', 1],
  ['read exactly n bytes from a stream', 'asyncio/streams.py:StreamReader.readexactly', 1],
];

test('judged queries on the fixed corpus get their exact ranks', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'faultline-search-quality-'));
  t.after(() => {
    closeReaders();
    rmSync(base, { recursive: true, force: true });
  });
  const dir = join(base, 'corpus');
  cpSync(fixturePath('search', 'corpus'), dir, { recursive: true });
  const settings = { dataDir: join(base, 'data'), llm: makeConfig().llm, env: {} };
  await indexSourceTree(settings, { sourceDir: dir });

  const failures: string[] = [];
  for (const [query, expected, rank] of JUDGED) {
    const hits = await searchIndex(settings, { query, sourceDir: dir, limit: 10 });
    const names = hits.map((hit) => `${hit.relativePath}:${hit.symbol}`);
    const got = names.indexOf(expected) + 1;
    if (got !== rank)
      failures.push(
        `"${query}": ${expected} ranked ${got || 'absent'}, expected ${rank}; got ${names.slice(0, 4).join(', ')}`,
      );
  }
  assert.deepEqual(failures, []);
});

test('a split definition is one hit, and an empty stub ranks after the real definition of its name', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'faultline-search-quality-'));
  t.after(() => {
    closeReaders();
    rmSync(base, { recursive: true, force: true });
  });
  const dir = join(base, 'corpus');
  cpSync(fixturePath('search', 'corpus'), dir, { recursive: true });
  const settings = { dataDir: join(base, 'data'), llm: makeConfig().llm, env: {} };
  await indexSourceTree(settings, { sourceDir: dir });
  const fragments = await searchIndex(settings, {
    query: 'transform record sink write value',
    sourceDir: dir,
    limit: 10,
  });
  assert.equal(
    fragments.filter((hit) => hit.symbol.startsWith('process_records')).length,
    1,
    'the parts of process_records count once',
  );
  const calls = await searchIndex(settings, { query: 'call_at', sourceDir: dir, limit: 10 });
  const symbols = calls.map((hit) => hit.symbol);
  assert.ok(
    symbols.indexOf('BaseEventLoop.call_at') < symbols.indexOf('AbstractEventLoop.call_at'),
    symbols.join(', '),
  );
});

test(
  'a package indexed alone keeps its name in qualified queries, and ' + 'a split function is found at its signature',
  async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'faultline-search-quality-'));
    t.after(() => {
      closeReaders();
      rmSync(base, { recursive: true, force: true });
    });
    const settings = { dataDir: join(base, 'data'), llm: makeConfig().llm, env: {} };
    // The urllib package alone: parse.py is the module urllib.parse.
    const urllib = join(base, 'urllib');
    cpSync(fixturePath('search', 'corpus', 'urllib'), urllib, { recursive: true });
    await indexSourceTree(settings, { sourceDir: urllib });
    const [urlencode] = await searchIndex(settings, { query: 'urllib.parse.urlencode', sourceDir: urllib, limit: 5 });
    assert.equal(urlencode?.symbol.replace(/#part\d+$/, ''), 'urlencode');

    // A package whose __init__.py defines a long function with a three-line signature: the chunker
    // splits it, and its first fragment is the signature alone (which once counted as an empty stub,
    // so the docstring fragment was returned, without the def line).
    const json = join(base, 'json');
    mkdirSync(json);
    const doc = Array.from(
      { length: 60 },
      (_, i) => `    Line ${i} of a long docstring about serializing obj to a JSON formatted str.`,
    ).join('\n');
    const body = Array.from(
      { length: 30 },
      (_, i) => `    value_${i} = obj.get("key_${i}", kw.get("default_${i}"))`,
    ).join('\n');
    writeFileSync(
      join(json, '__init__.py'),
      `import sys\n\n\ndef dumps(obj, *, skipkeys=False, ` +
        `ensure_ascii=True,\n        allow_nan=True, cls=None, ` +
        `indent=None,\n        default=None, sort_keys=False, **kw):\n    ` +
        `"""Serialize obj.\n\n${doc}\n    """\n${body}\n    return ` +
        `str(obj)\n`,
    );
    await indexSourceTree(settings, { sourceDir: json });
    for (const query of ['json.dumps', 'dumps']) {
      const [first] = await searchIndex(settings, { query, sourceDir: json, limit: 5 });
      assert.equal(first?.symbol, 'dumps#part1', `${query}: ${first?.symbol}`);
      assert.equal(first?.startLine, 4, `${query}: the hit starts at the def line`);
    }
  },
);

test(
  'ranking: a name match scores 1, a prefix match above word ' +
    'matches, and a name match is answered by its first fragment',
  () => {
    const chunk = (id: string, symbol: string, startLine: number, path = 'm.py'): ChunkRecord => ({
      id,
      path,
      language: path.endsWith('.py') ? 'python' : 'typescript',
      symbol,
      kind: 'function',
      startLine,
      endLine: startLine + 5,
      text: `def ${symbol.replace(/#.*$/, '')}():\n    return work(1)\n`,
      hash: id,
      fileHash: 'f',
    });
    const options = { limit: 10, symbol: 'get', operations: new Set<string>() };
    const hits = rankCandidates(
      [
        { chunk: chunk('w', 'Queue.get_item', 30), lexical: 0.6 },
        { chunk: chunk('p2', 'get_payload#part2', 16), lexical: 0.5, prefixRank: 1 },
        { chunk: chunk('p1', 'get_payload#part1', 10), lexical: 0.2, prefixRank: 0 },
        { chunk: chunk('e', 'get', 1), lexical: 0.3, exactRank: 0 },
      ],
      options,
    );
    assert.deepEqual(
      hits.map((hit) => hit.chunk.id),
      ['e', 'p1', 'w'],
    );
    assert.equal(hits[0]!.score, 1);
    assert.ok(hits[1]!.score >= PREFIX_FLOOR && hits[1]!.score < 1, String(hits[1]!.score));
    assert.equal(hits[2]!.score, 0.6);

    // Test code and the opposite operation count less; equal scores fall back to path and line.
    const decode = { limit: 10, operations: queryOperations('decode base64 body') };
    const ranked = rankCandidates(
      [
        { chunk: chunk('enc', 'body_encode', 1), lexical: 0.8 },
        { chunk: chunk('dec', 'decode', 20), lexical: 0.5 },
        { chunk: chunk('t', 'decode', 1, 'tests/test_m.py'), lexical: 0.7 },
        { chunk: chunk('b', 'decode_body', 1, 'b.py'), lexical: 0.5 },
      ],
      decode,
    );
    assert.deepEqual(
      ranked.map((hit) => `${hit.chunk.id} ${hit.score.toFixed(2)}`),
      ['b 0.50', 'dec 0.50', 't 0.42', 'enc 0.40'],
    );
  },
);

test('ranking: one definition published as source, compiled and declaration files is one hit, the source first', () => {
  const chunk = (path: string, symbol: string): ChunkRecord => ({
    id: `${path}:${symbol}`,
    path,
    language: /\.tsx?$/.test(path) ? 'typescript' : 'javascript',
    symbol,
    kind: 'function',
    startLine: 1,
    endLine: 5,
    text: `export function ${symbol}() {\n  return 1;\n}`,
    hash: path,
    fileHash: path,
  });
  const paths = [
    'v4/core/util.js',
    'v4/core/util.cjs',
    'v4/core/util.d.ts',
    'v4/core/util.d.cts',
    'src/v4/core/util.ts',
  ];
  const hits = rankCandidates(
    [
      ...paths.map((path, index) => ({ chunk: chunk(path, 'escapeRegex'), lexical: 0.9 - index * 0.01 })),
      { chunk: chunk('v3/helpers/util.ts', 'escapeRegex'), lexical: 0.5 },
      { chunk: chunk('lib/command.js', 'Command.version'), lexical: 0.4 },
      { chunk: chunk('typings/index.d.ts', 'Command.version'), lexical: 0.45 },
    ],
    { limit: 10, operations: new Set() },
  );
  assert.deepEqual(
    hits.map((hit) => [hit.chunk.path, hit.score, hit.copies ?? []]),
    [
      ['src/v4/core/util.ts', 0.9, ['v4/core/util.cjs', 'v4/core/util.d.cts', 'v4/core/util.d.ts', 'v4/core/util.js']],
      ['v3/helpers/util.ts', 0.5, []],
      ['lib/command.js', 0.45, ['typings/index.d.ts']],
    ],
  );
});

test('a tree indexed afresh and one indexed run by run rank every query the same, ties included', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'faultline-search-ties-'));
  t.after(() => {
    closeReaders();
    rmSync(base, { recursive: true, force: true });
  });
  const dir = join(base, 'tree');
  cpSync(fixturePath('search', 'corpus'), dir, { recursive: true });
  // Copies of one module under many names: every query that finds it finds equal scores.
  const copy = (name: string, body: string): void => {
    mkdirSync(join(dir, 'copies'), { recursive: true });
    writeFileSync(join(dir, 'copies', `${name}.py`), body);
  };
  const module = (word: string): string =>
    `def fetch_${word}_records(session, limit):\n    """Fetch the ` +
    `records of a session, at most limit."""\n    return ` +
    `session.query(limit)\n`;
  const names = Array.from({ length: 12 }, (_, i) => `m${String(i).padStart(2, '0')}`);
  const settings = (name: string) => ({ dataDir: join(base, name), llm: makeConfig().llm, env: {} });
  // Run by run: half the copies first, others changed later, one removed and put back.
  names.slice(0, 6).forEach((name) => copy(name, module('user')));
  await indexSourceTree(settings('incremental'), { sourceDir: dir });
  names.forEach((name, i) => copy(name, module(i % 2 === 0 ? 'user' : 'order')));
  await indexSourceTree(settings('incremental'), { sourceDir: dir });
  rmSync(join(dir, 'copies', 'm03.py'));
  await indexSourceTree(settings('incremental'), { sourceDir: dir });
  copy('m03', module('order'));
  await indexSourceTree(settings('incremental'), { sourceDir: dir });
  await indexSourceTree(settings('fresh'), { sourceDir: dir });

  const queries = [
    'fetch records of a session',
    'fetch_user_records',
    'fetch_order',
    'session query limit',
    'urlencode',
    'read until a separator',
    'call_later',
  ];
  for (const query of queries) {
    const ranked = async (name: string) =>
      (await searchIndex(settings(name), { query, sourceDir: dir, limit: 20 })).map(
        (hit) => `${hit.relativePath}:${hit.symbol} ${hit.score}`,
      );
    const fresh = await ranked('fresh');
    assert.ok(fresh.length > 1, query);
    assert.deepEqual(await ranked('incremental'), fresh, query);
  }
});
