/**
 * The lexical channel of the SQLite store: which chunks FTS5 matches, scored by bm25.ts
 * conceptScore over a few candidates only.
 *
 * Why not always `ORDER BY bm25(lexical)`: FTS5 scores every row a MATCH yields, and first counts
 * each query term's rows to get its IDF, walking the term's whole posting list. A common term
 * ("read", "data"; in bench/index.ts's synthetic store every term is in a third of the chunks)
 * makes both cost the size of the store: 100 ms at 100,000 chunks. So the store keeps, next to the
 * FTS5 table, each chunk's term frequencies and length (`lexical_terms`) and each term's document
 * frequency (`lexical_vocab`), and scores candidates here. A concept's forms (vocabulary.ts) are
 * terms of their own to FTS5; here a concept counts once.
 *
 * - When the query's terms have few postings between them (DIRECT_POSTINGS), FTS5's bm25()
 *   picks the candidates: its best hold the best by conceptScore (the same sum of term scores,
 *   without the concepts' weights and ceilings), with room to spare.
 * - Otherwise the query's rarest terms, as many as have CANDIDATE_BUDGET chunks between them,
 *   list their chunks whole (MaxScore, Turtle & Flood 1995), each scored on every term. A chunk
 *   holding none of them holds only common terms and scores at most what those can add; when the
 *   candidates needed all score above that, none of those chunks can enter and the ranking is
 *   exact. Otherwise FTS5 ranks the chunks with only common terms (`common NOT rare`) and its
 *   best join the candidates.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { CodeChunk } from '../code/chunk.js';
import { byCodeUnits } from '../order.js';
import {
  conceptScorer,
  encodeTermKeys,
  FIELD_WEIGHTS,
  idf,
  K1,
  PREFIX_MIN_EXTRA,
  PREFIX_WEIGHT,
  stemmedTerms,
  termIds,
  termKey,
  upperBound,
  type ScoringConcept,
} from './bm25.js';
import type { ChunkTerms } from './prepare-file.js';
import { lexicalTokens } from './tokens.js';
import type { QueryConcept } from './vocabulary.js';

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
/** The most names run on from one word (vocabulary.ts QueryConcept.prefix) a query takes, the most frequent first. */
const MAX_PREFIXED_TERMS = 32;

