/**
 * Ranks the candidates the search channels found, with one score a user can compare across hits
 * and queries.
 *
 * Score (0 to 1): how well the hit matches the query.
 * - 1: the query is the definition's name, or a qualified form of it (`urlencode`,
 *   `urllib.parse.urlencode`, `HTTPResponse._read_status`).
 * - PREFIX_FLOOR to 1: the query begins the name (`urlenc`, at least MIN_PREFIX_CHARS): the longer
 *   the part of the name it gives, the higher.
 * - Otherwise, its lexical score (bm25.ts conceptScore): the share of the query's words found in
 *   the chunk, each weighed by how rare it is in the index, counting fully in the name and about
 *   half when met once in the code. With an embedding provider, the mean of that and the cosine
 *   similarity of the chunk's and the query's embeddings (below 0 taken as 0).
 * - Then lowered, except for a name match: test code (isTestPath) ×TEST_CODE_FACTOR; a name that
 *   is the opposite operation of the query's (`body_encode` for "decode …", vocabulary.ts)
 *   ×OPPOSITE_FACTOR; when the query leads with an action ("kill the child process"), a name
 *   that does not say it ×UNNAMED_ACTION_FACTOR; module-level code and pieces of a split class
 *   outline ×MODULE_CODE_FACTOR. A
 *   stub (tokens.ts isStub: an abstract method, an overload signature) scores just under the best real
 *   definition of its name among the hits, or half otherwise.
 *
 * One hit per definition:
 * - a split definition's `#partN` fragments count once: the best-scored, or for a name match
 *   its first fragment (the signature), at the best fragment's score;
 * - a definition published several times (compiled `.js`/`.cjs`/`.mjs`, declarations `.d.ts`,
 *   source `.ts`: a package's `src/x.ts`, `dist/x.js`, `dist/x.d.ts`) is one hit, the source
 *   first, naming the others as its copies (publicationKey).
 * Ties are broken by path and line, never by storage order, so a tree indexed afresh or
 * incrementally ranks the same.
 */
import type { ChunkRecord, StoreHit } from './store.js';
import { baseSymbol, chunkTraits, INTERNAL_TRAIT, isTestPath, partNumber, STUB_TRAIT } from './tokens.js';
import { stem } from './bm25.js';
import { splitIdentifier } from './hashed-embedder.js';
import { namesAction, opposes, type QueryForms } from './vocabulary.js';
import { byCodeUnits } from '../order.js';

/** A shorter query is not taken as the start of a name (`g` begins half the names of a tree). */
export const MIN_PREFIX_CHARS = 3;
/** The least score of a prefix match: above most word matches, below an exact name. */
export const PREFIX_FLOOR = 0.8;
/** Test code counts this much of its score outside name matches (those it ranks after already). */
export const TEST_CODE_FACTOR = 0.6;
/** A definition doing the opposite of what the query asks counts this much. */
export const OPPOSITE_FACTOR = 0.5;
/** When a query leads with an action (vocabulary.ts queryAction), a definition whose own name does not say it counts
 * this much. */
export const UNNAMED_ACTION_FACTOR = 0.85;
/**
 * Module-level code (imports, constants, a module's docstring) and a piece of a large class's
 * outline (its member signatures and their comments, which name everything the class does) count
 * this much: a query mostly asks for one definition.
 */
export const MODULE_CODE_FACTOR = 0.8;
const CONTAINER_KINDS: ReadonlySet<string> = new Set(['class', 'interface', 'struct', 'enum', 'trait', 'module']);
/** An internal definition (`_helper`, an unexported function) counts this much: a question mostly asks for what a
 * module offers. */
export const INTERNAL_FACTOR = 0.85;
/**
 * The most a definition's own name loses for words of it the query does not have (`is_set` for
 * "set the internal flag" has one of two): the words of the name a question names, the better.
 */
export const NAME_PRECISION_WEIGHT = 0.2;

/** A chunk one of the channels found, with what each says of it. */
export interface Candidate {
  chunk: ChunkRecord;
  /** Lexical score in [0, 1) (0: none of the query's words). */
  lexical: number;
  /** Cosine similarity of its embedding with the query's, when the store keeps embeddings. */
  cosine?: number | undefined;
  /** A name match: its place in the symbol channel's order (rankDefinitions), best 0. */
  exactRank?: number | undefined;
  prefixRank?: number | undefined;
}

