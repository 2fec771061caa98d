/**
 * The local store's lexical channel (sqlite-lexical.ts) against FTS5's own bm25() over every
 * matching row, on a real SQLite store: whichever way rankLexical takes (the chunks with every
 * term listed or ranked by FTS5, the rare terms' chunks alone, or FTS5's ranking of the chunks with
 * only common terms), it returns the ranking the full OR query gives, chunks with every term first.
 * Also: the document frequencies and totals it keeps stay true through replaced and removed files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore, closeReaders } from '../src/search/sqlite-store.js';
import { rankLexical, type Scope } from '../src/search/sqlite-lexical.js';
import { stem } from '../src/search/bm25.js';
import { queryTerms } from '../src/search/tokens.js';
import { chunkId } from '../src/search/indexer.js';
import type { StoredChunk } from '../src/search/store.js';

const COMMON = ['parse', 'load', 'save', 'user', 'config', 'file'];
const MEDIUM = ['retry', 'timeout', 'cache', 'token', 'session', 'order', 'invoice', 'payment', 'queue', 'worker'];
const RARE = ['render', 'route', 'health', 'metric'];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** 60 files of 30 chunks (and one of 3): common words in most chunks, medium ones in some, rare ones in few. */
function files(seed: number): Map<string, StoredChunk[]> {
  const rand = random(seed);
  const pick = (words: string[]): string => words[Math.floor(rand() * words.length)]!;
  const out = new Map<string, StoredChunk[]>();
  for (let f = 0; f < 60; f++) {
    const path = `${f % 3 === 0 ? 'lib' : 'app'}/f${f}.py`;
    const chunks: StoredChunk[] = [];
    for (let c = 0; c < 30; c++) {
      const words = [pick(COMMON), pick(COMMON), pick(COMMON), pick(MEDIUM), ...(rand() < 0.3 ? [pick(MEDIUM)] : []), ...(rand() < 0.04 ? [pick(RARE)] : [])];
      const name = `${words.slice(0, 2).join('_')}_${f}_${c}`;
      const text = `def ${name}():\n    """${pick(COMMON)} the ${pick(MEDIUM)}"""\n    ${words.join('_')} = ${words.reverse().join('_')}(${pick(COMMON)})\n    return ${words.length}`;
      const chunk = { path, language: 'python', symbol: name, kind: 'function' as const, startLine: c * 4 + 1, endLine: c * 4 + 4, text, hash: `${seed}:${f}:${c}` };
      chunks.push({ ...chunk, id: chunkId(chunk), fileHash: `${seed}:${f}` });
    }
    out.set(path, chunks);
  }
  // Chunks all about one medium word: they outscore many chunks with that word and a common one,
  // which must still come after those (every term first).
  const heavy = ['retry', 'token', 'invoice'].map((word, c) => {
    const chunk = {
      path: 'app/heavy.py', language: 'python', symbol: `${word}_${word}`, kind: 'function' as const, startLine: c * 3 + 1, endLine: c * 3 + 3,
      text: `def ${word}_${word}():\n    "${word} ${word}"\n    return ${word}(${word})`, hash: `${seed}:heavy:${c}`,
    };
    return { ...chunk, id: chunkId(chunk), fileHash: `${seed}:heavy` };
  });
  out.set('app/heavy.py', heavy);
  return out;
}

/** Every matching row as FTS5's bm25() ranks it: chunks with every term first, then the rest. */
function reference(db: Database.Database, terms: string[], scope: Scope): Array<{ rowid: number; score: number; all: boolean }> {
  const stems = terms.map(stem);
  const unique = [...new Set(stems)];
  const quote = (term: string): string => `"${term}"`;
  const rows = db
    .prepare(
      `SELECT lexical.rowid AS rowid, -bm25(lexical, 20, 4, 2, 1) AS score FROM lexical JOIN chunks c ON c.rowid = lexical.rowid
       WHERE lexical MATCH ? ${scope.sql}`,
    )
    .all(stems.map(quote).join(' OR '), ...scope.params) as Array<{ rowid: number; score: number }>;
  const all =
    unique.length > 1
      ? new Set(db.prepare('SELECT rowid FROM lexical WHERE lexical MATCH ?').pluck().all(unique.map(quote).join(' AND ')) as number[])
      : new Set<number>();
  return rows
    .map((row) => ({ ...row, all: all.has(row.rowid) }))
    .sort((a, b) => Number(b.all) - Number(a.all) || b.score - a.score);
}

async function buildStore(t: { after(fn: () => void): void }): Promise<{ file: string; store: SqliteStore }> {
  const base = mkdtempSync(join(tmpdir(), 'faultline-lexical-'));
  t.after(() => {
    closeReaders();
    rmSync(base, { recursive: true, force: true });
  });
  const file = join(base, 'index.sqlite');
  const store = await SqliteStore.open(file, { tree: join(base, 'tree'), embedder: 'test', vectors: false });
  return { file, store };
}

