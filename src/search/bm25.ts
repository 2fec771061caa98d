/**
 * BM25 of the local store's lexical channel, computed here over a few candidates rather than by
 * FTS5's bm25() over every row a MATCH yields (sqlite-lexical.ts says why and how the candidates
 * are chosen).
 *
 * The formula is FTS5's own, so the ranking is the one bm25(lexical, 20, 4, 2, 1) gave: a term's
 * frequency in a chunk is weighted by the field it occurs in (FIELD_WEIGHTS), the chunk's length
 * is its tokens over all fields, and
 *
 *   score = Σ idf(t) · f(t)·(k1 + 1) / (f(t) + k1·(1 − b + b·length/avgLength)),
 *   idf(t) = ln((N − df + 0.5) / (df + 0.5)), or 1e-6 when that is not positive.
 *
 * Terms are stemmed (Porter, the `stemmer` package) here, before FTS5 sees them, so that the
 * terms FTS5 matches and the terms scored here are the same strings by construction.
 */
import { stemmer } from 'stemmer';
import { GenerationalMemo } from './memo.js';
import type { LexicalFields } from './tokens.js';

/** A word in the name counts most, then the doc, the path, the code (as bm25()'s column weights were). */
export const FIELD_WEIGHTS: Readonly<Record<keyof LexicalFields, number>> = { name: 20, doc: 4, path: 2, body: 1 };
const K1 = 1.2;
const B = 0.75;

/** Bounded (memo.ts): it lives as long as the process. */
const stems = new GenerationalMemo<string>(2_500);

/** The Porter stem of one lower-cased token, memoised (code repeats its words). */
export function stem(token: string): string {
  let stemmed = stems.get(token);
  if (stemmed === undefined) {
    stemmed = stemmer(token);
    stems.set(token, stemmed);
  }
  return stemmed;
}

/**
 * A chunk's lexical tokens (tokens.ts lexicalTokens) stemmed, each field space-separated (what the
 * FTS5 table indexes), the field-weighted frequency of each stemmed term, and the chunk's length in
 * tokens. The token arrays are stemmed in place.
 */
export function stemmedTerms(fields: Record<keyof LexicalFields, string[]>): { stemmed: LexicalFields; length: number; weights: Map<string, number> } {
  const weights = new Map<string, number>();
  const stemmed = { name: '', doc: '', path: '', body: '' };
  let length = 0;
  for (const field of Object.keys(FIELD_WEIGHTS) as Array<keyof LexicalFields>) {
    const terms = fields[field];
    if (terms.length === 0) continue;
    const weight = FIELD_WEIGHTS[field];
    for (let i = 0; i < terms.length; i++) {
      const term = stem(terms[i]!);
      terms[i] = term;
      weights.set(term, (weights.get(term) ?? 0) + weight);
    }
    length += terms.length;
    stemmed[field] = terms.join(' ');
  }
  return { stemmed, length, weights };
}

/** FTS5's IDF: never zero or below, so a term in most chunks still counts a little. */
export function idf(rows: number, df: number): number {
  const value = Math.log((rows - df + 0.5) / (df + 0.5));
  return value > 0 ? value : 1e-6;
}

/** The most one occurrence-saturated term can add: its IDF times k1 + 1 (what f/(f + …) tends to). */
export function upperBound(termIdf: number): number {
  return termIdf * (K1 + 1);
}

/** One term's share of a chunk's score. */
export function termScore(termIdf: number, frequency: number, length: number, avgLength: number): number {
  if (frequency === 0) return 0;
  return (termIdf * (frequency * (K1 + 1))) / (frequency + K1 * (1 - B + (B * length) / avgLength));
}

/**
 * A chunk's terms as stored: pairs of (term id, weighted frequency), sorted by id, as little-endian
 * u32s. Ids come from the store's vocabulary table.
 */
export function encodeTerms(pairs: Array<[number, number]>): Buffer {
  pairs.sort((a, b) => a[0] - b[0]);
  const out = Buffer.allocUnsafe(pairs.length * 8);
  pairs.forEach(([id, weight], index) => {
    out.writeUInt32LE(id, index * 8);
    out.writeUInt32LE(weight, index * 8 + 4);
  });
  return out;
}

/** The ids in an encoded term list. */
export function termIds(blob: Uint8Array): number[] {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const ids: number[] = [];
  for (let at = 0; at < blob.byteLength; at += 8) ids.push(view.getUint32(at, true));
  return ids;
}

/** The weighted frequency of term `id` in an encoded term list (binary search); 0 when absent. */
export function frequencyOf(blob: Uint8Array, id: number): number {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  let low = 0;
  let high = blob.byteLength / 8 - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const seen = view.getUint32(middle * 8, true);
    if (seen === id) return view.getUint32(middle * 8 + 4, true);
    if (seen < id) low = middle + 1;
    else high = middle - 1;
  }
  return 0;
}