export interface RankOptions {
  limit: number;
  /** The query as a dotted, lower-cased name (tokens.ts symbolQuery), when it is one. */
  symbol?: string | undefined;
  /** The operations the query asks for (vocabulary.ts queryOperations). */
  operations: ReadonlySet<string>;
  /** The action the query leads with (vocabulary.ts queryAction), when it does. */
  action?: readonly string[] | undefined;
  /** Every form of every concept of the query (stems, and raw words that names may begin with). */
  forms?: QueryForms | undefined;
}

interface Entry {
  chunk: ChunkRecord;
  score: number;
  exactRank: number;
  prefixRank: number;
  copies: string[];
}

const NONE = Number.MAX_SAFE_INTEGER;

export function rankCandidates(candidates: readonly Candidate[], options: RankOptions): StoreHit[] {
  const byId = new Map<string, Entry>();
  for (const candidate of candidates) {
    const entry = scoreOf(candidate, options);
    const seen = byId.get(candidate.chunk.id);
    if (!seen || compareEntries(entry, seen) < 0) byId.set(candidate.chunk.id, entry);
  }
  const entries = mergeCopies(withStubsBelowReal(collapseFragments([...byId.values()])));
  return entries
    .sort(compareEntries)
    .slice(0, options.limit)
    .map(({ chunk, score, copies }) => ({ chunk, score, ...(copies.length > 0 ? { copies } : {}) }));
}

function scoreOf(candidate: Candidate, options: RankOptions): Entry {
  const { chunk } = candidate;
  const exactRank = candidate.exactRank ?? NONE;
  const prefixRank = candidate.prefixRank ?? NONE;
  const words =
    candidate.cosine === undefined ? candidate.lexical : (candidate.lexical + Math.max(0, candidate.cosine)) / 2;
  let score: number;
  if (exactRank !== NONE) score = 1;
  else {
    score = words;
    if (prefixRank !== NONE && options.symbol !== undefined)
      score = Math.max(score, prefixScore(options.symbol, chunk.symbol));
    if (isTestPath(chunk.path)) score *= TEST_CODE_FACTOR;
    if (opposes(options.operations, chunk.symbol)) score *= OPPOSITE_FACTOR;
    if (options.action && !namesAction(options.action, chunk.symbol)) score *= UNNAMED_ACTION_FACTOR;
    if (chunk.kind === 'toplevel' || (CONTAINER_KINDS.has(chunk.kind) && partNumber(chunk.symbol) > 0))
      score *= MODULE_CODE_FACTOR;
    if (traitsOf(chunk) & INTERNAL_TRAIT) score *= INTERNAL_FACTOR;
    if (options.forms !== undefined) {
      const precision = namePrecision(chunk.symbol, options.forms);
      if (precision !== undefined) score *= 1 - NAME_PRECISION_WEIGHT * (1 - precision);
    }
  }
  return { chunk, score, exactRank, prefixRank, copies: [] };
}

/** The chunk's traits as its store kept them from indexing, else read from its text. */
function traitsOf(chunk: ChunkRecord): number {
  return chunk.traits ?? chunkTraits(chunk);
}

/**
 * The share of the words of a definition's own name that forms of the query's concepts give
 * (`set`: 1, `is_set`: 1/2 for "set the flag"); undefined for code with no name of its own.
 */
function namePrecision(symbol: string, forms: QueryForms): number | undefined {
  if (symbol.startsWith('<')) return undefined;
  const own = baseSymbol(symbol).split(/\.|::/).at(-1)!;
  const words = splitIdentifier(own.replace(/\$/g, ''));
  if (words.length === 0) return undefined;
  const named = words.filter(
    (word) => forms.stems.has(stem(word)) || forms.prefixes.some((prefix) => word.startsWith(prefix)),
  ).length;
  return named / words.length;
}

/** PREFIX_FLOOR, plus the share of the name the query gives: `urlenc` for `urlencode` 0.93. */
function prefixScore(symbol: string, chunkSymbol: string): number {
  const segments = symbol.split('.').length;
  const name = baseSymbol(chunkSymbol).toLowerCase().split(/\.|::/).slice(-segments).join('.');
  const share = name.startsWith(symbol) ? symbol.length / name.length : 0.5;
  return PREFIX_FLOOR + (1 - PREFIX_FLOOR) * Math.min(share, 0.99);
}

