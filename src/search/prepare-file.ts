/**
 * One changed file made ready for the store: its chunks (code/chunk.ts), each chunk's id and, for
 * a store that asks for them (`treeName` given), the terms it indexes the chunk under: the lexical
 * fields stemmed and weighted (bm25.ts) and the names the symbol channel answers to (tokens.ts).
 *
 * This is the CPU-heavy part of indexing (parsing, chunking, tokenising), and it is pure: the same
 * job gives the same chunks and terms on any thread. So it runs on the indexer's own thread with a
 * pool of one and on worker threads otherwise (chunk-pool.ts), and the store, written on one
 * thread in the walk's order, ends the same either way.
 */
import { chunkSource, type CodeChunk } from '../code/chunk.js';
import { languageForSource } from '../code/header-language.js';
import { languageByName } from '../code/languages.js';
import { stemmedTerms } from './bm25.js';
import { lexicalTokens, symbolTerms, type LexicalFields } from './tokens.js';
import { uuidV5 } from './uuid.js';

/** What a pool worker is given: plain data, so it crosses threads as it is. */
export interface FileJob {
  /** Tree-relative, '/'-separated. */
  path: string;
  text: string;
  /** The language the walk chose (languages.ts IndexLanguage.name). */
  language: string;
  /** Whether that language has a grammar here (else it is chunked in line windows). */
  hasGrammar: boolean;
  /** The indexed tree's own name, when the store wants each chunk's terms prepared (sqlite-store.ts). */
  treeName?: string | undefined;
}

/** A chunk's lexical and symbol terms, as the local store writes them (sqlite-lexical.ts). */
export interface ChunkTerms {
  /** Each lexical field's stemmed tokens, space-separated (what FTS5 indexes). */
  stemmed: LexicalFields;
  /** Tokens in all fields. */
  length: number;
  /** Field-weighted frequency of each stemmed term. */
  weights: Map<string, number>;
  /** Every name the symbol channel finds the chunk by. */
  symbols: string[];
}

export interface PreparedChunk extends CodeChunk {
  /** chunkId: path, symbol and text. */
  id: string;
  terms?: ChunkTerms | undefined;
}

/** The stable id of a chunk: the same path, symbol and text always give the same id. */
export function chunkId(chunk: Pick<CodeChunk, 'path' | 'symbol' | 'hash'>): string {
  return uuidV5(`${chunk.path}\0${chunk.symbol}\0${chunk.hash}`);
}

/** A chunk's lexical and symbol terms (what the local store would otherwise work out as it writes). */
export function chunkTerms(chunk: Pick<CodeChunk, 'path' | 'symbol' | 'text' | 'kind'>, treeName: string): ChunkTerms {
  return { ...stemmedTerms(lexicalTokens(chunk)), symbols: symbolTerms(chunk, treeName) };
}

export async function prepareFile(job: FileJob): Promise<PreparedChunk[]> {
  // A `.h` header is chunked as C++ when its text shows C++ (the walk chose its language by extension).
  const grammar = job.hasGrammar ? (languageForSource(job.path, job.text) ?? languageByName(job.language)) : undefined;
  const chunks = await chunkSource(job.text, { path: job.path, language: grammar ?? job.language });
  // Identical definitions in one file (same name, same text) would share an id: keep one.
  const seen = new Set<string>();
  const prepared: PreparedChunk[] = [];
  for (const chunk of chunks) {
    const key = `${chunk.symbol}\0${chunk.hash}`;
    if (seen.has(key)) continue;
    seen.add(key);
    prepared.push({
      ...chunk,
      id: chunkId(chunk),
      terms: job.treeName === undefined ? undefined : chunkTerms(chunk, job.treeName),
    });
  }
  return prepared;
}

/**
 * A file's prepared chunks as a pool worker answers them: every string in one and every number in
 * one typed array (transferred, not copied). Structured-cloning the chunks themselves cost the
 * writing thread a copy of every object (a Map of terms per chunk), and those objects, held until
 * their file's turn to be written, outlived the young generation and filled the old one; these two
 * are one string and one buffer, unpacked when the file is written (unpackChunks).
 */
export interface PackedChunks {
  strings: string;
  /**
   * The chunks, then the file's distinct terms; per chunk startLine, endLine, whether it has terms
   * (then length, symbols, weights, each weight's term index and weight); before each string of
   * `strings`, its length.
   */
  numbers: Float64Array;
}

export function packChunks(chunks: readonly PreparedChunk[]): PackedChunks {
  const parts: string[] = [];
  const numbers: number[] = [chunks.length];
  const string = (value: string): void => {
    numbers.push(value.length);
    parts.push(value);
  };
  // The file's terms once, first (chunks of a file share most of theirs); each chunk's by index.
  const termIndex = new Map<string, number>();
  for (const chunk of chunks)
    for (const term of chunk.terms?.weights.keys() ?? []) if (!termIndex.has(term)) termIndex.set(term, termIndex.size);
  numbers.push(termIndex.size);
  for (const term of termIndex.keys()) string(term);
  for (const chunk of chunks) {
    for (const value of [chunk.id, chunk.path, chunk.language, chunk.symbol, chunk.kind, chunk.text, chunk.hash])
      string(value);
    numbers.push(chunk.startLine, chunk.endLine, chunk.terms === undefined ? 0 : 1);
    const terms = chunk.terms;
    if (terms === undefined) continue;
    const { stemmed } = terms;
    for (const value of [stemmed.name, stemmed.scope, stemmed.doc, stemmed.path, stemmed.body]) string(value);
    numbers.push(terms.length, terms.symbols.length, terms.weights.size);
    for (const symbol of terms.symbols) string(symbol);
    for (const [term, weight] of terms.weights) numbers.push(termIndex.get(term)!, weight);
  }
  return { strings: parts.join(''), numbers: Float64Array.from(numbers) };
}

/** A file's chunks as the pool answered them: prepared on the caller's thread, or packed by a worker. */
export type PreparedFile = PreparedChunk[] | PackedChunks;

export function preparedChunks(file: PreparedFile): PreparedChunk[] {
  return Array.isArray(file) ? file : unpackChunks(file);
}

export function unpackChunks({ strings, numbers }: PackedChunks): PreparedChunk[] {
  let at = 0;
  let next = 0;
  const number = (): number => numbers[next++]!;
  const string = (): string => {
    const length = number();
    at += length;
    return strings.slice(at - length, at);
  };
  const chunks: PreparedChunk[] = [];
  const count = number();
  const fileTerms: string[] = [];
  for (let terms = number(); terms > 0; terms--) fileTerms.push(string());
  for (let left = count; left > 0; left--) {
    const [id, path, language, symbol, kind, text, hash] = [
      string(),
      string(),
      string(),
      string(),
      string(),
      string(),
      string(),
    ];
    const chunk: PreparedChunk = {
      path,
      language,
      symbol,
      kind: kind as CodeChunk['kind'],
      startLine: number(),
      endLine: number(),
      text,
      hash,
      id,
      terms: undefined,
    };
    chunks.push(chunk);
    if (number() === 0) continue;
    const stemmed = { name: string(), scope: string(), doc: string(), path: string(), body: string() };
    const length = number();
    const symbolCount = number();
    const weightCount = number();
    const symbols: string[] = [];
    for (let index = 0; index < symbolCount; index++) symbols.push(string());
    const weights = new Map<string, number>();
    for (let index = 0; index < weightCount; index++) {
      const term = fileTerms[number()]!;
      weights.set(term, number());
    }
    chunk.terms = { stemmed, length, weights, symbols };
  }
  return chunks;
}
