/**
 * The embedded store: one SQLite database per tree and embedder (better-sqlite3), with FTS5 for
 * the lexical channel, a name table for the symbol channel and, for a provider's embedder, the
 * vectors as BLOBs searched exactly. Why SQLite: ARCHITECTURE.md, "The local index".
 *
 *   meta(key, value)                          format, tree, embedder, dimension
 *   chunks(rowid, id, path, …, traits, …, text, vector)  one row per chunk; index on path; traits: what ranking
 *                                           reads of the text (tokens.ts chunkTraits), so it ranks without the text
 * lexical FTS5(name, scope, doc, path, body) code-aware tokens (tokens.ts), stemmed (bm25.ts), contentless, rowid =
 * chunks.rowid
 * lexical_terms(chunk, key, length, terms) each chunk's tie-break key, weighted term frequencies and length
 * (sqlite-lexical.ts)
 *   lexical_vocab(id, term, df)               each term's id and document frequency
 *   symbols(term, chunk)                      every name a definition answers to (tokens.ts symbolTerms)
 *
 * A run writes in one transaction (BEGIN IMMEDIATE at its first change, COMMIT in commit()), so
 * searches, other processes included, see the previous index until it commits, and a killed or
 * cancelled run leaves nothing behind (WAL mode: readers never wait for the writer). Two runs on
 * one tree take turns: the second waits for the write lock, polling without blocking the event
 * loop (better-sqlite3 is synchronous, and a busy timeout would stall the server), then replaces
 * the files it read, with the same content the first wrote. Memory stays small: rows go to SQLite
 * as they come, and searches read only the rows they rank.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { ChunkKind } from '../code/chunk.js';
import { CancelledError } from '../kernel/errors.js';
import { IndexError } from './errors.js';
import { queryForms } from './vocabulary.js';
import { MIN_PREFIX_CHARS, rankCandidates, rankDefinitions, type Candidate } from './fusion.js';
import { LEXICAL_SCHEMA, LexicalWriter, rankLexical, rowsInserter, scoreLexical } from './sqlite-lexical.js';
import { chunkTraits, symbolTerms } from './tokens.js';
import type { ChunkRecord, StoreHit, StoredChunk, StoreQuery, VectorStore } from './store.js';

/**
 * The layout and the meaning of its rows; a database in another one is rebuilt by the next
 * indexing run. 3: symbol names are qualified from the indexed directory's own name. 4: lexical
 * terms are stemmed before FTS5, with their frequencies kept for BM25 (sqlite-lexical.ts).
 * 6: lexical fields name and scope apart, keywords kept out of code only, an identifier's whole
 * term without its outer underscores (tokens.ts); each chunk's tie-break key (sqlite-lexical.ts).
 * 7: each chunk's ranking traits (tokens.ts chunkTraits) in its row, its text last but the vector.
 */
const FORMAT = 'faultline-sqlite-7';
/**
 * The format before: search still reads it, working the traits out from each candidate's text as
 * that version did (the same results, a little slower); the next indexing run rebuilds it whole.
 */
const TRAITLESS_FORMAT = 'faultline-sqlite-6';
/** The columns ranking reads of a chunk (alias `c`): not its text, which only hits need. */
const RANK_COLUMNS =
  'c.rowid, c.id, c.path, c.language, c.symbol, c.kind, c.start_line, c.end_line, c.hash, c.file_hash';
/** Per channel: enough candidates that fusion and fragment collapsing still fill `limit`. */
const CANDIDATES = 100;
/**
 * The lexical channel's: more, since tests and module code, which ranking lowers afterwards, can
 * fill its head (a test of killing a child process says kill, child and process more often than
 * Popen.kill does).
 */
const LEXICAL_CANDIDATES = 300;
/** Symbol matches read before ordering: a common name (`__init__`, `run`) has thousands. */
const SYMBOL_CANDIDATES = 2000;
/** How long a run waits for another run's write lock before giving up. */
const WRITE_LOCK_WAIT_MS = 10 * 60_000;
/**
 * A writing run's page cache, KiB (SQLite's default is 2 MB): its pages spilled to the file and
 * read back cost the standard library's run (22,000 chunks, 41 MB) ~0.15 s of CPU; 16, 32 and
 * 128 MiB measured alike. Memory is taken as pages are, and given back when the run closes.
 */
