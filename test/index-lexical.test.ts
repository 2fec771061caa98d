/**
 * The local store's lexical channel (sqlite-lexical.ts) against every matching row scored, on a
 * real SQLite store: whichever way rankLexical takes (FTS5's ranking of every match, the rare
 * terms' chunks alone, or with FTS5's ranking of the chunks with only common terms), it returns
 * the best chunks by conceptScore, and that score is FTS5's own bm25() over the sum of the
 * concepts' ceilings. Also: the document frequencies and totals it keeps stay true through
 * replaced and removed files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore, closeReaders } from '../src/search/sqlite-store.js';
import { rankLexical, scoreLexical, type Scope } from '../src/search/sqlite-lexical.js';
import type { QueryConcept } from '../src/search/vocabulary.js';
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
      const words = [
        pick(COMMON),
        pick(COMMON),
        pick(COMMON),
        pick(MEDIUM),
        ...(rand() < 0.3 ? [pick(MEDIUM)] : []),
        ...(rand() < 0.04 ? [pick(RARE)] : []),
      ];
      const name = `${words.slice(0, 2).join('_')}_${f}_${c}`;
      const text =
        `def ${name}():\n    """${pick(COMMON)} the ${pick(MEDIUM)}"""\n  ` +
        `  ${words.join('_')} = ` +
        `${words.reverse().join('_')}(${pick(COMMON)})\n    return ${words.length}`;
      const chunk = {
        path,
        language: 'python',
        symbol: name,
        kind: 'function' as const,
        startLine: c * 4 + 1,
        endLine: c * 4 + 4,
        text,
        hash: `${seed}:${f}:${c}`,
      };
      chunks.push({ ...chunk, id: chunkId(chunk), fileHash: `${seed}:${f}` });
    }
    out.set(path, chunks);
  }
  // Chunks all about one medium word: they outscore many chunks with that word and a common one,
  // which must still come after those (every term first).
  const heavy = ['retry', 'token', 'invoice'].map((word, c) => {
    const chunk = {
      path: 'app/heavy.py',
      language: 'python',
      symbol: `${word}_${word}`,
      kind: 'function' as const,
      startLine: c * 3 + 1,
      endLine: c * 3 + 3,
      text: `def ${word}_${word}():\n    "${word} ${word}"\n    return ${word}(${word})`,
      hash: `${seed}:heavy:${c}`,
    };
    return { ...chunk, id: chunkId(chunk), fileHash: `${seed}:heavy` };
  });
  out.set('app/heavy.py', heavy);
  return out;
}

/** Every row matching a term, scored by FTS5's bm25() and by scoreLexical, best first. */
function reference(
  db: Database.Database,
  concepts: QueryConcept[],
  scope: Scope,
): Array<{ rowid: number; score: number; bm25: number }> {
  const quote = (term: string): string => `"${term}"`;
  const rows = db
    .prepare(
      `SELECT lexical.rowid AS rowid, -bm25(lexical, 20, 6, 4, 2, 1) AS bm25 FROM lexical JOIN chunks c ON c.rowid = lexical.rowid
       WHERE lexical MATCH ? ${scope.sql}`,
    )
    .all(concepts.map((concept) => quote(concept.variants[0]!.term)).join(' OR '), ...scope.params) as Array<{
    rowid: number;
    bm25: number;
  }>;
  const scores = scoreLexical(
    db,
    concepts,
    rows.map((row) => row.rowid),
  );
  return rows.map((row) => ({ ...row, score: scores.get(row.rowid)! })).sort((a, b) => b.score - a.score);
}

/** The words of a query as concepts of one form each (no abbreviations or synonyms: FTS5 knows none). */
function plainConcepts(query: string): QueryConcept[] {
  return [...new Set(queryTerms(query).map(stem))].map((term) => ({ variants: [{ term, weight: 1 }], weight: 1 }));
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
    'parsing parse', // one stem twice: one concept
    'health metric retry parse user', // rare, medium and common together
    'route', // one rare term
    'save', // one common term
    'nosuchword parse', // an unknown term matches nothing, the other still ranks
    'retry parse',
    'token session user',
    'invoice payment queue worker load',
  ];
  let compared = 0;
  const rows = db.prepare('SELECT count(*) FROM chunks').pluck().get() as number;
  for (const query of queries) {
    const concepts = plainConcepts(query);
    // FTS5 gives a word no chunk holds no IDF; the lexical score counts it as a chunk's worth.
    const known = concepts.filter((concept) =>
      db.prepare('SELECT df FROM lexical_vocab WHERE term = ?').pluck().get(concept.variants[0]!.term),
    );
    const ceilings = concepts.reduce((sum, concept) => {
      const df =
        (db.prepare('SELECT df FROM lexical_vocab WHERE term = ?').pluck().get(concept.variants[0]!.term) as
          | number
          | undefined) ?? 0;
      return sum + Math.max(Math.log((rows - df + 0.5) / (df + 0.5)), 1e-6) * 2.2;
    }, 0);
    for (const scope of [everywhere, underLib]) {
      const everyMatch = reference(db, concepts, scope);
      for (const row of everyMatch) {
        assert.ok(
          Math.abs(row.score - row.bm25 / ceilings) < 1e-9,
          `"${query}": rowid ${row.rowid} scores ${row.score}, FTS5's bm25 ${row.bm25} / ${ceilings}`,
        );
      }
      assert.ok(known.length === 0 || everyMatch.length > 0);
      for (const limit of [10, 100, 300]) {
        const expected = everyMatch.slice(0, limit);
        for (const tuning of [
          { directPostings: 0, budget: 20 },
          { directPostings: 0, budget: 200 },
          { directPostings: 0, budget: 3000 },
          {},
        ]) {
          const ranked = rankLexical(db, concepts, scope, limit, tuning);
          const label = `"${query}" ${scope.sql === '' ? 'everywhere' : 'under lib/'}, ${JSON.stringify(tuning)}`;
          assert.equal(ranked.length, expected.length, `${label}: as many hits`);
          ranked.forEach(({ rowid, score }, index) => {
            // Ties may come in another order; the score at each rank must be the same.
            assert.ok(
              everyMatch.some((row) => row.rowid === rowid),
              `${label}: rank ${index + 1} (rowid ${rowid}) is a match`,
            );
            assert.ok(
              Math.abs(score - expected[index]!.score) < 1e-9,
              `${label}: rank ${index + 1} scores ${score}, expected ${expected[index]!.score}`,
            );
            compared++;
          });
        }
      }
    }
  }
  assert.ok(compared > 3000, `ranks compared: ${compared}`);
  assert.deepEqual(rankLexical(db, plainConcepts('nosuchword'), everywhere, 10), []);
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
