/**
 * Searches indexed trees for the chunks closest to a query: the code search tool, and the
 * retrieval context of the LLM suggest tools (which pass the function under review as the query,
 * not their whole prompt).
 *
 * The query is embedded by the same embedder that indexing selects from the same settings, so it
 * lands in the same store. With `sourceDir`, the index of that tree, or else of the innermost
 * indexed tree containing it, limited to the chunks under `sourceDir` (never indexed: an error
 * saying to index it first); without, every tree indexed under the data directory with this
 * embedder, merged by score: whole where `acceptTree` allows the tree, else limited to the
 * directories inside it that `acceptTree` allows (a tree that contains an allowed root).
 */
import { isAbsolute, join, relative, sep } from 'node:path';
import { byCodeUnits } from '../order.js';
import { InputError } from '../kernel/errors.js';
import type { ChunkKind } from '../code/chunk.js';
import { selectEmbedder, type Embedder } from './embedder.js';
import { IndexError } from './errors.js';
import { canonicalTree, indexedTrees } from './location.js';
import { openStore, unfinishedLocalIndexes, type IndexSettings } from './open.js';
import { normalised, type VectorStore } from './store.js';
import { queryTerms, symbolQuery, symbolQueryText } from './tokens.js';
import { queryAction, queryConcepts, queryOperations } from './vocabulary.js';

import { DEFAULT_SEARCH_LIMIT, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT } from './limits.js';

export { DEFAULT_SEARCH_LIMIT, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT };

export interface SearchOptions {
  query: string;
  /** An absolute directory the caller has already checked; omitted: every indexed tree. */
  sourceDir?: string | undefined;
  /** 1..MAX_SEARCH_LIMIT; default DEFAULT_SEARCH_LIMIT. */
  limit?: number | undefined;
  /**
   * Without sourceDir: which directories may be searched (e.g. only those inside the roots). Asked
   * of each indexed tree; of a tree it refuses, of the directories inside it, from the top down.
   */
  acceptTree?: ((directory: string) => Promise<boolean>) | undefined;
  signal?: AbortSignal | undefined;
}

export interface SearchHit {
  /** Absolute path of the file. */
  path: string;
  /** The indexed tree it belongs to, and the path inside it. */
  tree: string;
  relativePath: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  symbol: string;
  kind: ChunkKind;
  language: string;
  /**
   * How well it matches the query, 0 to 1, comparable across hits and queries (fusion.ts): 1 when
   * the query is its name; otherwise the share of the query's words found in it, weighed by
   * rarity, counting fully in its name (with an embedding provider, averaged with the cosine).
   */
  score: number;
  /** Absolute paths of other files publishing the same definition (compiled, declarations); the hit is the source. */
  copies: string[];
  /** The chunk's text as indexed (a class is its skeleton; `<module>` its top-level lines), cut at MAX_HIT_CODE_CHARS.
   * */
  code: string;
}

