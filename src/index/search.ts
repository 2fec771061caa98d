/**
 * Searches indexed trees for the chunks closest to a query: the code search tool, and the
 * retrieval context of the LLM suggest tools (which pass the function under review as the query,
 * not their whole prompt).
 *
 * The query is embedded by the same embedder that indexing selects from the same settings, so it
 * lands in the same store. With `sourceDir`, that tree's index is searched (never indexed: an
 * error saying to index it first); without, every tree indexed under the data directory with this
 * embedder that `acceptTree` allows, merged by score.
 */
import { isAbsolute, join } from 'node:path';
import { ToolInputError } from '../errors.js';
import type { ChunkKind } from '../code/chunk.js';
import { selectEmbedder } from './embedder.js';
import { IndexError } from './errors.js';
import { canonicalTree, indexedTrees } from './location.js';
import { openStore, type IndexSettings } from './open.js';
import { normalised, type VectorStore } from './store.js';

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;
/** About 8,000 tokens, the most any provider's embedding model takes in one input. */
export const MAX_QUERY_CHARS = 32_000;

export interface SearchOptions {
  query: string;
  /** An absolute directory the caller has already checked; omitted: every indexed tree. */
  sourceDir?: string | undefined;
  /** 1..MAX_SEARCH_LIMIT; default DEFAULT_SEARCH_LIMIT. */
  limit?: number | undefined;
  /** Without sourceDir: which indexed trees may be searched (e.g. only those inside the roots). */
  acceptTree?: ((tree: string) => Promise<boolean>) | undefined;
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
  /** Cosine similarity of query and chunk, -1..1 (higher is closer). */
  score: number;
  /** The chunk's text as indexed (a class is its skeleton; `<module>` its top-level lines). */
  code: string;
}

export async function searchIndex(settings: IndexSettings, options: SearchOptions): Promise<SearchHit[]> {
  const query = options.query.trim();
  if (query === '') throw new ToolInputError('query: empty; give words or identifiers to look for (e.g. "parse config file")');
  if (query.length > MAX_QUERY_CHARS) {
    throw new ToolInputError(`query: ${query.length} characters is too long; at most ${MAX_QUERY_CHARS} (words, identifiers or one function)`);
  }
  const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw new ToolInputError(`limit: ${limit} is not accepted; give a whole number from 1 to ${MAX_SEARCH_LIMIT}`);
  }
  const embedder = selectEmbedder(settings.llm, settings.env);
  const stores: Array<{ tree: string; store: VectorStore }> = [];
  for (const tree of await treesToSearch(settings, options)) {
    const { store, exists } = await openStore(settings, tree, embedder);
    if (exists) stores.push({ tree, store });
  }
  if (stores.length === 0) {
    const where = options.sourceDir !== undefined ? `${options.sourceDir} has not been indexed` : 'no source tree has been indexed';
    throw new IndexError(`${where} with ${embedder.description}; index it first (fault_index_source_code or \`faultline index DIR\`)`);
  }

  const [vector] = await embedder.embed([query], options.signal);
  const unit = normalised(vector!);
  // The local embedder finds nothing to compare in punctuation or keywords alone: every score would be 0.
  if (unit.every((value) => value === 0)) {
    throw new ToolInputError(`query: "${query.slice(0, 80)}" has no words or identifiers to look for (keywords such as "function" do not count)`);
  }
  const hits: SearchHit[] = [];
  for (const { tree, store } of stores) {
    for (const { chunk, score } of await store.search(unit, limit)) {
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
        code: chunk.text,
      });
    }
  }
  return hits.sort((a, b) => b.score - a.score).slice(0, limit);
}

async function treesToSearch(settings: IndexSettings, options: SearchOptions): Promise<string[]> {
  if (options.sourceDir !== undefined) {
    if (!isAbsolute(options.sourceDir)) throw new ToolInputError(`source_dir: ${options.sourceDir} must be an absolute path`);
    return [await canonicalTree(options.sourceDir)];
  }
  const accepted: string[] = [];
  for (const tree of await indexedTrees(settings.dataDir)) {
    if (!options.acceptTree || (await options.acceptTree(tree))) accepted.push(tree);
  }
  return accepted;
}

/** Hits as people read them: `1. path:start-end symbol (kind, score 0.612)` and the code, fenced. */
export function renderSearchHits(hits: readonly SearchHit[]): string {
  if (hits.length === 0) return 'No indexed code matches.';
  return hits
    .map(
      (hit, index) =>
        `${index + 1}. ${hit.path}:${hit.startLine}-${hit.endLine} ${hit.symbol} (${hit.kind}, score ${hit.score.toFixed(3)})\n` +
        `\`\`\`${hit.language}\n${hit.code}\n\`\`\``,
    )
    .join('\n\n');
}
