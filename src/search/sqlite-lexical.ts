/**
 * The lexical channel of the SQLite store: which chunks FTS5 matches, ranked by BM25 (bm25.ts)
 * over a few candidates only.
 *
 * Why not always `ORDER BY bm25(lexical)`: FTS5 scores every row a MATCH yields, and first counts
 * each query term's rows to get its IDF, walking the term's whole posting list. A common term
 * ("read", "data"; in bench/index.ts's synthetic store every term is in a third of the chunks)
 * makes both cost the size of the store: 100 ms at 100,000 chunks. So the store keeps, next to the
 * FTS5 table, each chunk's term frequencies and length (`lexical_terms`) and each term's document
 * frequency (`lexical_vocab`). When the query's terms have few postings between them
 * (DIRECT_POSTINGS), FTS5 ranks as before: every term first, then any. Otherwise, with FTS5 only
 * matching (rowids, no scores):
 *
 * 1. Chunks holding every term come first (as before). They are listed (an AND is an intersection,
 *    cheap) and scored here; only when there are more than CANDIDATE_BUDGET does FTS5's bm25()
 *    pick the best of them.
 * 2. The rest: the query's rarest terms, as many as have CANDIDATE_BUDGET chunks between them,
 *    give the candidates (MaxScore, Turtle & Flood 1995), each scored on every query term. A chunk
 *    holding none of them holds only the common terms, and scores less than their IDFs × (k1+1)
 *    summed; when the candidates needed all score above that, none of those chunks can enter, and
 *    the ranking is exact. Otherwise FTS5 ranks the chunks with only common terms (`common NOT
 *    rare`) as before, and its best join the candidates: still exact, as slow as before.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { CodeChunk } from '../code/chunk.js';
import { encodeTerms, FIELD_WEIGHTS, frequencyOf, idf, stem, stemmedTerms, termIds, termScore, upperBound } from './bm25.js';
import { lexicalTokens } from './tokens.js';

type Database = BetterSqlite3.Database;

/**
 * Up to this many postings (the query terms' document frequencies summed), FTS5's bm25() ranks
 * every match itself, faster than listing candidates and reading their terms here (a few µs a
 * row); above, the candidates are chosen as below. Measured: FTS5 takes about 1 µs per posting.
 */
const DIRECT_POSTINGS = 20_000;
/** At most this many chunks are listed and scored here per tier. */
const CANDIDATE_BUDGET = 1500;
const BM25_WEIGHTS = Object.values(FIELD_WEIGHTS).join(', ');

/** Tables of the lexical channel (created with the store's schema). */
export const LEXICAL_SCHEMA = `
  CREATE VIRTUAL TABLE lexical USING fts5(name, doc, path, body, content='', contentless_delete=1,
    tokenize="ascii tokenchars '_'");
  CREATE TABLE lexical_vocab (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL);
  CREATE TABLE lexical_terms (chunk INTEGER PRIMARY KEY, length INTEGER NOT NULL, terms BLOB NOT NULL);
`;

/** A scope on the chunks table (alias `c`), as sqlite-store's withinClause builds it. */
export interface Scope {
  sql: string;
  params: Array<string | number>;
}

/**
 * Keeps the lexical tables of one write transaction: the FTS5 row, the term list and length of
 * each chunk, and the document frequencies, added up in memory and written at `finish`.
 */
