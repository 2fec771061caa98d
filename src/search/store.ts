/**
 * What the indexer and search need from a store, implemented by the local SQLite store
 * (sqlite-store.ts, the default) and Qdrant (qdrant-store.ts, when QDRANT_URL is set).
 *
 * A store holds the chunks of one tree for one embedder. Changes are per file: `replaceFile`
 * puts a file's new chunks in place of its old ones (none: the file is gone), and `commit` makes
 * them durable. Until the commit, searches see the previous index: the local store writes in one
 * SQLite transaction; Qdrant writes the new points before deleting the stale ones.
 *
 * Search is hybrid: a store finds candidates for a query's words (lexical), its identifier
 * (symbol) and its vector (embedding), and ranks them with one score (fusion.ts).
 */
import type { CodeChunk } from '../code/chunk.js';
import type { ChunkTerms } from './prepare-file.js';
import type { QueryConcept } from './vocabulary.js';

export interface StoredChunk extends CodeChunk {
  /** UUIDv5 of path, symbol and hash (chunkId). */
  id: string;
  /** SHA-256 of the chunking version and the whole file the chunk came from: what incremental indexing compares. */
  fileHash: string;
  /** Unit length; absent when the store keeps no vectors (`wantsVectors` false). */
  vector?: Float32Array | undefined;
  /** Its terms, prepared for a store that names `termsTreeName` (prepare-file.ts); else the store works them out. */
  terms?: ChunkTerms | undefined;
}

export type ChunkRecord = Omit<StoredChunk, 'vector'> & {
  /**
   * tokens.ts chunkTraits, as the store kept it from indexing; then `text` may be left empty until
   * the chunk is a hit (sqlite-store.ts). Undefined: ranking works them out from `text`.
   */
  traits?: number | undefined;
};

export interface StoreHit {
  chunk: ChunkRecord;
  /** How well it matches the query, 0 to 1 (fusion.ts says how it is made). */
  score: number;
  /** Other files publishing the same definition (compiled, declarations), tree-relative; see fusion.ts. */
  copies?: string[];
}

export interface StoreQuery {
  /** Code-aware terms of the query (tokens.ts queryTerms): Qdrant's sparse vector. */
  terms: readonly string[];
  /** The query's words with their other forms (vocabulary.ts queryConcepts): the lexical channel and the score. */
  concepts: readonly QueryConcept[];
  /** The operations the query asks for (vocabulary.ts queryOperations), whose opposites rank lower. */
  operations: ReadonlySet<string>;
  /** The action the query leads with (vocabulary.ts queryAction), if any. */
  action?: readonly string[] | undefined;
  /** The query as a (qualified) identifier, lower-cased and dotted; the symbol channel. */
  symbol?: string | undefined;
  /** The same as written (case kept, dotted), to prefer a definition named exactly so. */
  symbolText?: string | undefined;
  /** Unit-length query vector, when the store keeps vectors; the embedding channel. */
  vector?: Float32Array | undefined;
}

export interface VectorStore {
  /** Where the index lives, for people: a file path, or the Qdrant URL and collection. */
  readonly description: string;
  /**
   * Whether chunks need vectors. The local store keeps none for the local hashed embedder: its
   * lexical and symbol channels do that embedder's work better (ARCHITECTURE.md, search).
   */
  readonly wantsVectors: boolean;
  /**
   * The tree name a store's chunk terms are worked out with (tokens.ts symbolTerms), when it takes
   * them prepared with the chunks (StoredChunk.terms); undefined for a store that does not use them.
   */
  readonly termsTreeName?: string | undefined;
  /** Something this run did that the user should know (an index rebuilt from an older layout). */
  readonly note?: string | undefined;
  /** The vector dimension of the existing index; undefined when there is none yet. */
  dimension(): Promise<number | undefined>;
  /**
   * The file hash of every indexed path. A path whose chunks disagree (a run interrupted between
   * writing a file's new chunks and deleting its old ones) maps to '' so that it is redone.
   */
  fileHashes(): Promise<Map<string, string>>;
  replaceFile(path: string, chunks: readonly StoredChunk[]): Promise<void>;
  commit(): Promise<void>;
  /** Gives up the changes not committed (a cancelled or failed run); a store that writes as it goes has nothing to
   * undo. */
  rollback?(): void;
  /** Chunks in the committed index. */
  count(): Promise<number>;
  /** The `limit` best chunks, fused; with `within`, only chunks of files under those directories (see isUnder). */
  search(query: StoreQuery, limit: number, within?: readonly string[]): Promise<StoreHit[]>;
}

/**
 * Whether a chunk path (relative to its tree, '/'-separated) lies under one of `dirs`, relative
 * directories on a path-segment boundary ('py' holds 'py/app.py', not 'python/x.py'; '' holds all).
 */
export function isUnder(path: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => dir === '' || path.startsWith(`${dir}/`));
}

/** A copy scaled to unit length, so that a dot product is the cosine similarity. */
export function normalised(vector: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(vector);
  let norm = 0;
  for (const value of out) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}