const WRITE_CACHE_KIB = 32 * 1024;

type Database = BetterSqlite3.Database;

let driver: typeof BetterSqlite3 | undefined;
/**
 * Where better-sqlite3's install built its addon, for the read connections: the driver would
 * otherwise find it through the `bindings` package, which loads two more modules and tries paths
 * that fail first (part of a fresh `faultline search`'s start-up). Undefined when it is not there:
 * then the driver looks for it as usual.
 */
let addonFile: string | undefined;
async function loadDriver(): Promise<typeof BetterSqlite3> {
  // Loaded on first use: the native module is not needed by commands that never touch an index.
  // better-sqlite3 is CommonJS: require() loads it without the ES module loader's pass over its
  // sources for named exports (part of a fresh `faultline search`'s start-up); the same module.
  if (!driver) {
    const require = createRequire(import.meta.url);
    driver = require('better-sqlite3') as typeof BetterSqlite3;
    const built = join(dirname(require.resolve('better-sqlite3')), '..', 'build', 'Release', 'better_sqlite3.node');
    addonFile = existsSync(built) ? built : undefined;
  }
  return driver;
}

/**
 * The driver and its addon as the plain search's bundle brings them (commands/plain-search-main.ts),
 * which spares it resolving and loading better-sqlite3's modules one by one.
 */
export function useDriver(bundled: typeof BetterSqlite3, addon: string): void {
  driver = bundled;
  addonFile = addon;
}

/** Open read connections by file: a warm server answers from SQLite's page cache. */
const readers = new Map<string, { db: Database; vectors?: CachedVectors; traitless?: boolean }>();
const MAX_READERS = 8;

interface CachedVectors {
  dataVersion: number;
  rowids: Float64Array;
  /** Rowid → its row of the matrix. */
  indexOf: Map<number, number>;
  matrix: Float32Array;
  dimension: number;
}

/** The cosine of the query with one chunk's vector (both unit length); undefined when it has none. */
function cosineOf(vectors: CachedVectors, query: Float32Array, rowid: number): number | undefined {
  const index = vectors.indexOf.get(rowid);
  if (index === undefined || query.length !== vectors.dimension) return undefined;
  let score = 0;
  const base = index * vectors.dimension;
  for (let d = 0; d < vectors.dimension; d++) score += query[d]! * vectors.matrix[base + d]!;
  return score;
}

export interface LocalStoreIdentity {
  tree: string;
  embedder: string;
  /** Whether this embedder's vectors are kept (not for the local hashed embedder). */
  vectors: boolean;
}

interface ChunkRow {
  rowid: number;
  id: string;
  path: string;
  language: string;
  symbol: string;
  kind: string;
  start_line: number;
  end_line: number;
  hash: string;
  file_hash: string;
  /** Read for ranking; absent in a TRAITLESS_FORMAT index, whose rows give `text` instead. */
  traits?: number;
  text?: string;
}

export class SqliteStore implements VectorStore {
  readonly description: string;
  readonly wantsVectors: boolean;
  private writer: Database | undefined;
  private statements: ReturnType<typeof writeStatements> | undefined;
  private lexical: LexicalWriter | undefined;
  private dimensionSeen: number | undefined;

  private constructor(
    private readonly file: string,
    private readonly identity: LocalStoreIdentity,
    private readonly Driver: typeof BetterSqlite3,
  ) {
    this.description = `local index ${file}`;
    this.wantsVectors = identity.vectors;
    this.treeName = basename(identity.tree);
    this.termsTreeName = this.treeName;
  }

  readonly termsTreeName: string;

  /** The indexed directory's own name, the first segment of every module path (see symbolTerms). */
  private readonly treeName: string;

  /**
   * `signal`: stops a run waiting for another run's write lock (an indexing run's cancellation).
   * `onWaiting`: told once when the run starts waiting for that lock.
   */
  static async open(
    file: string,
    identity: LocalStoreIdentity,
    signal?: AbortSignal,
    onWaiting?: (file: string) => void,
  ): Promise<SqliteStore> {
    const store = new SqliteStore(file, identity, await loadDriver());
    store.signal = signal;
    store.onWaiting = onWaiting;
    return store;
  }

