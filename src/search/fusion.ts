/**
 * Reciprocal rank fusion of the search channels, and the two rules that keep a definition on top
 * of its own debris.
 *
 * Each channel gives a ranked list of chunks; a chunk scores Σ 1/(RRF_K + rank) over the lists it
 * is in (Cormack et al., 2009: rank-based, so a BM25 score and a cosine need no common scale). An
 * exact symbol match (the query is the definition's name or a qualified form of it) ranks above
 * every other hit, then a prefix match (the query begins the name: `get_payl`, `json.dum`; at
 * least MIN_PREFIX_CHARS long). Then:
 * - a split definition counts once: its `#partN` fragments collapse into the best-ranked one, or,
 *   for a name match, into its first fragment (the one with the signature), at the best score;
 * - an empty stub (an abstract method, an overload signature, a declaration) ranks after every
 *   real definition of the same name among the hits, and counts half otherwise;
 * - test code (isTestPath) counts TEST_CODE_FACTOR of its score.
 */
import type { ChunkRecord, StoreHit } from './store.js';
import { baseSymbol, isStub, isTestPath, partNumber } from './tokens.js';
import { byCodeUnits } from '../order.js';

/** The usual constant: it flattens the head of each list so that agreement between lists wins. */
export const RRF_K = 60;
/** Added to an exact symbol match, more than any fused score can reach. */
const EXACT_SYMBOL_BONUS = 1;
/** Among exact matches the symbol channel's own order decides: up to this much more for its first. */
const EXACT_ORDER_BONUS = 0.5;
/** Added to a prefix match: below every exact match, above any fused score. */
const PREFIX_SYMBOL_BONUS = 0.5;
const PREFIX_ORDER_BONUS = 0.25;
/** A shorter query is not taken as the start of a name (`g` begins half the names of a tree). */
export const MIN_PREFIX_CHARS = 3;
/** Test code counts this much of its score outside exact name matches (those it ranks after already). */
const TEST_CODE_FACTOR = 0.6;

export interface Channel {
  /** Best first. */
  ranked: readonly ChunkRecord[];
  weight?: number;
}

/**
 * `exact`: the ids of exact symbol matches, in the symbol channel's order (best definition
 * first: see the stores); they rank first, in that order. `prefix`: the ids of prefix matches,
 * likewise; they rank next.
 */
export function fuseRankings(channels: readonly Channel[], exact: readonly string[], limit: number, prefix: readonly string[] = []): StoreHit[] {
  const scored = new Map<string, { chunk: ChunkRecord; score: number }>();
  for (const { ranked, weight = 1 } of channels) {
    ranked.forEach((chunk, rank) => {
      const entry = scored.get(chunk.id) ?? { chunk, score: 0 };
      entry.score += weight / (RRF_K + rank + 1);
      scored.set(chunk.id, entry);
    });
  }
  const exactRank = new Map(exact.map((id, rank) => [id, rank]));
  const prefixRank = new Map(prefix.map((id, rank) => [id, rank]));
  const named = new Set<string>();
  for (const entry of scored.values()) {
    const rank = exactRank.get(entry.chunk.id);
    const prefixAt = prefixRank.get(entry.chunk.id);
    if (rank !== undefined) entry.score += EXACT_SYMBOL_BONUS + EXACT_ORDER_BONUS / (1 + rank);
    else if (prefixAt !== undefined) entry.score += PREFIX_SYMBOL_BONUS + PREFIX_ORDER_BONUS / (1 + prefixAt);
    else if (isTestPath(entry.chunk.path)) entry.score *= TEST_CODE_FACTOR;
    if (rank !== undefined || prefixAt !== undefined) named.add(entry.chunk.id);
  }

  // One hit per definition: the best-scored of its fragments, or for a name match its first
  // fragment (the signature) with the best fragment's score.
  const byDefinition = new Map<string, { chunk: ChunkRecord; score: number }>();
  for (const entry of scored.values()) {
    const key = `${entry.chunk.path}\0${baseSymbol(entry.chunk.symbol)}`;
    const seen = byDefinition.get(key);
    if (!seen) byDefinition.set(key, { ...entry });
    else if (named.has(entry.chunk.id) || named.has(seen.chunk.id)) {
      const head = partNumber(entry.chunk.symbol) < partNumber(seen.chunk.symbol) ? entry.chunk : seen.chunk;
      byDefinition.set(key, { chunk: head, score: Math.max(seen.score, entry.score) });
    } else if (entry.score > seen.score) byDefinition.set(key, { ...entry });
  }

  const entries = [...byDefinition.values()].map((entry) => ({ ...entry, stub: isStub(entry.chunk) }));
  const realByName = new Map<string, number>();
  for (const entry of entries) {
    if (entry.stub) continue;
    const name = lastName(entry.chunk.symbol);
    realByName.set(name, Math.max(realByName.get(name) ?? 0, entry.score));
  }
  for (const entry of entries) {
    if (!entry.stub) continue;
    const real = realByName.get(lastName(entry.chunk.symbol));
    entry.score = real !== undefined ? Math.min(entry.score, real * 0.999) : entry.score / 2;
  }
  return entries
    .sort((a, b) => b.score - a.score || byCodeUnits(a.chunk.path, b.chunk.path) || a.chunk.startLine - b.chunk.startLine)
    .slice(0, limit)
    .map(({ chunk, score }) => ({ chunk, score }));
}

/** `Greeter.hello#part2` → `hello`. */
function lastName(symbol: string): string {
  return baseSymbol(symbol).split(/\.|::/).at(-1)!.toLowerCase();
}

/**
 * Symbol matches, best definition first: exact before prefix; then the name as written (case
 * included) before a case-insensitive match; code before tests; public modules before private ones
 * (`_bootsubprocess.py`); a real body before a stub; a definition nested less deeply (a method
 * before a function defined inside a test method); a whole definition or its first part before
 * later fragments; a shorter path; then the path and line, so the order is stable. Duplicates (a
 * chunk found under several names) count once.
 */
export function rankDefinitions<Entry extends { chunk: ChunkRecord; exact: boolean }>(entries: readonly Entry[], written: string): Entry[] {
  const seen = new Set<string>();
  const writtenParts = written.split(/\.|::|\/|#/).filter((part) => part !== '');
  const keyed = entries
    .filter((entry) => !seen.has(entry.chunk.id) && seen.add(entry.chunk.id))
    .map((entry) => {
      const { chunk } = entry;
      const parts = baseSymbol(chunk.symbol).split(/\.|::/);
      const caseExact = parts.slice(-writtenParts.length).join('.') === writtenParts.slice(-parts.length).join('.');
      return {
        entry,
        key: [
          entry.exact ? 0 : 1,
          caseExact ? 0 : 1,
          isTestPath(chunk.path) ? 1 : 0,
          isPrivatePath(chunk.path) ? 1 : 0,
          isStub(chunk) ? 1 : 0,
          parts.length,
          Math.min(partNumber(chunk.symbol), 2),
          chunk.path.length,
        ],
      };
    });
  keyed.sort((a, b) => {
    for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i]! - b.key[i]!;
    return byCodeUnits(a.entry.chunk.path, b.entry.chunk.path) || a.entry.chunk.startLine - b.entry.chunk.startLine;
  });
  return keyed.map(({ entry }) => entry);
}

/** A module or package whose name starts with `_` (not `__init__`): private, or a fallback implementation. */
function isPrivatePath(path: string): boolean {
  return path.split('/').some((segment) => /^_(?!_)/.test(segment));
}
