/**
 * Source indexing and code search.
 *
 * Public API:
 * - `indexSettingsFrom(config, env?)` → IndexSettings: the data directory, the LLM config (which
 *   embedding provider) and the environment (API keys, QDRANT_URL, QDRANT_API_KEY).
 * - `indexSourceTree(settings, {sourceDir, lang?, includeDirs?, access?, signal?, onProgress?})` →
 *   IndexStats: walks the tree (walk.ts: .gitignore respected; dependency, build, hidden and, by
 *   `access`'s rules, secret directories skipped and listed; binaries and files over 1 MB
 *   skipped), chunks each new or changed file by definition (src/code/chunk.ts), embeds the
 *   chunks and replaces the file's old ones; removes the chunks of files that are gone. `lang` is
 *   `all` (default) or a language name (`acceptedLangValues()`); unknown: an InputError.
 *   `indexStatsJson(stats)` is the JSON form the tool and the CLI print (snake_case), and
 *   `describeSkippedDirectories` the skipped directories in a line, with how to include each.
 * - `searchIndex(settings, {query, sourceDir?, limit?, acceptTree?, signal?})` → SearchHit[]
 *   `{path, tree, relativePath, startLine, endLine, symbol, kind, language, score, code}`, best
 *   first. A `sourceDir` inside an indexed tree searches that tree's index, limited to the chunks
 *   under it; without `sourceDir`, a tree `acceptTree` refuses is still searched within the
 *   directories inside it that it accepts (roots inside the tree). This is also the retrieval
 *   context for the LLM suggest tools: pass the function under review as `query` and map `code`
 *   to their `text`. `renderSearchHits(hits)` is the text form, `searchHitJson(hit)` the JSON one
 *   (snake_case, as MCP and `faultline search --json` print it). Search is hybrid: code-aware
 *   lexical (BM25) and symbol-name channels, plus the embedding channel for a provider's model;
 *   fusion.ts gives each hit one score from 0 to 1 (1: the query is its name; else the lexical
 *   score, averaged with the embedding similarity when there is one, then lowered by fixed factors).
 *
 * `sourceDir` must already be checked by the caller (FileAccess.resolveDirectory: absolute,
 * inside the roots, a directory). The embedder is the configured provider's model, else the
 * local hashed embedder (whose vectors the local store does not keep: its lexical channel does that
 * work); the store is Qdrant when QDRANT_URL is set, else a local SQLite database under
 * `<dataDir>/index`; both are one per tree and embedder. Failures outside the caller's arguments
 * (Qdrant unreachable, dimension mismatch, a damaged index) are IndexErrors naming the URL or file;
 * a cancelled run throws CancelledError and leaves the previous index in place.
 */
export {
  indexSourceTree,
  indexStatsJson,
  describeSkippedDirectories,
  chunkId,
  embeddingText,
  type IndexOptions,
  type IndexProgress,
  type IndexStats,
} from './indexer.js';
export {
  searchIndex,
  searchHitJson,
  renderSearchHits,
  DEFAULT_SEARCH_LIMIT,
  MAX_QUERY_CHARS,
  MAX_SEARCH_LIMIT,
  type SearchHit,
  type SearchOptions,
} from './search.js';
export { indexSettingsFrom, type IndexSettings } from './open.js';
export { acceptedLangValues } from './languages.js';
export { IndexError, withIndexHint } from './errors.js';
/** The files an index of a tree takes (what .gitignore and the dependency directories leave), without indexing them. */
export { walkSourceTree, type WalkResult, type WalkedFile, type IndexLimits } from './walk.js';
export { LanguageSelection } from './languages.js';