  private signal: AbortSignal | undefined;
  private onWaiting: ((file: string) => void) | undefined;

  /** Says once that this run waits for another run's write lock. */
  private waiting(): void {
    this.onWaiting?.(this.file);
    this.onWaiting = undefined;
  }

  static exists(file: string): boolean {
    return existsSync(file);
  }

  /**
   * Whether the database holds a committed index: a first run that was cancelled, failed or has
   * not committed yet leaves a file without one. A damaged database counts (search reports it,
   * the next run rebuilds it).
   */
  committed(): boolean {
    try {
      return this.reader() !== undefined;
    } catch (error) {
      if (error instanceof DamagedIndex) return true;
      throw error;
    }
  }

  async dimension(): Promise<number | undefined> {
    const db = this.readerUnlessDamaged();
    if (!db) return undefined;
    const row = db.prepare("SELECT value FROM meta WHERE key = 'dimension'").get() as { value: string } | undefined;
    return row ? Number(row.value) : undefined;
  }

  async fileHashes(): Promise<Map<string, string>> {
    const db = this.readerUnlessDamaged();
    const hashes = new Map<string, string>();
    if (!db) return hashes;
    for (const row of db
      .prepare('SELECT path, min(file_hash) AS low, max(file_hash) AS high FROM chunks GROUP BY path')
      .iterate()) {
      const { path, low, high } = row as { path: string; low: string; high: string };
      hashes.set(path, low === high ? low : '');
    }
    return hashes;
  }

  async replaceFile(path: string, chunks: readonly StoredChunk[]): Promise<void> {
    const db = await this.openWriter();
    const { existing, deleteSymbols, deleteChunks, insertChunk, insertSymbols } = (this.statements ??=
      writeStatements(db));
    const lexical = (this.lexical ??= new LexicalWriter(db));
    const rowids = existing.all(path) as number[];
    for (const rowid of rowids) lexical.remove(rowid);
    if (rowids.length > 0) {
      deleteSymbols.run(path);
      deleteChunks.run(path);
    }
    // A chunk id is path, symbol and content: a repeat within the file is the same chunk again.
    const seen = new Set<string>();
    /** The file's symbol rows, flattened (term, rowid, term, rowid, …): written a few statements a file. */
    const symbols: Array<string | number> = [];
    for (const chunk of chunks) {
      if (seen.has(chunk.id)) continue;
      seen.add(chunk.id);
      let vector: Buffer | null = null;
      if (this.wantsVectors && chunk.vector) {
        this.checkDimension(db, chunk.vector.length);
        vector = Buffer.from(chunk.vector.buffer, chunk.vector.byteOffset, chunk.vector.byteLength);
      }
      const { lastInsertRowid } = insertChunk.run(
        chunk.id,
        chunk.path,
        chunk.language,
        chunk.symbol,
        chunk.kind,
        chunk.startLine,
        chunk.endLine,
        chunk.terms?.traits ?? chunkTraits(chunk),
        chunk.hash,
        chunk.fileHash,
        chunk.text,
        vector,
      );
      // Rowids grow: FTS5 keeps the terms of a transaction in memory only while they do.
      const rowid = Number(lastInsertRowid);
      lexical.add(rowid, chunk);
      for (const term of chunk.terms?.symbols ?? symbolTerms(chunk, this.treeName)) symbols.push(term, rowid);
    }
    insertSymbols(symbols);
  }

  async commit(): Promise<void> {
    const db = this.writer;
    if (!db) return;
    this.writer = undefined;
    this.statements = undefined;
    const lexical = this.lexical;
    this.lexical = undefined;
    try {
      lexical?.finish();
      db.exec('COMMIT');
    } finally {
      db.close();
    }
  }

  /** Gives up this run's uncommitted changes (cancelled or failed runs). */
  rollback(): void {
    const db = this.writer;
    if (!db) return;
    this.writer = undefined;
    this.statements = undefined;
    this.lexical = undefined;
    try {
      if (db.inTransaction) db.exec('ROLLBACK');
    } finally {
      db.close();
    }
  }