/** Tables of the lexical channel (created with the store's schema). */
export const LEXICAL_SCHEMA = `
  CREATE VIRTUAL TABLE lexical USING fts5(name, scope, doc, path, body, content='', contentless_delete=1,
    tokenize="ascii tokenchars '_'");
  CREATE TABLE lexical_vocab (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL);
  CREATE TABLE lexical_terms (chunk INTEGER PRIMARY KEY, key INTEGER NOT NULL, length INTEGER NOT NULL, terms BLOB NOT NULL);
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
      insertFts: db.prepare('INSERT INTO lexical (rowid, name, scope, doc, path, body) VALUES (?, ?, ?, ?, ?, ?)'),
      deleteFts: db.prepare('DELETE FROM lexical WHERE rowid = ?'),
      selectTerms: db.prepare('SELECT terms FROM lexical_terms WHERE chunk = ?').pluck(),
      insertChunkTerms: db.prepare('INSERT INTO lexical_terms (chunk, key, length, terms) VALUES (?, ?, ?, ?)'),
      deleteTerms: db.prepare('DELETE FROM lexical_terms WHERE chunk = ?'),
      vocabId: db.prepare('SELECT id FROM lexical_vocab WHERE term = ?').pluck(),
      insertTerms: rowsInserter(db, 'INSERT INTO lexical_vocab (id, term, df)', 3),
      changeDf: db.prepare('UPDATE lexical_vocab SET df = df + ? WHERE id = ?'),
      dropUnused: db.prepare('DELETE FROM lexical_vocab WHERE id = ? AND df <= 0'),
      totals: db.prepare('SELECT count(*), total(length) FROM lexical_terms').raw(),
      setMeta: db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
    };
    const highest = db.prepare('SELECT max(id) FROM lexical_vocab').pluck().get() as number | null;
    this.nextId = this.firstNewId = (highest ?? 0) + 1;
    this.vocabularyWasEmpty = highest === null;
  }

  /** `chunk.terms`: its terms as prepared off this thread (prepare-file.ts), else worked out here. */
  add(rowid: number, chunk: Pick<CodeChunk, 'path' | 'symbol' | 'text'> & { id: string; terms?: ChunkTerms }): void {
    const { stemmed, length, weights } = chunk.terms ?? stemmedTerms(lexicalTokens(chunk));
    this.statements.insertFts.run(rowid, stemmed.name, stemmed.scope, stemmed.doc, stemmed.path, stemmed.body);
    const keys = new Float64Array(weights.size);
    let at = 0;
    for (const [term, weight] of weights) {
      const id = this.idOf(term);
      keys[at++] = termKey(id, weight);
      this.changeDf(id, 1);
    }
    this.statements.insertChunkTerms.run(rowid, tieKey(chunk.id), length, encodeTermKeys(keys));
  }

  remove(rowid: number): void {
    const terms = this.statements.selectTerms.get(rowid) as Buffer | undefined;
    if (terms) for (const id of termIds(terms)) this.changeDf(id, -1);
    this.statements.deleteTerms.run(rowid);
    this.statements.deleteFts.run(rowid);
  }

  /** Writes the vocabulary's changes and the store's totals (call before COMMIT). */
  finish(): void {
    const added: Array<string | number> = [];
    for (let id = 1; id < this.dfChanges.length; id++) {
      const change = this.dfChanges[id]!;
      if (id >= this.firstNewId) {
        if (change > 0) added.push(id, this.newTerms[id - this.firstNewId]!, change);
        continue;
      }
      if (change === 0) continue;
      this.statements.changeDf.run(change, id);
      if (change < 0) this.statements.dropUnused.run(id);
    }
    this.statements.insertTerms(added);
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

/** Rows in each statement of a rowsInserter (SQLite allows 32,766 variables a statement). */
const ROWS_PER_INSERT = 64;

/**
 * `insert` ("INSERT INTO t (a, b)") as a function of rows given flattened, `columns` values a row,
 * run as statements of up to ROWS_PER_INSERT rows, each size prepared once: the same rows in the
 * same order as a statement a row, without a call per row (a symbol's or a term's row is a few
 * bytes, and the call around it cost more than the insert).
 */
export function rowsInserter(
  db: Database,
  insert: string,
  columns: number,
): (values: ReadonlyArray<string | number>) => void {
  const statements = new Map<number, BetterSqlite3.Statement>();
  const row = `(${new Array<string>(columns).fill('?').join(', ')})`;
  const statement = (rows: number): BetterSqlite3.Statement => {
    let prepared = statements.get(rows);
    if (!prepared) {
      prepared = db.prepare(`${insert} VALUES ${new Array<string>(rows).fill(row).join(', ')}`);
      statements.set(rows, prepared);
    }
    return prepared;
  };
  const most = ROWS_PER_INSERT * columns;
  return (values) => {
    for (let start = 0; start < values.length; start += most) {
      const part = start === 0 && values.length <= most ? values : values.slice(start, start + most);
      statement(part.length / columns).run(part);
    }
  };
}

/** For tests: where the ways of ranking part (the defaults: DIRECT_POSTINGS, CANDIDATE_BUDGET). */
export interface LexicalTuning {
  directPostings?: number;
  budget?: number;
}

/** A chunk and its lexical score (bm25.ts conceptScore: in [0, 1)). */
export interface ScoredRow {
  rowid: number;
  score: number;
  /** Decides between equal scores (tieKey). */
  key: number;
}

/**
 * The order of chunks with equal scores: 52 bits of the chunk's id (a hash of its path, symbol
 * and text), so a tree indexed afresh and one indexed run by run, whose rowids differ, rank the
 * same. (Rowids themselves stay in insertion order: FTS5 keeps a transaction's terms in memory
 * only while rowids grow.)
 */
export function tieKey(id: string): number {
  return Number.parseInt(id.replace(/-/g, '').slice(0, 13), 16);
}

/** A term of the index that some concept's form is, with the most it can add to a score. */
interface PostingTerm {
  term: string;
  id: number;
  df: number;
  bound: number;
}

/** The query against this store: its concepts by term id, and the terms that have chunks. */
interface Resolved {
  concepts: ScoringConcept[];
  totalCeiling: number;
  postings: PostingTerm[];
  /** bm25.ts conceptScore of a chunk's stored terms and length. */
  score: (terms: Uint8Array, length: number) => number;
}

/** Statements prepared once per read connection. */
const prepared = new WeakMap<Database, ReturnType<typeof readStatements>>();

function readStatements(db: Database) {
  return {
    totals: db.prepare("SELECT key, value FROM meta WHERE key IN ('lexical_rows', 'lexical_tokens')").raw(),
    vocab: db.prepare('SELECT id, df FROM lexical_vocab WHERE term = ?').raw(),
    prefixed: db
      .prepare(
        'SELECT term FROM lexical_vocab WHERE term >= ? AND term < ? AND ' +
          'length(term) >= ? AND df > 0 ORDER BY df DESC, term LIMIT ?',
      )
      .pluck(),
    terms: db
      .prepare('SELECT chunk, key, length, terms FROM lexical_terms WHERE chunk IN (SELECT value FROM json_each(?))')
      .raw(),
    match: db.prepare('SELECT rowid FROM lexical WHERE lexical MATCH ? LIMIT ?').pluck(),
    best: db
      .prepare(`SELECT rowid, bm25(lexical, ${BM25_WEIGHTS}) FROM lexical WHERE lexical MATCH ? ORDER BY 2 LIMIT ?`)
      .raw(),
  };
}

function statementsOf(db: Database): ReturnType<typeof readStatements> {
  let statements = prepared.get(db);
  if (!statements) prepared.set(db, (statements = readStatements(db)));
  return statements;
}

/** Looks the concepts' forms up in the store's vocabulary; undefined when the store holds no chunk. */
function resolve(db: Database, concepts: readonly QueryConcept[]): Resolved | undefined {
  const statements = statementsOf(db);
  const totals = new Map(statements.totals.all() as Array<[string, string]>);
  const rows = Number(totals.get('lexical_rows') ?? 0);
  if (rows === 0) return undefined;
  const avgLength = Number(totals.get('lexical_tokens') ?? 0) / rows || 1;
  const known = new Map<string, { id: number; df: number } | undefined>();
  const lookUp = (term: string): { id: number; df: number } | undefined => {
    if (!known.has(term)) {
      const found = statements.vocab.get(term) as [number, number] | undefined;
      known.set(term, found && found[1] > 0 ? { id: found[0], df: found[1] } : undefined);
    }
    return known.get(term);
  };
  const postings = new Map<string, PostingTerm>();
  const scoring: ScoringConcept[] = concepts.map((concept) => {
    const word = lookUp(concept.variants[0]!.term);
    // A word no chunk holds still weighs in: the score says how much of the query was found.
    const ceiling = concept.weight * idf(rows, word?.df ?? 0) * (K1 + 1);
    const variants: ScoringConcept['variants'] = [];
    const forms = [...concept.variants];
    if (concept.prefix !== undefined) {
      const { prefix } = concept;
      const runOn = statements.prefixed.all(
        prefix,
        `${prefix}\uffff`,
        prefix.length + PREFIX_MIN_EXTRA,
        MAX_PREFIXED_TERMS,
      ) as string[];
      for (const term of runOn)
        if (!forms.some((form) => form.term === term)) forms.push({ term, weight: PREFIX_WEIGHT });
    }
    for (const { term, weight } of forms) {
      const found = lookUp(term);
      if (!found) continue;
      const termIdf = idf(rows, found.df);
      variants.push({ id: found.id, idf: termIdf, weight: weight * concept.weight });
      const bound = Math.min(ceiling, weight * concept.weight * upperBound(termIdf));
      const posting = postings.get(term);
      if (!posting) postings.set(term, { term, id: found.id, df: found.df, bound });
      else posting.bound = Math.max(posting.bound, bound);
    }
    return { ceiling, variants };
  });
  const totalCeiling = scoring.reduce((sum, concept) => sum + concept.ceiling, 0);
  return {
    concepts: scoring,
    totalCeiling,
    postings: [...postings.values()],
    score: conceptScorer(scoring, avgLength, totalCeiling),
  };
}

/** The lexical scores of some chunks (found by another channel), by rowid; 0 for a chunk with none of the words. */
export function scoreLexical(
  db: Database,
  concepts: readonly QueryConcept[],
  rowids: readonly number[],
): Map<number, number> {
  const resolved = rowids.length > 0 ? resolve(db, concepts) : undefined;
  if (!resolved) return new Map();
  return new Map(scoreRows(db, resolved, rowids).map((row) => [row.rowid, row.score]));
}

function scoreRows(db: Database, resolved: Resolved, rowids: readonly number[]): ScoredRow[] {
  if (rowids.length === 0) return [];
  const rowsRead = statementsOf(db).terms.all(JSON.stringify(rowids)) as Array<[number, number, number, Buffer]>;
  return rowsRead.map(([rowid, key, length, blob]) => ({ rowid, key, score: resolved.score(blob, length) }));
}

/**
 * The `limit` chunks with the best lexical scores for the query's concepts (vocabulary.ts),
 * best first, with their scores; equal scores in tieKey order, so the same tree gives the same
 * order however it was indexed.
 */
export function rankLexical(
  db: Database,
  concepts: readonly QueryConcept[],
  scope: Scope,
  limit: number,
  tuning: LexicalTuning = {},
): ScoredRow[] {
  const { budget = CANDIDATE_BUDGET, directPostings = DIRECT_POSTINGS } = tuning;
  const resolved = resolve(db, concepts);
  if (!resolved || resolved.postings.length === 0) return [];
  const { postings } = resolved;
  const match = (expression: string, max: number): number[] =>
    (scope.sql === ''
      ? statementsOf(db).match.all(expression, max)
      : db
          .prepare(
            `SELECT lexical.rowid FROM lexical JOIN chunks c ON c.rowid = ` +
              `lexical.rowid WHERE lexical MATCH ? ${scope.sql} LIMIT ?`,
          )
          .pluck()
          .all(expression, ...scope.params, max)) as number[];
  const ranked = (expression: string, max: number): Array<[number, number]> =>
    (scope.sql === ''
      ? statementsOf(db).best.all(expression, max)
      : db
          .prepare(
            `SELECT lexical.rowid, bm25(lexical, ${BM25_WEIGHTS}) FROM lexical JOIN chunks c ON c.rowid = lexical.rowid
             WHERE lexical MATCH ? ${scope.sql} ORDER BY 2 LIMIT ?`,
          )
          .raw()
          .all(expression, ...scope.params, max)) as Array<[number, number]>;
  // FTS5's best `wanted`, and every chunk tied with the last of them: which of equal chunks a
  // LIMIT keeps follows rowids, and rowids follow the order files were indexed in.
  const best = (expression: string, wanted: number): number[] => {
    for (let max = wanted + 1; ; max *= 2) {
      const rows = ranked(expression, max);
      const boundary = rows[wanted - 1]?.[1];
      if (rows.length < max || rows[max - 1]![1] !== boundary) {
        return rows.filter((row, index) => index < wanted || row[1] === boundary).map(([rowid]) => rowid);
      }
    }
  };
  const anyOf = (some: readonly PostingTerm[]): string => some.map((term) => quote(term.term)).join(' OR ');
  const score = (rowids: readonly number[]): ScoredRow[] => scoreRows(db, resolved, rowids);
  // FTS5's bm25() sums the same term scores without the concepts' weights and ceilings: its best
  // chunks hold the best by conceptScore, with room to spare for the forms it weighs alike.
  const room = (wanted: number): number => Math.max(wanted * 3, wanted + 50);

  if (postings.reduce((sum, term) => sum + term.df, 0) <= directPostings) {
    return score(best(anyOf(postings), room(limit)))
      .sort(byScore)
      .slice(0, limit);
  }

  // The rare terms list their chunks whole; a chunk holding none of them holds only common
  // terms and scores at most `commonCeiling` (MaxScore, Turtle & Flood 1995). When the candidates
  // needed all score above that, no such chunk can enter and the ranking is exact; otherwise
  // FTS5 ranks the chunks with common terms only, and its best join the candidates.
  const byRarity = [...postings].sort((a, b) => a.df - b.df || byCodeUnits(a.term, b.term));
  const rare: PostingTerm[] = [];
  let listedRows = 0;
  for (const term of byRarity) {
    if (listedRows + term.df > budget) break;
    rare.push(term);
    listedRows += term.df;
  }
  const common = byRarity.slice(rare.length);
  let scored = rare.length > 0 ? score(match(anyOf(rare), budget)).sort(byScore) : [];
  const commonIds = new Set(common.map((term) => term.id));
  const commonCeiling =
    resolved.concepts.reduce((sum, concept) => {
      let most = 0;
      for (const variant of concept.variants) {
        if (commonIds.has(variant.id))
          most = Math.max(most, Math.min(concept.ceiling, variant.weight * upperBound(variant.idf)));
      }
      return sum + most;
    }, 0) / resolved.totalCeiling;
  if (common.length > 0 && (scored.length < limit || scored[limit - 1]!.score <= commonCeiling)) {
    const expression = rare.length > 0 ? `(${anyOf(common)}) NOT (${anyOf(rare)})` : anyOf(common);
    scored = [...scored, ...score(best(expression, room(limit)))].sort(byScore);
  }
  return scored.slice(0, limit);
}

function byScore(a: ScoredRow, b: ScoredRow): number {
  return b.score - a.score || a.key - b.key || a.rowid - b.rowid;
}

function quote(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}