export class LexicalWriter {
  /** Ids of the terms seen in this run; new ones are numbered here and inserted at `finish`. */
  private readonly ids = new Map<string, number>();
  /** The new terms, by id − firstNewId (ids are numbered in order). */
  private readonly newTerms: string[] = [];
  private readonly firstNewId: number;
  /** Change of each term's document frequency, by id (typed: a run can meet 100,000s of terms). */
  private dfChanges = new Int32Array(1024);
  private nextId: number;
  /** A new vocabulary: every term is new, none needs looking up. */
  private readonly vocabularyWasEmpty: boolean;
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      insertFts: db.prepare('INSERT INTO lexical (rowid, name, doc, path, body) VALUES (?, ?, ?, ?, ?)'),
      deleteFts: db.prepare('DELETE FROM lexical WHERE rowid = ?'),
      selectTerms: db.prepare('SELECT terms FROM lexical_terms WHERE chunk = ?').pluck(),
      insertTerms: db.prepare('INSERT INTO lexical_terms (chunk, length, terms) VALUES (?, ?, ?)'),
      deleteTerms: db.prepare('DELETE FROM lexical_terms WHERE chunk = ?'),
      vocabId: db.prepare('SELECT id FROM lexical_vocab WHERE term = ?').pluck(),
      insertTerm: db.prepare('INSERT INTO lexical_vocab (id, term, df) VALUES (?, ?, ?)'),
      changeDf: db.prepare('UPDATE lexical_vocab SET df = df + ? WHERE id = ?'),
      dropUnused: db.prepare('DELETE FROM lexical_vocab WHERE id = ? AND df <= 0'),
      totals: db.prepare('SELECT count(*), total(length) FROM lexical_terms').raw(),
      setMeta: db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
    };
    const highest = db.prepare('SELECT max(id) FROM lexical_vocab').pluck().get() as number | null;
    this.nextId = this.firstNewId = (highest ?? 0) + 1;
    this.vocabularyWasEmpty = highest === null;
  }

  add(rowid: number | bigint, chunk: Pick<CodeChunk, 'path' | 'symbol' | 'text'>): void {
    const { stemmed, length, weights } = stemmedTerms(lexicalTokens(chunk));
    this.statements.insertFts.run(rowid, stemmed.name, stemmed.doc, stemmed.path, stemmed.body);
    const pairs: Array<[number, number]> = [];
    for (const [term, weight] of weights) {
      const id = this.idOf(term);
      pairs.push([id, weight]);
      this.changeDf(id, 1);
    }
    this.statements.insertTerms.run(rowid, length, encodeTerms(pairs));
  }

  remove(rowid: number): void {
    const terms = this.statements.selectTerms.get(rowid) as Buffer | undefined;
    if (terms) for (const id of termIds(terms)) this.changeDf(id, -1);
    this.statements.deleteTerms.run(rowid);
    this.statements.deleteFts.run(rowid);
  }

  /** Writes the vocabulary's changes and the store's totals (call before COMMIT). */
  finish(): void {
    for (let id = 1; id < this.dfChanges.length; id++) {
      const change = this.dfChanges[id]!;
      if (id >= this.firstNewId) {
        if (change > 0) this.statements.insertTerm.run(id, this.newTerms[id - this.firstNewId]!, change);
        continue;
      }
      if (change === 0) continue;
      this.statements.changeDf.run(change, id);
      if (change < 0) this.statements.dropUnused.run(id);
    }
    this.dfChanges = new Int32Array(0);
    this.newTerms.length = 0;
    this.ids.clear();
    const [rows, tokens] = this.statements.totals.get() as [number, number];
    this.statements.setMeta.run('lexical_rows', String(rows));
    this.statements.setMeta.run('lexical_tokens', String(tokens));
  }

  private changeDf(id: number, change: number): void {
    if (id >= this.dfChanges.length) {
      const grown = new Int32Array(Math.max(id + 1, this.dfChanges.length * 2));
      grown.set(this.dfChanges);
      this.dfChanges = grown;
    }
    this.dfChanges[id]! += change;
  }

  private idOf(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.vocabularyWasEmpty ? undefined : (this.statements.vocabId.get(term) as number | undefined);
      if (id === undefined) {
        id = this.nextId++;
        this.newTerms.push(term);
      }
      this.ids.set(term, id);
    }
    return id;
  }
}

/** For tests: where the ways of ranking part (the defaults: DIRECT_POSTINGS, CANDIDATE_BUDGET). */
export interface LexicalTuning {
  directPostings?: number;
  budget?: number;
}

interface QueryTerm {
  term: string;
  id: number;
  df: number;
  /** How many query terms have this stem: FTS5 counted each as its own phrase, so do we. */
  count: number;
  idf: number;
}

interface Scored {
  rowid: number;
  score: number;
}

/** Statements prepared once per read connection. */
const prepared = new WeakMap<Database, ReturnType<typeof readStatements>>();

function readStatements(db: Database) {
  return {
    totals: db.prepare("SELECT key, value FROM meta WHERE key IN ('lexical_rows', 'lexical_tokens')").raw(),
    vocab: db.prepare('SELECT id, df FROM lexical_vocab WHERE term = ?').raw(),
    terms: db.prepare('SELECT chunk, length, terms FROM lexical_terms WHERE chunk IN (SELECT value FROM json_each(?))').raw(),
    match: db.prepare('SELECT rowid FROM lexical WHERE lexical MATCH ? LIMIT ?').pluck(),
    best: db.prepare(`SELECT rowid FROM lexical WHERE lexical MATCH ? ORDER BY bm25(lexical, ${BM25_WEIGHTS}) LIMIT ?`).pluck(),
  };
}

/**
 * Rowids of the `limit` best chunks for `terms` (tokens.ts queryTerms): those with every term
 * first, then those with any, each group by BM25, best first.
 */