/** Best first: score, then name-match order, then path and line (storage order never decides). */
function compareEntries(a: Entry, b: Entry): number {
  return (
    b.score - a.score ||
    a.exactRank - b.exactRank ||
    a.prefixRank - b.prefixRank ||
    byCodeUnits(a.chunk.path, b.chunk.path) ||
    a.chunk.startLine - b.chunk.startLine ||
    byCodeUnits(a.chunk.id, b.chunk.id)
  );
}

/**
 * One entry per definition: the best-scored of its fragments, or for a name match its first
 * fragment (the signature) with the best fragment's score.
 */
function collapseFragments(entries: readonly Entry[]): Entry[] {
  const byDefinition = new Map<string, Entry>();
  for (const entry of [...entries].sort(compareEntries)) {
    const key = `${entry.chunk.path}\0${baseSymbol(entry.chunk.symbol)}`;
    const seen = byDefinition.get(key);
    if (!seen) {
      byDefinition.set(key, { ...entry });
      continue;
    }
    const named = (one: Entry): boolean => one.exactRank !== NONE || one.prefixRank !== NONE;
    if ((named(entry) || named(seen)) && partNumber(entry.chunk.symbol) < partNumber(seen.chunk.symbol)) {
      byDefinition.set(key, {
        ...seen,
        chunk: entry.chunk,
        exactRank: Math.min(seen.exactRank, entry.exactRank),
        prefixRank: Math.min(seen.prefixRank, entry.prefixRank),
      });
    }
  }
  return [...byDefinition.values()];
}

/** An empty stub scores just under the best real definition of its name among the hits, or half. */
function withStubsBelowReal(entries: Entry[]): Entry[] {
  const stubs = new Set(entries.filter((entry) => traitsOf(entry.chunk) & STUB_TRAIT));
  const realByName = new Map<string, number>();
  for (const entry of entries) {
    if (stubs.has(entry)) continue;
    const name = lastName(entry.chunk.symbol);
    realByName.set(name, Math.max(realByName.get(name) ?? 0, entry.score));
  }
  for (const entry of stubs) {
    const real = realByName.get(lastName(entry.chunk.symbol));
    entry.score = real !== undefined ? Math.min(entry.score, real * 0.999) : entry.score / 2;
  }
  return entries;
}

/** `Greeter.hello#part2` → `hello`. */
function lastName(symbol: string): string {
  return baseSymbol(symbol).split(/\.|::/).at(-1)!.toLowerCase();
}

/** JavaScript's and TypeScript's files by extension: sources, compiled forms, most source-like first. */
const PUBLISHED_FORMS: ReadonlyMap<string, number> = new Map([
  ['ts', 0],
  ['tsx', 0],
  ['mts', 0],
  ['cts', 0],
  ['js', 1],
  ['jsx', 1],
  ['mjs', 1],
  ['cjs', 2],
]);
/** Declarations come after all of them. */
const DECLARATION = /\.d\.(ts|mts|cts)$/;
/** Directories a package build puts the same modules under (src/x.ts → dist/esm/x.js, types/x.d.ts). */
const BUILD_SEGMENTS: ReadonlySet<string> = new Set([
  'src',
  'source',
  'lib',
  'dist',
  'build',
  'out',
  'esm',
  'cjs',
  'mjs',
  'es',
  'es5',
  'es6',
  'es2015',
  'es2020',
  'umd',
  'types',
  'typings',
  'dts',
  'declarations',
  'commonjs',
  'module',
  'modules',
  'node',
  'browser',
  '_esm',
  '_cjs',
  '_types',
]);

/** How source-like a path is (0: a source); undefined for a file that is not JavaScript or TypeScript. */
export function publishedForm(path: string): number | undefined {
  // By the extension first: every candidate of a search is asked, and most are of other languages.
  const dot = path.lastIndexOf('.');
  const form = dot < 0 ? undefined : PUBLISHED_FORMS.get(path.slice(dot + 1));
  return form === undefined ? undefined : DECLARATION.test(path) ? 3 : form;
}

/**
 * The definition a chunk of a JavaScript or TypeScript file publishes: its symbol and its module
 * path without the extension and without the directories builds add (`src/v4/core/util.ts` and
 * `v4/core/util.d.cts` are both `v4/core/util`). Undefined for other languages: two files of
 * Python never publish one definition.
 */