export async function searchIndex(settings: IndexSettings, options: SearchOptions): Promise<SearchHit[]> {
  const query = options.query.trim();
  if (query === '')
    throw new InputError('query: empty; give words or identifiers to look for (e.g. "parse config file")');
  if (query.length > MAX_QUERY_CHARS) {
    throw new InputError(
      `query: ${query.length} characters is too long; at most ${MAX_QUERY_CHARS} (words, identifiers or one function)`,
    );
  }
  const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw new InputError(`limit: ${limit} is not accepted; give a whole number from 1 to ${MAX_SEARCH_LIMIT}`);
  }
  const embedder = await selectEmbedder(settings.llm, settings.env);
  const targets =
    options.sourceDir !== undefined
      ? await indexContaining(settings, embedder, options.sourceDir)
      : await acceptedIndexes(settings, embedder, options.acceptTree);
  if (targets.length === 0) {
    await explainUnfinished(settings, embedder, options.sourceDir);
    const where =
      options.sourceDir !== undefined
        ? `${options.sourceDir} has not been indexed (nor a directory containing it)`
        : 'no source tree has been indexed';
    // An index run that finds no source file writes no index: say so, or a user who just indexed reads a contradiction.
    throw new IndexError(
      `${where} with ${embedder.description}; index it first ` +
        '(an index run that finds no source file leaves no index; its note says why)',
      options.sourceDir ?? '',
    );
  }

  const terms = queryTerms(query);
  const symbol = symbolQuery(query);
  // Punctuation or keywords alone give the lexical channel nothing to look for.
  if (terms.length === 0 && symbol === undefined) {
    throw new InputError(
      `query: "${query.slice(0, 80)}" has no words or identifiers to ` +
        `look for (words such as "the" and "of" do not count)`,
    );
  }
  const vector = targets.some(({ store }) => store.wantsVectors)
    ? normalised((await embedder.embed([query], options.signal))[0]!)
    : undefined;
  const concepts = queryConcepts(query);
  const operations = queryOperations(query);
  const action = queryAction(query, concepts);
  const hits: Array<SearchHit & { rank: number }> = [];
  for (const { tree, store, within } of targets) {
    let rank = 0;
    const storeQuery = {
      terms,
      concepts,
      operations,
      action,
      symbol,
      symbolText: symbolQueryText(query),
      vector: store.wantsVectors ? vector : undefined,
    };
    for (const { chunk, score, copies } of await store.search(storeQuery, limit, within)) {
      hits.push({
        path: join(tree, ...chunk.path.split('/')),
        tree,
        relativePath: chunk.path,
        startLine: chunk.startLine,
        endLine: chunk.endLine,
        symbol: chunk.symbol,
        kind: chunk.kind,
        language: chunk.language,
        score,
        copies: (copies ?? []).map((path) => join(tree, ...path.split('/'))),
        code: shownCode(chunk),
        rank: rank++,
      });
    }
  }
  // Scores mean the same in every index, so hits of several trees merge by score; a tie keeps each
  // index's own order (exact name matches all score 1), then goes by path.
  return hits
    .sort((a, b) => b.score - a.score || a.rank - b.rank || byCodeUnits(a.path, b.path) || a.startLine - b.startLine)
    .slice(0, limit)
    .map(({ rank: _rank, ...hit }) => hit);
}

/**
 * The most characters of a chunk a hit shows. The chunker keeps chunks near 2,000 characters by
 * cutting between statements and lines, but a line it cannot cut (a minified bundle, a data
 * literal on one line) stays whole, up to the 1 MB file limit: ten such hits would send the model
 * megabytes. The rest is named, with the lines to read.
 */
export const MAX_HIT_CODE_CHARS = 8_000;

function shownCode(chunk: { text: string; startLine: number; endLine: number }): string {
  const { text } = chunk;
  if (text.length <= MAX_HIT_CODE_CHARS) return text;
  // Not inside a UTF-16 surrogate pair.
  let end = MAX_HIT_CODE_CHARS;
  if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
  const lines =
    chunk.startLine === chunk.endLine ? `line ${chunk.startLine}` : `lines ${chunk.startLine}-${chunk.endLine}`;
  return `${text.slice(0, end)}\n… (${text.length - end} more characters not shown; read ${lines} of the file)`;
}

/**
 * With nothing to search: when a first index run was interrupted before it committed (it leaves a
 * database with no index in it), say so and what to do, rather than "not indexed".
 */
async function explainUnfinished(
  settings: IndexSettings,
  embedder: Embedder,
  sourceDir: string | undefined,
): Promise<void> {
  const again = 'index it again; if a run is still going, wait for it to finish';
  if (sourceDir !== undefined) {
    const tree = await canonicalTree(sourceDir);
    const { unfinished } = await openStore(settings, tree, embedder);
    if (unfinished) {
      throw new IndexError(
        `${tree}: an index run was interrupted before it finished ` +
          `(Ctrl-C, a kill or a failure), so nothing is indexed yet — ${again}`,
        tree,
      );
    }
    return;
  }
  const unfinished = await unfinishedLocalIndexes(settings, embedder);
  if (unfinished.length > 0) {
    throw new IndexError(
      `no source tree has been indexed with ${embedder.description}: ${unfinished.length === 1 ? 'an index run was' : `${unfinished.length} index runs were`} ` +
        `interrupted before ${unfinished.length === 1 ? 'it' : 'they'} ` +
        `finished (Ctrl-C, a kill or a failure; ${unfinished.join(', ')}) ` +
        `— ${again}`,
      '',
    );
  }
}

/** An index to search, whole or only under some of its directories (relative, '/'-separated). */
interface SearchTarget {
  tree: string;
  store: VectorStore;
  within?: string[] | undefined;
}