export function rankLexical(db: Database, terms: readonly string[], scope: Scope, limit: number, tuning: LexicalTuning = {}): number[] {
  const { budget = CANDIDATE_BUDGET, directPostings = DIRECT_POSTINGS } = tuning;
  const statements = prepared.get(db) ?? readStatements(db);
  prepared.set(db, statements);
  const totals = new Map(statements.totals.all() as Array<[string, string]>);
  const rows = Number(totals.get('lexical_rows') ?? 0);
  if (rows === 0) return [];
  const avgLength = Number(totals.get('lexical_tokens') ?? 0) / rows || 1;

  const counts = new Map<string, number>();
  for (const term of terms) counts.set(stem(term), (counts.get(stem(term)) ?? 0) + 1);
  const query: QueryTerm[] = [];
  for (const [term, count] of counts) {
    const found = statements.vocab.get(term) as [number, number] | undefined;
    if (found && found[1] > 0) query.push({ term, id: found[0], df: found[1], count, idf: idf(rows, found[1]) });
  }
  if (query.length === 0) return [];

  const match = (expression: string, max: number): number[] =>
    (scope.sql === ''
      ? statements.match.all(expression, max)
      : db
          .prepare(`SELECT lexical.rowid FROM lexical JOIN chunks c ON c.rowid = lexical.rowid WHERE lexical MATCH ? ${scope.sql} LIMIT ?`)
          .pluck()
          .all(expression, ...scope.params, max)) as number[];
  const best = (expression: string, max: number): number[] =>
    (scope.sql === ''
      ? statements.best.all(expression, max)
      : db
          .prepare(
            `SELECT lexical.rowid FROM lexical JOIN chunks c ON c.rowid = lexical.rowid
             WHERE lexical MATCH ? ${scope.sql} ORDER BY bm25(lexical, ${BM25_WEIGHTS}) LIMIT ?`,
          )
          .pluck()
          .all(expression, ...scope.params, max)) as number[];
  const anyOf = (some: readonly QueryTerm[], repeated: boolean): string =>
    some.flatMap((term) => Array<string>(repeated ? term.count : 1).fill(quote(term.term))).join(' OR ');
  const everyTerm = counts.size > 1 && query.length === counts.size;

  if (query.reduce((sum, term) => sum + term.df, 0) <= directPostings) {
    // Each query term is a phrase of its own, as FTS5 scores it (a stem twice counts twice).
    const ranked = everyTerm ? best(query.flatMap((term) => Array<string>(term.count).fill(quote(term.term))).join(' AND '), limit) : [];
    if (ranked.length < limit) {
      const seen = new Set(ranked);
      for (const rowid of best(anyOf(query, true), limit + ranked.length)) {
        if (ranked.length >= limit) break;
        if (!seen.has(rowid)) ranked.push(rowid);
      }
    }
    return ranked;
  }

  const score = (rowids: readonly number[]): Scored[] => {
    if (rowids.length === 0) return [];
    const rowsRead = statements.terms.all(JSON.stringify(rowids)) as Array<[number, number, Buffer]>;
    return rowsRead
      .map(([rowid, length, blob]) => {
        let total = 0;
        for (const term of query) total += term.count * termScore(term.idf, frequencyOf(blob, term.id), length, avgLength);
        return { rowid, score: total };
      })
      .sort(byScore);
  };

  // 1. Every term (only when the query has several, and each is indexed: else no chunk has all).
  let all: Scored[] = [];
  if (everyTerm) {
    const expression = query.map((term) => quote(term.term)).join(' AND ');
    const listed = match(expression, budget + 1);
    all = score(listed.length > budget ? best(expression, limit) : listed);
    if (all.length >= limit) return all.slice(0, limit).map((entry) => entry.rowid);
  }
  const taken = new Set(all.map((entry) => entry.rowid));
  const needed = limit - all.length;

  // 2. Any term: the rare ones list the candidates; the common ones can only add to their scores.
  const byRarity = [...query].sort((a, b) => a.df - b.df);
  const rare: QueryTerm[] = [];
  let listedRows = 0;
  for (const term of byRarity) {
    if (listedRows + term.df > budget) break;
    rare.push(term);
    listedRows += term.df;
  }
  const common = byRarity.slice(rare.length);
  let others = rare.length > 0 ? score(match(anyOf(rare, false), budget).filter((rowid) => !taken.has(rowid))) : [];
  if (common.length > 0) {
    const ceiling = common.reduce((sum, term) => sum + term.count * upperBound(term.idf), 0);
    if (others.length < needed || others[needed - 1]!.score <= ceiling) {
      // Chunks with common terms only: FTS5 ranks them with the same formula (each stem once per
      // query term, as here), then they are scored here like the rest.
      const expression = rare.length > 0 ? `(${anyOf(common, true)}) NOT (${anyOf(rare, false)})` : anyOf(common, true);
      const more = best(expression, needed + taken.size).filter((rowid) => !taken.has(rowid));
      others = [...others, ...score(more)].sort(byScore);
    }
  }
  return [...all, ...others.slice(0, needed)].map((entry) => entry.rowid);
}

function byScore(a: Scored, b: Scored): number {
  return b.score - a.score || a.rowid - b.rowid;
}

function quote(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}