  async count(): Promise<number> {
    const db = this.reader();
    return db ? (db.prepare('SELECT count(*) FROM chunks').pluck().get() as number) : 0;
  }

  async search(query: StoreQuery, limit: number, within?: readonly string[]): Promise<StoreHit[]> {
    const db = this.reader();
    if (!db) return [];
    const scope = withinClause(within);
    const candidates = new Map<number, Candidate>();
    const traitless = readers.get(this.file)?.traitless === true;
    const columns = `${RANK_COLUMNS}, ${traitless ? 'c.text' : 'c.traits'}`;

    if (query.symbol !== undefined) {
      const symbol = query.symbol;
      const rows = db
        .prepare(
          `SELECT ${columns}, s.term = ? AS exact FROM symbols s JOIN chunks c ON c.rowid = s.chunk
           WHERE s.term >= ? AND s.term < ? ${scope.sql} ORDER BY exact DESC, length(s.term), c.id LIMIT ?`,
        )
        .all(symbol, symbol, `${symbol}\uffff`, ...scope.params, SYMBOL_CANDIDATES) as Array<
        ChunkRow & { exact: number }
      >;
      const ranked = rankDefinitions(
        rows.map((row) => ({ chunk: toRecord(row), rowid: row.rowid, exact: row.exact === 1 })),
        query.symbolText ?? symbol,
      ).slice(0, CANDIDATES);
      let exactRank = 0;
      let prefixRank = 0;
      for (const { chunk, rowid, exact } of ranked) {
        if (!exact && symbol.length < MIN_PREFIX_CHARS) continue;
        candidates.set(rowid, {
          chunk,
          lexical: 0,
          ...(exact ? { exactRank: exactRank++ } : { prefixRank: prefixRank++ }),
        });
      }
    }

    const lexical = new Map<number, number>();
    for (const { rowid, score } of rankLexical(db, query.concepts, scope, LEXICAL_CANDIDATES))
      lexical.set(rowid, score);
    const vectors = query.vector !== undefined && this.wantsVectors ? this.vectors(db) : undefined;
    const cosines = new Map<number, number>();
    if (vectors && query.vector)
      for (const { rowid, score } of this.nearest(db, vectors, query.vector, CANDIDATES, within))
        cosines.set(rowid, score);

    // Every candidate gets every channel's score, whichever channel found it.
    const found = [...new Set([...candidates.keys(), ...lexical.keys(), ...cosines.keys()])];
    const records = new Map(
      chunksByRowid(
        db,
        columns,
        found.filter((rowid) => !candidates.has(rowid)),
      ).map((record) => [record.rowid, record.chunk]),
    );
    const missingLexical = found.filter((rowid) => !lexical.has(rowid));
    for (const [rowid, score] of scoreLexical(db, query.concepts, missingLexical)) lexical.set(rowid, score);
    const hits = rankCandidates(
      found.flatMap((rowid) => {
        const candidate =
          candidates.get(rowid) ?? (records.has(rowid) ? { chunk: records.get(rowid)!, lexical: 0 } : undefined);
        if (!candidate) return [];
        const cosine =
          vectors && query.vector ? (cosines.get(rowid) ?? cosineOf(vectors, query.vector, rowid)) : undefined;
        return [{ ...candidate, lexical: lexical.get(rowid) ?? 0, cosine }];
      }),
      {
        limit,
        symbol: query.symbol,
        operations: query.operations,
        action: query.action,
        forms: queryForms(query.concepts),
      },
    );
    return traitless ? hits : withTexts(db, hits);
  }

