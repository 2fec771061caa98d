/**
 * BM25 of the local store's lexical channel, computed here over a few candidates rather than by
 * FTS5's bm25() over every row a MATCH yields (sqlite-lexical.ts says why and how the candidates
 * are chosen).
 *
 * The formula is FTS5's own, so the ranking is the one bm25(lexical, 20, 6, 4, 2, 1) gives: a term's
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
import { lexicalTokens, type LexicalFields } from './tokens.js';
import type { QueryConcept } from './vocabulary.js';

/** How much a name that begins with a query's word and runs on counts (vocabulary.ts QueryConcept.prefix). */
export const PREFIX_WEIGHT = 0.5;
/** A name run together must add this many letters to the word (`base` → `basename`, not `bases`). */
export const PREFIX_MIN_EXTRA = 3;
import type { CodeChunk } from '../code/chunk.js';

/**
 * A word in the definition's own name counts most, then in the names enclosing it (a method's
 * class), the doc, the path, the code (the FTS5 table's column weights in the same order).
 */
export const FIELD_WEIGHTS: Readonly<Record<keyof LexicalFields, number>> = {
  name: 20,
  scope: 6,
  doc: 4,
  path: 2,
  body: 1,
};
export const K1 = 1.2;
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
export function stemmedTerms(fields: Record<keyof LexicalFields, string[]>): {
  stemmed: LexicalFields;
  length: number;
  weights: Map<string, number>;
} {
  const weights = new Map<string, number>();
  const stemmed = { name: '', scope: '', doc: '', path: '', body: '' };
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
 * A query concept (vocabulary.ts) as a store scores it: its forms by term id with their IDF and
 * weight, and `ceiling`, the most it can add to a chunk's score: the IDF of its word (of a word
 * no chunk holds: the IDF a single chunk would give it) × (k1 + 1), what a term in a name nears.
 */
export interface ScoringConcept {
  ceiling: number;
  variants: Array<{ id: number; idf: number; weight: number }>;
}

/**
 * The lexical score of a chunk, in [0, 1): each concept adds its best form's BM25 term score
 * (weighted, at most its ceiling), and the sum is divided by the sum of the ceilings. So 1 would
 * be every word of the query in the chunk's name; a word met once in a chunk's code counts about
 * half of its share; the rarer a word in the index, the larger its share.
 */
export function conceptScore(
  concepts: readonly ScoringConcept[],
  frequency: (id: number) => number,
  length: number,
  avgLength: number,
  totalCeiling: number,
): number {
  if (totalCeiling <= 0) return 0;
  let total = 0;
  for (const concept of concepts) {
    let best = 0;
    for (const variant of concept.variants) {
      const f = frequency(variant.id);
      if (f === 0) continue;
      const score = variant.weight * termScore(variant.idf, f, length, avgLength);
      if (score > best) best = score;
    }
    total += Math.min(best, concept.ceiling);
  }
  return total / totalCeiling;
}

/**
 * conceptScore of stored chunks (their encoded term lists, encodeTerms, sorted by term id) for one
 * query, with the same arithmetic in the same order. A search scores hundreds of chunks in a
 * process that has just started, mostly in V8's interpreter, so the query's term ids (sorted) are
 * found in each list by walking both in step, or for a few ids in a long list by binary search,
 * without a hash lookup per term of the chunk.
 */
export function conceptScorer(
  concepts: readonly ScoringConcept[],
  avgLength: number,
  totalCeiling: number,
): (blob: Uint8Array, length: number) => number {
  const ids = Uint32Array.from(new Set(concepts.flatMap((concept) => concept.variants.map((variant) => variant.id))));
  ids.sort();
  const wanted = ids.length;
  /** Each variant's place in `ids`, concept by concept. */
  const slots = concepts.map((concept) => concept.variants.map((variant) => ids.indexOf(variant.id)));
  const frequencies = new Float64Array(wanted);
  return (blob, length) => {
    if (totalCeiling <= 0) return 0;
    frequencies.fill(0);
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const terms = blob.byteLength >>> 3;
    if (wanted * 8 < terms) {
      for (let j = 0, low = 0; j < wanted && low < terms; j++) {
        const id = ids[j]!;
        let high = terms - 1;
        while (low <= high) {
          const middle = (low + high) >>> 1;
          const seen = view.getUint32(middle * 8, true);
          if (seen < id) low = middle + 1;
          else if (seen > id) high = middle - 1;
          else {
            frequencies[j] = view.getUint32(middle * 8 + 4, true);
            low = middle + 1;
            break;
          }
        }
      }
    } else {
      for (let i = 0, j = 0; i < terms && j < wanted; ) {
        const seen = view.getUint32(i * 8, true);
        const id = ids[j]!;
        if (seen < id) i++;
        else if (seen > id) j++;
        else frequencies[j++] = view.getUint32(i++ * 8 + 4, true);
      }
    }
    let total = 0;
    for (let c = 0; c < concepts.length; c++) {
      const concept = concepts[c]!;
      const places = slots[c]!;
      let best = 0;
      for (let v = 0; v < places.length; v++) {
        const f = frequencies[places[v]!]!;
        if (f === 0) continue;
        const variant = concept.variants[v]!;
        const score = variant.weight * termScore(variant.idf, f, length, avgLength);
        if (score > best) best = score;
      }
      total += Math.min(best, concept.ceiling);
    }
    return total / totalCeiling;
  };
}

