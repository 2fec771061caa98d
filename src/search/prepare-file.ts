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
import { chunkTraits, lexicalTokens, symbolTerms, type LexicalFields } from './tokens.js';
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
  /** What ranking reads of its text (tokens.ts chunkTraits), kept in its row. */
  traits: number;
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
export function chunkTerms(
  chunk: Pick<CodeChunk, 'path' | 'symbol' | 'text' | 'kind' | 'language'>,
  treeName: string,
): ChunkTerms {
  return { ...stemmedTerms(lexicalTokens(chunk)), symbols: symbolTerms(chunk, treeName), traits: chunkTraits(chunk) };
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