  /** The `limit` vectors closest to `query`, with their cosine (exact: every vector is compared). */
  private nearest(
    db: Database,
    vectors: CachedVectors,
    query: Float32Array,
    limit: number,
    within: readonly string[] | undefined,
  ): Array<{ rowid: number; score: number }> {
    if (query.length !== vectors.dimension) {
      throw new IndexError(
        `the query vector has dimension ${query.length} but the index at ${this.file} ` +
          `has dimension ${vectors.dimension}`,
      );
    }
    const allowed =
      within === undefined
        ? undefined
        : new Set(
            db
              .prepare(`SELECT rowid FROM chunks c WHERE 1 ${withinClause(within).sql}`)
              .pluck()
              .all(...withinClause(within).params) as number[],
          );
    const best: Array<{ rowid: number; score: number }> = [];
    const { rowids, matrix, dimension } = vectors;
    for (let index = 0; index < rowids.length; index++) {
      const rowid = rowids[index]!;
      if (allowed && !allowed.has(rowid)) continue;
      let score = 0;
      const base = index * dimension;
      for (let d = 0; d < dimension; d++) score += query[d]! * matrix[base + d]!;
      if (best.length === limit && score <= best[best.length - 1]!.score) continue;
      let at = best.length;
      while (at > 0 && best[at - 1]!.score < score) at--;
      best.splice(at, 0, { rowid, score });
      if (best.length > limit) best.pop();
    }
    return best;
  }

  /** Every vector of the index, cached per connection until another commit changes the database. */
  private vectors(db: Database): CachedVectors | undefined {
    const cached = readers.get(this.file);
    const dataVersion = db.pragma('data_version', { simple: true }) as number;
    if (cached?.vectors && cached.vectors.dataVersion === dataVersion) return cached.vectors;
    const rows = db.prepare('SELECT rowid, vector FROM chunks WHERE vector IS NOT NULL').raw().all() as Array<
      [number, Buffer]
    >;
    if (rows.length === 0) return undefined;
    const dimension = rows[0]![1].byteLength / 4;
    const rowids = new Float64Array(rows.length);
    const indexOf = new Map<number, number>();
    const matrix = new Float32Array(rows.length * dimension);
    rows.forEach(([rowid, blob], index) => {
      rowids[index] = rowid;
      indexOf.set(rowid, index);
      matrix.set(new Float32Array(blob.buffer, blob.byteOffset, dimension), index * dimension);
    });
    const vectors = { dataVersion, rowids, indexOf, matrix, dimension };
    if (cached) cached.vectors = vectors;
    return vectors;
  }

  private checkDimension(db: Database, length: number): void {
    if (this.dimensionSeen === undefined) {
      const row = db.prepare("SELECT value FROM meta WHERE key = 'dimension'").pluck().get() as string | undefined;
      if (row === undefined) db.prepare("INSERT INTO meta (key, value) VALUES ('dimension', ?)").run(String(length));
      this.dimensionSeen = row === undefined ? length : Number(row);
    }
    if (length !== this.dimensionSeen) {
      throw new IndexError(
        `the vectors have dimension ${length} but the index at ${this.file} has dimension ${this.dimensionSeen}; ` +
          'it was built with another embedding model or dimension',
      );
    }
  }

  /**
   * For indexing: a damaged database reads as empty, and the writer rebuilds it; so does one in
   * TRAITLESS_FORMAT, which search reads but a run does not add to.
   */
  private readerUnlessDamaged(): Database | undefined {
    try {
      const db = this.reader();
      return readers.get(this.file)?.traitless ? undefined : db;
    } catch (error) {
      if (error instanceof DamagedIndex) return undefined;
      throw error;
    }
  }