/**
 * Lexical scores computed from the chunks' texts alone, for a store that keeps no document
 * frequencies (Qdrant): as conceptScore, with every word weighing the same (IDF 1) and the
 * chunks' mean length as the average. By chunk id.
 */
export function unweightedLexicalScores(
  concepts: readonly QueryConcept[],
  chunks: ReadonlyArray<Pick<CodeChunk, 'path' | 'symbol' | 'text'> & { id: string }>,
): Map<string, number> {
  const counted = chunks.map((chunk) => {
    const { length, weights } = stemmedTerms(lexicalTokens(chunk));
    return { id: chunk.id, length, weights };
  });
  const ids = new Map<string, number>();
  const idOf = (term: string): number => {
    if (!ids.has(term)) ids.set(term, ids.size);
    return ids.get(term)!;
  };
  // Names run on from a word (vocabulary.ts QueryConcept.prefix), among these chunks' terms.
  const vocabulary = [...new Set(counted.flatMap((chunk) => [...chunk.weights.keys()]))];
  const scoring: ScoringConcept[] = concepts.map((concept) => {
    const runOn =
      concept.prefix === undefined
        ? []
        : vocabulary.filter(
            (term) => term.startsWith(concept.prefix!) && term.length >= concept.prefix!.length + PREFIX_MIN_EXTRA,
          );
    return {
      ceiling: concept.weight * upperBound(1),
      variants: [
        ...concept.variants.map(({ term, weight }) => ({ id: idOf(term), idf: 1, weight: weight * concept.weight })),
        ...runOn
          .filter((term) => !concept.variants.some((variant) => variant.term === term))
          .map((term) => ({ id: idOf(term), idf: 1, weight: PREFIX_WEIGHT * concept.weight })),
      ],
    };
  });
  const totalCeiling = scoring.reduce((sum, concept) => sum + concept.ceiling, 0);
  const avgLength = counted.reduce((sum, chunk) => sum + chunk.length, 0) / Math.max(1, counted.length) || 1;
  const terms = [...ids.keys()];
  return new Map(
    counted.map(({ id, length, weights }) => [
      id,
      conceptScore(scoring, (termId) => weights.get(terms[termId]!) ?? 0, length, avgLength, totalCeiling),
    ]),
  );
}

/**
 * A chunk's terms as stored: pairs of (term id, weighted frequency), sorted by id, as little-endian
 * u32s. Ids come from the store's vocabulary table.
 */
export function encodeTerms(pairs: Array<[number, number]>): Buffer {
  const keys = new Float64Array(pairs.length);
  for (let i = 0; i < pairs.length; i++) keys[i] = termKey(pairs[i]![0], pairs[i]![1]);
  return encodeTermKeys(keys);
}

/** Weighted frequencies up to this fit below a term id in one termKey. */
const WEIGHT_RANGE = 2 ** 24;

/**
 * One (term id, weighted frequency) pair as a number that sorts by id: a chunk's pairs are sorted
 * as one Float64Array, without an array per pair (the writing thread encodes 1.5 million a
 * standard library). A chunk's text is at most 1 MB, so its weights stay far below WEIGHT_RANGE.
 */
export function termKey(id: number, weight: number): number {
  if (!(weight >= 0 && weight < WEIGHT_RANGE)) throw new RangeError(`a term weight of ${weight}`);
  return id * WEIGHT_RANGE + weight;
}

/** encodeTerms of pairs given as termKeys, sorted here. */
export function encodeTermKeys(keys: Float64Array): Buffer {
  keys.sort();
  const out = Buffer.allocUnsafe(keys.length * 8);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let i = 0; i < keys.length; i++) {
    const weight = keys[i]! % WEIGHT_RANGE;
    view.setUint32(i * 8, (keys[i]! - weight) / WEIGHT_RANGE, true);
    view.setUint32(i * 8 + 4, weight, true);
  }
  return out;
}

/** The ids in an encoded term list. */
export function termIds(blob: Uint8Array): number[] {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const ids: number[] = [];
  for (let at = 0; at < blob.byteLength; at += 8) ids.push(view.getUint32(at, true));
  return ids;
}