export function publicationKey(chunk: Pick<ChunkRecord, 'path' | 'symbol'>): string | undefined {
  if (publishedForm(chunk.path) === undefined) return undefined;
  const module = chunk.path
    .replace(/\.d\.(ts|mts|cts)$|\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/, '')
    .split('/')
    .filter((segment) => !BUILD_SEGMENTS.has(segment))
    .join('/');
  // The same definition compiles to other lengths, so its fragments split elsewhere: `#partN` aside.
  return `${module}\0${baseSymbol(chunk.symbol)}`;
}

/**
 * One entry per published definition: the most source-like file stands for it, at the group's
 * best score, and names the others. A declaration whose qualified name (`Command.version`) is
 * defined among the hits in a module of another name (`typings/index.d.ts` for `lib/command.js`)
 * is a copy too.
 */
function mergeCopies(entries: Entry[]): Entry[] {
  const groups = new Map<string, Entry[]>();
  const alone: Entry[] = [];
  for (const entry of entries) {
    const key = publicationKey(entry.chunk);
    if (key === undefined) alone.push(entry);
    else groups.set(key, [...(groups.get(key) ?? []), entry]);
  }
  const merged = [...groups.values()].map(mergeGroup);
  const bySymbol = new Map<string, Entry>();
  for (const entry of merged) {
    if (publishedForm(entry.chunk.path) === 3 || !baseSymbol(entry.chunk.symbol).includes('.')) continue;
    const seen = bySymbol.get(entry.chunk.symbol);
    if (!seen || compareSource(entry, seen) < 0) bySymbol.set(entry.chunk.symbol, entry);
  }
  const kept: Entry[] = [];
  for (const entry of merged) {
    const definition = publishedForm(entry.chunk.path) === 3 ? bySymbol.get(entry.chunk.symbol) : undefined;
    if (!definition) {
      kept.push(entry);
      continue;
    }
    definition.copies = [...new Set([...definition.copies, entry.chunk.path, ...entry.copies])].sort(byCodeUnits);
    definition.score = Math.max(definition.score, entry.score);
    definition.exactRank = Math.min(definition.exactRank, entry.exactRank);
    definition.prefixRank = Math.min(definition.prefixRank, entry.prefixRank);
  }
  return [...alone, ...kept];
}

function mergeGroup(group: Entry[]): Entry {
  if (group.length === 1) return group[0]!;
  const [first, ...others] = [...group].sort(compareSource);
  return {
    ...first!,
    score: Math.max(...group.map((entry) => entry.score)),
    exactRank: Math.min(...group.map((entry) => entry.exactRank)),
    prefixRank: Math.min(...group.map((entry) => entry.prefixRank)),
    copies: [...new Set(others.map((entry) => entry.chunk.path))].sort(byCodeUnits),
  };
}

/** The source before its compiled forms and declarations, then the shorter path. */
function compareSource(a: Entry, b: Entry): number {
  return (
    publishedForm(a.chunk.path)! - publishedForm(b.chunk.path)! ||
    a.chunk.path.length - b.chunk.path.length ||
    byCodeUnits(a.chunk.path, b.chunk.path) ||
    a.chunk.startLine - b.chunk.startLine
  );
}

/**
 * Symbol matches, best definition first: exact before prefix; then the name as written (case
 * included) before a case-insensitive match; code before tests; public modules before private ones
 * (`_bootsubprocess.py`); a real body before a stub; a definition nested less deeply (a method
 * before a function defined inside a test method); a whole definition or its first part before
 * later fragments; the larger (a definition long enough
 * to be split, then by powers of two of its lines: a thin override or wrapper is rarely the one
 * meant); a shorter path; then the path and line, so the order is stable. Duplicates (a chunk
 * found under several names) count once.
 */
export function rankDefinitions<Entry extends { chunk: ChunkRecord; exact: boolean }>(
  entries: readonly Entry[],
  written: string,
): Entry[] {
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
          traitsOf(chunk) & STUB_TRAIT ? 1 : 0,
          parts.length,
          partNumber(chunk.symbol) <= 1 ? 0 : 1,
          -sizeClass(chunk),
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

/** How large a definition is: log2 of its lines, and above any whole chunk for a split one. */
function sizeClass(chunk: ChunkRecord): number {
  if (partNumber(chunk.symbol) > 0) return 64;
  return Math.floor(Math.log2(chunk.endLine - chunk.startLine + 1));
}

/** A module or package whose name starts with `_` (not `__init__`): private, or a fallback implementation. */
function isPrivatePath(path: string): boolean {
  return path.split('/').some((segment) => /^_(?!_)/.test(segment));
}