  /** The cached read connection, or none when the database does not exist yet. */
  private reader(): Database | undefined {
    const cached = readers.get(this.file);
    if (cached) {
      readers.delete(this.file);
      readers.set(this.file, cached);
      return cached.db;
    }
    if (!existsSync(this.file)) return undefined;
    let db: Database;
    let traitless = false;
    try {
      db = new this.Driver(this.file, {
        readonly: true,
        fileMustExist: true,
        ...(addonFile ? { nativeBinding: addonFile } : {}),
      });
    } catch (error) {
      throw this.damaged(error);
    }
    try {
      // A first run that has not committed yet: no index so far.
      if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'meta'").get() === undefined) {
        db.close();
        return undefined;
      }
      const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get();
      traitless = format === TRAITLESS_FORMAT;
      if (format !== FORMAT && !traitless) {
        throw typeof format === 'string' && format.startsWith('faultline-sqlite-')
          ? new DamagedIndex(
              `the index of ${this.identity.tree} was built by another version ` +
                `of faultline (${format}, this one reads ${FORMAT}); index it again`,
              this.identity.tree,
            )
          : new Error(`unknown format ${String(format)}`);
      }
    } catch (error) {
      if (error instanceof DamagedIndex) {
        // Built by another version: indexing rebuilds it (readerUnlessDamaged), search says so.
        db.close();
        throw error;
      }
      db.close();
      throw this.damaged(error);
    }
    readers.set(this.file, { db, traitless });
    while (readers.size > MAX_READERS) {
      const [oldest, entry] = readers.entries().next().value!;
      readers.delete(oldest);
      entry.db.close();
    }
    return db;
  }

  private damaged(error: unknown): IndexError {
    const why = error instanceof Error ? error.message : String(error);
    return new DamagedIndex(
      `the index of ${this.identity.tree} at ${this.file} is damaged (${why}); rebuild it by indexing again`,
      this.identity.tree,
    );
  }

  /** The write connection of this run, in its transaction (taken when another run's ends). */
  private async openWriter(): Promise<Database> {
    if (this.writer) return this.writer;
    try {
      return await this.openWriterOnce();
    } catch (error) {
      // A damaged database (not a SQLite file, corrupt, another format) is rebuilt from scratch.
      if (!(error instanceof DamagedIndex)) throw error;
      closeReader(this.file);
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${this.file}${suffix}`, { force: true });
      return this.openWriterOnce();
    }
  }

  private async openWriterOnce(): Promise<Database> {
    mkdirSync(dirname(this.file), { recursive: true });
    let db: Database | undefined;
    // Always the write-ahead log, a new database's first run too: under a rollback journal (each
    // page written once, not twice) a reader in another process waited out its busy timeout on the
    // run's locks, synchronously, and a killed run's hot journal, which a read-only connection
    // cannot roll back, read as a damaged index until the next run.
    try {
      db = new this.Driver(this.file);
      db.pragma('busy_timeout = 0');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Fewer of the run's changed pages spill to the file before its commit and are read back.
      db.pragma(`cache_size = -${WRITE_CACHE_KIB}`);
    } catch (error) {
      db?.close();
      if (isBusy(error)) return this.waitThenOpenWriter();
      if (error instanceof IndexError) throw error;
      throw this.damaged(error);
    }
    const deadline = Date.now() + WRITE_LOCK_WAIT_MS;
    for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
      try {
        db.exec('BEGIN IMMEDIATE');
        break;
      } catch (error) {
        if (!isBusy(error)) {
          db.close();
          throw this.damaged(error);
        }
        if (Date.now() > deadline) {
          db.close();
          throw new IndexError(
            `${this.file} stayed locked by another indexing run for ${WRITE_LOCK_WAIT_MS / 60_000} minutes`,
          );
        }
        if (this.signal?.aborted) {
          db.close();
          throw new CancelledError('indexing was cancelled');
        }
        this.waiting();
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    try {
      this.createSchema(db);
    } catch (error) {
      db.exec('ROLLBACK');
      db.close();
      throw this.damaged(error);
    }
    this.writer = db;
    return db;
  }

  private async waitThenOpenWriter(): Promise<Database> {
    this.waiting();
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (this.signal?.aborted) throw new CancelledError('indexing was cancelled');
    return this.openWriterOnce();
  }

  private createSchema(db: Database): void {
    const format = (() => {
      try {
        return db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get();
      } catch {
        return undefined;
      }
    })();
    if (format === FORMAT) return;
    if (format !== undefined) throw new Error(`unknown format ${String(format)}`);
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE chunks (
        rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL, language TEXT NOT NULL,
        symbol TEXT NOT NULL, kind TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        traits INTEGER NOT NULL, hash TEXT NOT NULL, file_hash TEXT NOT NULL, text TEXT NOT NULL, vector BLOB);
      CREATE INDEX chunks_path ON chunks (path);
      ${LEXICAL_SCHEMA}
      CREATE TABLE symbols (term TEXT NOT NULL, chunk INTEGER NOT NULL, PRIMARY KEY (term, chunk)) WITHOUT ROWID;
      CREATE INDEX symbols_chunk ON symbols (chunk);
    `);
    const insert = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    insert.run('format', FORMAT);
    insert.run('tree', this.identity.tree);
    insert.run('embedder', this.identity.embedder);
  }
}

