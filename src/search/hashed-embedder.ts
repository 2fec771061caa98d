/**
 * The local embedder: a deterministic, offline "bag of identifiers" vector, used when no
 * embedding provider is configured.
 *
 * Features of a text: every identifier split on case changes, digits and underscores
 * (`parseHTTPConfig_file` → parse, http, config, file), lower-cased; the whole compound
 * identifier (so an exact name match scores higher than its parts apart); and the character
 * trigrams of each part (so `parser` still meets `parse`), down-weighted. Keywords common to most
 * languages are dropped: they are in every chunk and would only add noise. Each feature is
 * hashed (FNV-1a) to a dimension and a sign, weighted by its kind × (1 + ln tf), and the vector is
 * L2-normalised, so a dot product is the cosine similarity.
 *
 * It is lexical: it ranks by shared identifiers and word pieces, like BM25 without IDF, and does
 * not know synonyms. A provider's embedding model replaces it when configured.
 */
import type { Embedder } from './embedder.js';

export const HASHED_DIMENSION = 512;
const TRIGRAM_WEIGHT = 0.25;
const COMPOUND_WEIGHT = 1.5;

const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and as async await break case catch class const continue def default do elif else end enum export extends ' +
    'false fn for from func function go if impl import in interface ' +
    'is let mut new nil none not null of or package pass ' +
    'private pub public return self static struct super switch the ' +
    'this throw to true try type use var void while with yield'
  ).split(' '),
);

export class HashedEmbedder implements Embedder {
  readonly id = `hashed-v1-${HASHED_DIMENSION}`;
  readonly description: string;
  readonly dimension = HASHED_DIMENSION;

  /** `why`: said in the description (index stats) when a provider is configured but cannot embed. */
  constructor(why?: string) {
    this.description =
      `local hashed identifier embedder (${HASHED_DIMENSION} ` + `dimensions, lexical${why ? `; ${why}` : ''})`;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => hashedEmbedding(text));
  }
}

export function hashedEmbedding(text: string, dimension = HASHED_DIMENSION): Float32Array {
  // feature → [occurrences, weight of its kind]
  const counts = new Map<string, [number, number]>();
  const add = (feature: string, weight: number): void => {
    const seen = counts.get(feature);
    if (seen) seen[0]++;
    else counts.set(feature, [1, weight]);
  };
  for (const identifier of text.match(/[\p{L}_][\p{L}\p{N}_]*/gu) ?? []) {
    const parts = splitIdentifier(identifier).filter((part) => !STOPWORDS.has(part));
    if (parts.length === 0) continue;
    if (parts.length > 1) add(`=${parts.join('_')}`, COMPOUND_WEIGHT);
    for (const part of parts) {
      add(part, 1);
      const padded = `^${part}$`;
      for (let i = 0; i + 3 <= padded.length; i++) add(`#${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
    }
  }
  const vector = new Float32Array(dimension);
  for (const [feature, [count, weight]] of counts) {
    const hash = fnv1a(feature);
    // The sign comes from a remix of the hash, so it does not follow the index's bits.
    const sign = Math.imul(hash, 0x9e3779b1) < 0 ? -1 : 1;
    vector[hash % dimension]! += sign * weight * (1 + Math.log(count));
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < dimension; i++) vector[i]! /= norm;
  return vector;
}

/** `parseHTTPConfig_file2` → ['parse', 'http', 'config', 'file']; single letters are dropped. */
export function splitIdentifier(identifier: string): string[] {
  const parts = isAscii(identifier)
    ? identifier
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/([A-Z])([A-Z][a-z])/g, '$1 $2')
        .split(/[\s_0-9]+/)
    : identifier
        .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
        .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
        .split(/[\s_\p{N}]+/u);
  return parts.filter((part) => part.length > 1).map((part) => part.toLowerCase());
}

/**
 * Whether `text` is ASCII only. There the Unicode property classes (`\p{L}`, `\p{Lu}`, `\p{N}`)
 * match exactly what `[A-Za-z]`, `[A-Z]` and `[0-9]` do, and those are the ones to use: a Unicode
 * class costs V8 a large character set to build and a slower match, which a search from a fresh
 * process paid on every name it ranked.
 */
export function isAscii(text: string): boolean {
  return !/[^\x00-\x7f]/.test(text);
}

/**
 * 32-bit FNV-1a over UTF-16 code units, unsigned: fast, and good enough spread for feature hashing
 * (here) and for the sparse vectors' term indices (tokens.ts sparseDocument).
 */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