/** The index of `sourceDir`, else of the innermost indexed tree that contains it, limited to it. */
async function indexContaining(
  settings: IndexSettings,
  embedder: Embedder,
  sourceDir: string,
): Promise<SearchTarget[]> {
  if (!isAbsolute(sourceDir)) throw new InputError(`source_dir: ${sourceDir} must be an absolute path`);
  const dir = await canonicalTree(sourceDir);
  const indexOf = async (tree: string): Promise<SearchTarget | undefined> => {
    const { store, exists, legacy } = await openStore(settings, tree, embedder);
    if (legacy) {
      throw new IndexError(
        `${tree} was indexed by an older faultline in a format this version does not read; index it again: ` +
          'it is rebuilt once',
        tree,
      );
    }
    if (!exists) return undefined;
    const inside = relativeInside(tree, dir)!;
    return { tree, store, within: inside === '' ? undefined : [inside] };
  };
  // The directory's own index first: only without one are the other trees' markers read.
  const own = await indexOf(dir);
  if (own) return [own];
  const containing = (await indexedTrees(settings.dataDir))
    .filter((tree) => tree !== dir && relativeInside(tree, dir) !== undefined)
    .sort((a, b) => b.length - a.length);
  for (const tree of containing) {
    const target = await indexOf(tree);
    if (target) return [target];
  }
  return [];
}

async function acceptedIndexes(
  settings: IndexSettings,
  embedder: Embedder,
  acceptTree: SearchOptions['acceptTree'],
): Promise<SearchTarget[]> {
  const targets: SearchTarget[] = [];
  for (const tree of await indexedTrees(settings.dataDir)) {
    const whole = !acceptTree || (await acceptTree(tree));
    const { store, exists } = await openStore(settings, tree, embedder);
    if (!exists) continue;
    if (whole) {
      targets.push({ tree, store });
      continue;
    }
    const within = await acceptedDirectories(tree, [...(await store.fileHashes()).keys()], acceptTree);
    if (within.length > 0) targets.push({ tree, store, within });
  }
  return targets;
}

/**
 * The highest directories of `tree` holding indexed files that `accept` allows. Roots are whole
 * subtrees, so below an allowed directory nothing more is asked; below a refused one, each child.
 */
async function acceptedDirectories(
  tree: string,
  paths: readonly string[],
  accept: (directory: string) => Promise<boolean>,
): Promise<string[]> {
  const children = new Map<string, Set<string>>();
  for (const path of paths) {
    const parts = path.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      const parent = parts.slice(0, depth - 1).join('/');
      const child = parts.slice(0, depth).join('/');
      let set = children.get(parent);
      if (!set) children.set(parent, (set = new Set()));
      set.add(child);
    }
  }
  const accepted: string[] = [];
  const pending = [...(children.get('') ?? [])];
  for (let dir = pending.shift(); dir !== undefined; dir = pending.shift()) {
    if (await accept(join(tree, ...dir.split('/')))) accepted.push(dir);
    else pending.push(...(children.get(dir) ?? []));
  }
  return accepted;
}

/** `dir` relative to `tree` with '/' separators ('' for the tree itself); undefined when outside it. */
function relativeInside(tree: string, dir: string): string | undefined {
  const rel = relative(tree, dir);
  if (rel === '') return '';
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}

/** A hit as the tool's structuredContent and `faultline search --json` print it: snake_case, score to 3 places. */
export function searchHitJson(hit: SearchHit) {
  return {
    path: hit.path,
    start_line: hit.startLine,
    end_line: hit.endLine,
    symbol: hit.symbol,
    kind: hit.kind,
    language: hit.language,
    score: Math.round(hit.score * 1000) / 1000,
    ...(hit.copies.length > 0 ? { copies: hit.copies } : {}),
    code: hit.code,
  };
}

/** Hits as people read them: `1. path:start-end symbol (kind, score 0.612)`, its copies, and the code, fenced. */
export function renderSearchHits(hits: readonly SearchHit[]): string {
  if (hits.length === 0) return 'No indexed code matches.';
  return hits
    .map(
      (hit, index) =>
        `${index + 1}. ${hit.path}:${hit.startLine}-${hit.endLine} ${hit.symbol} ` +
        `(${hit.kind}, score ${hit.score.toFixed(3)})\n` +
        (hit.copies.length > 0 ? `also published as: ${hit.copies.join(', ')}\n` : '') +
        `\`\`\`${hit.language}\n${hit.code}\n\`\`\``,
    )
    .join('\n\n');
}