test('the lexical ranking is FTS5 bm25() over every match, whatever way it takes to it', async (t) => {
  const { file, store } = await buildStore(t);
  for (const [path, chunks] of files(1)) await store.replaceFile(path, chunks);
  await store.commit();
  const db = new Database(file, { readonly: true });
  t.after(() => db.close());

  const everywhere: Scope = { sql: '', params: [] };
  const underLib: Scope = { sql: 'AND (substr(c.path, 1, ?) = ?)', params: [4, 'lib/'] };
  const queries = [
    'parse load', // every chunk with both: more than a small budget, ranked by FTS5
    'render user config', // a rare term lists the candidates
    'parse load file', // common terms only: FTS5 ranks the chunks with some of them
    'retry timeout', // medium terms: listed whole under a large budget
    'parsing parser parse', // one stem three times: counted three times, as FTS5 counts phrases
    'health metric retry parse user', // rare, medium and common together
    'route', // one rare term
    'save', // one common term
    'nosuchword parse', // an unknown term matches nothing, the other still ranks
    'retry parse',
    'token session user',
    'invoice payment queue worker load',
  ];
  let compared = 0;
  for (const query of queries) {
    const terms = queryTerms(query);
    for (const scope of [everywhere, underLib]) {
      const everyMatch = reference(db, terms, scope);
      const scoreOf = new Map(everyMatch.map((row) => [row.rowid, row.score]));
      const withAll = new Set(everyMatch.filter((row) => row.all).map((row) => row.rowid));
      for (const limit of [10, 100, 300]) {
      const expected = everyMatch.slice(0, limit);
      for (const tuning of [{ directPostings: 0, budget: 20 }, { directPostings: 0, budget: 200 }, { directPostings: 0, budget: 3000 }, {}]) {
        const ranked = rankLexical(db, terms, scope, limit, tuning);
        const label = `"${query}" ${scope.sql === '' ? 'everywhere' : 'under lib/'}, ${JSON.stringify(tuning)}`;
        assert.equal(ranked.length, expected.length, `${label}: as many hits`);
        ranked.forEach((rowid, index) => {
          // Ties may come in another order; the score at each rank must be the same.
          const score = scoreOf.get(rowid);
          assert.ok(score !== undefined, `${label}: rank ${index + 1} (rowid ${rowid}) is a match`);
          assert.ok(Math.abs(score - expected[index]!.score) < 1e-9, `${label}: rank ${index + 1} scores ${score}, FTS5's ${expected[index]!.score}`);
          assert.equal(withAll.has(rowid), expected[index]!.all, `${label}: rank ${index + 1} has every term or not, as FTS5's`);
          compared++;
        });
      }
      }
    }
  }
  assert.ok(compared > 3000, `ranks compared: ${compared}`);
  assert.deepEqual(rankLexical(db, ['nosuchword'], everywhere, 10), []);
});

test('document frequencies and totals stay true through replaced and removed files', async (t) => {
  const { file, store } = await buildStore(t);
  const first = files(1);
  for (const [path, chunks] of first) await store.replaceFile(path, chunks);
  await store.commit();
  // A second run: a third of the files change, a sixth go away, the chunks of one repeat an id.
  const second = files(2);
  let index = 0;
  for (const path of first.keys()) {
    if (index % 6 === 1) await store.replaceFile(path, []);
    else if (index % 3 === 0) await store.replaceFile(path, second.get(path)!);
    index++;
  }
  const repeated = second.get('app/f2.py')!;
  await store.replaceFile('app/f2.py', [...repeated, repeated[0]!]);
  await store.commit();

  const db = new Database(file, { readonly: true });
  t.after(() => db.close());
  db.exec("CREATE VIRTUAL TABLE temp.counted USING fts5vocab(main, 'lexical', 'row')");
  const counted = new Map(db.prepare('SELECT term, doc FROM temp.counted').raw().all() as Array<[string, number]>);
  const kept = new Map(db.prepare('SELECT term, df FROM lexical_vocab').raw().all() as Array<[string, number]>);
  assert.ok(counted.size > 100);
  assert.deepEqual(kept, counted, 'every term with its number of chunks, and no term that is gone');
  const chunks = db.prepare('SELECT count(*) FROM chunks').pluck().get() as number;
  assert.equal(db.prepare("SELECT value FROM meta WHERE key = 'lexical_rows'").pluck().get(), String(chunks));
  assert.equal(db.prepare('SELECT count(*) FROM lexical_terms').pluck().get(), chunks);
  assert.equal(chunks, 60 * 30 + 3 - 10 * 30, 'ten files removed; the repeated chunk counted once');
});