class DamagedIndex extends IndexError {}

/** The statements a run repeats for every file, prepared once. */
function writeStatements(db: Database) {
  return {
    existing: db.prepare('SELECT rowid FROM chunks WHERE path = ?').pluck(),
    deleteSymbols: db.prepare('DELETE FROM symbols WHERE chunk IN (SELECT rowid FROM chunks WHERE path = ?)'),
    deleteChunks: db.prepare('DELETE FROM chunks WHERE path = ?'),
    insertChunk: db.prepare(
      'INSERT INTO chunks (id, path, language, symbol, kind, start_line, end_line, traits, hash, file_hash, text, ' +
        'vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    insertSymbols: rowsInserter(db, 'INSERT OR IGNORE INTO symbols (term, chunk)', 2),
  };
}

function closeReader(file: string): void {
  readers.get(file)?.db.close();
  readers.delete(file);
}

/** Closes every cached read connection (tests, and a server shutting down). */
export function closeReaders(): void {
  for (const { db } of readers.values()) db.close();
  readers.clear();
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === 'SQLITE_BUSY_SNAPSHOT';
}

/** `AND (substr(c.path, 1, n) = 'dir/' OR …)`: chunks under some directories ('' holds all), case-sensitively. */
function withinClause(within: readonly string[] | undefined): { sql: string; params: Array<string | number> } {
  if (within === undefined || within.includes('')) return { sql: '', params: [] };
  if (within.length === 0) return { sql: 'AND 0', params: [] };
  return {
    sql: `AND (${within.map(() => 'substr(c.path, 1, ?) = ?').join(' OR ')})`,
    params: within.flatMap((dir) => [dir.length + 1, `${dir}/`]),
  };
}

/** The chunks of `rowids`, read in one statement: `columns` of each (RANK_COLUMNS and more). */
function chunksByRowid(
  db: Database,
  columns: string,
  rowids: readonly number[],
): Array<{ rowid: number; chunk: ChunkRecord }> {
  if (rowids.length === 0) return [];
  const rows = db
    .prepare(`SELECT ${columns} FROM chunks c WHERE c.rowid IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(rowids)) as ChunkRow[];
  return rows.map((row) => ({ rowid: row.rowid, chunk: toRecord(row) }));
}

/** The hits with their chunks' text, read for them alone (ranking read none). */
function withTexts(db: Database, hits: StoreHit[]): StoreHit[] {
  if (hits.length === 0) return hits;
  const texts = new Map(
    db
      .prepare('SELECT id, text FROM chunks WHERE id IN (SELECT value FROM json_each(?))')
      .raw()
      .all(JSON.stringify(hits.map((hit) => hit.chunk.id))) as Array<[string, string]>,
  );
  return hits.map((hit) => ({ ...hit, chunk: { ...hit.chunk, text: texts.get(hit.chunk.id) ?? '' } }));
}

/** A row as ranking takes it: its stored traits and no text yet, or (TRAITLESS_FORMAT) its text and traits from it. */
function toRecord(row: ChunkRow): ChunkRecord {
  const text = row.text ?? '';
  return {
    id: row.id,
    path: row.path,
    language: row.language,
    symbol: row.symbol,
    kind: row.kind as ChunkKind,
    startLine: row.start_line,
    endLine: row.end_line,
    text,
    hash: row.hash,
    fileHash: row.file_hash,
    traits:
      row.traits ?? chunkTraits({ kind: row.kind as ChunkKind, text, language: row.language, symbol: row.symbol }),
  };
}

/** Removes an index in the format before SQLite (and its lock), so that it is rebuilt once. */
export function removeLegacyIndex(file: string): boolean {
  if (!existsSync(file)) return false;
  rmSync(file, { force: true });
  rmSync(`${file}.lock`, { force: true, recursive: true });
  return true;
}
