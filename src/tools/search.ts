/**
 * fault_index_source_code (fault's name and arguments) and fault_search_code (new): src/index
 * behind MCP. Text content: `done` for the index, as fault answers; a readable list of results
 * for the search. structuredContent: the index statistics, or the results with path, lines,
 * symbol, score and code.
 */
import * as z from 'zod';
import { CancelledError } from '../errors.js';
import { acceptedLangValues } from '../search/languages.js';
import { checkIncludeDirs, DEFAULT_SEARCH_LIMIT, MAX_INCLUDE_CHARS, MAX_INCLUDE_DIRS, MAX_LISTED_DIRECTORIES, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT } from '../search/limits.js';
import type { ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';

const sourceDirDescription = 'Absolute path or file:// URI of the source tree (a directory)';

export function registerSearchTools(tools: ToolRegistry, ctx: ToolContext): void {
  // src/index (SQLite, embedders, tree-sitter) loads on the first call, not when the server starts.
  const domain = async () => {
    const index = await import('../search/index.js');
    return { index, settings: index.indexSettingsFrom(ctx.config) };
  };

  tools.register(
    {
      name: 'fault_index_source_code',
      toolset: 'search',
      title: 'Index source code',
      description:
        'Indexes a source tree for fault_search_code and for the context of the fault_suggest_* tools. Chunks every ' +
        'file by definition with tree-sitter (functions, methods, class skeletons, top-level code) and stores the ' +
        "chunks with code-aware lexical terms and, with a configured LLM provider, its embeddings: in SQLite under the " +
        "server's data directory, or in Qdrant when QDRANT_URL is set; one index per tree and embedding model. " +
        'Respects .gitignore; skips dependency directories (node_modules, vendor, venv, …), build output outside a git ' +
        'checkout (dist, build, target, …), hidden directories, binaries and files over 1 MB; each skipped directory is ' +
        'listed with its reason and the include_dirs entry that indexes it. With no roots, secret locations (~/.aws, ' +
        '~/.ssh, …) are refused. At most ' +
        '100,000 files and 1 GB per index (FAULTLINE_INDEX_MAX_FILES, FAULTLINE_INDEX_MAX_BYTES). ' +
        'Incremental: unchanged files are not re-embedded, deleted files are removed. Sends progress; cancellable. ' +
        'Text: "done", then the skipped directories and any note. Structured: counts of files, chunks, skipped and ' +
        'removed files, seconds, and the store.',
      input: {
        source_dir: z.string().describe(sourceDirDescription),
        lang: z
          .string()
          .optional()
          .describe(`Language to index, or "all" (default): ${acceptedLangValues().join(', ')}`),
        include_dirs: z
          .array(z.string().max(MAX_INCLUDE_CHARS))
          .max(MAX_INCLUDE_DIRS)
          .optional()
          .describe(
            'Directories to index although skipped by name (dependency, build output, hidden) or ignored by git: a name ' +
              '("dist": every directory so named) or a path inside the tree ("packages/web/dist")',
          ),
      },
      output: {
        note: z
          .string()
          .optional()
          .describe('Present when the index was rebuilt from an older format, or when no file was found (says why: what git ignores there)'),
        files: z.number().describe('Source files of the selected languages now in the index'),
        changed: z.number().describe('Files chunked and embedded in this run (new or changed)'),
        unchanged: z.number().describe('Files skipped because their content is already indexed'),
        empty: z.number().describe('Files with nothing to index (empty, comments only) and no chunks indexed before; one that just became empty is changed. files = changed + unchanged + empty'),
        chunks: z.number().describe('Chunks in the whole index of this tree'),
        embedded: z.number().describe('Chunks embedded in this run'),
        skipped: z.number().describe('Files, directories and symlinks left out'),
        skipped_files: z.object({
          too_large: z.array(z.string()).describe('Over 1 MB'),
          binary: z.array(z.string()),
          unreadable: z.array(z.string()).describe('Files, directories (trailing /) and ignore files that could not be read'),
          directories: z
            .array(
              z.object({
                path: z.string().describe('Inside the tree, trailing /'),
                reason: z.enum(['dependency', 'build output', 'hidden', 'ignored by .gitignore', 'secret location']),
                include: z.string().optional().describe('The include_dirs entry that indexes it; absent for a secret location'),
              }),
            )
            .describe(`Directories not entered, by path (at most ${MAX_LISTED_DIRECTORIES})`),
          directories_not_listed: z.number().optional().describe('Skipped directories beyond those listed'),
          symlinks: z.array(z.string()).describe('Not followed (to a directory: trailing /)'),
        }),
        removed: z.number().describe('Files whose chunks were removed (deleted, or no longer indexable)'),
        seconds: z.number(),
        store: z.string().describe('Where the index lives: a local file, or the Qdrant URL and collection'),
        embedder: z.string(),
        lang: z.string(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async ({ source_dir, lang, include_dirs }, call) => {
      const sourceDir = await ctx.access.resolveDirectory(source_dir, 'source_dir');
      const includeDirs = checkIncludeDirs(include_dirs, 'include_dirs');
      const { index, settings } = await domain();
      const stats = await index.indexSourceTree(settings, {
        sourceDir,
        lang,
        includeDirs,
        access: ctx.access,
        signal: call.signal,
        onProgress: ({ filesDone, filesTotal, embedded }) =>
          call.progress(filesDone, filesTotal, `${filesDone}/${filesTotal} files, ${embedded} chunks embedded`),
      }).catch((error: unknown) => {
        throw call.signal.aborted ? new CancelledError() : error;
      });
      // "done" as fault answers, then what the model should know, since a client may show it the
      // text alone: the directories left out (and how to include them), and why nothing was found.
      const skipped = index.describeSkippedDirectories(stats, (name) => `include_dirs: [${JSON.stringify(name)}]`);
      const lines = ['done', ...(skipped ? [`skipped directories: ${skipped}`] : []), ...(stats.note ? [`note: ${stats.note}`] : [])];
      return { text: lines.join('\n\n'), structured: index.indexStatsJson(stats) };
    },
  );

  tools.register(
    {
      name: 'fault_search_code',
      toolset: 'search',
      title: 'Search indexed code',
      description:
        'Finds the code most related to a query in trees indexed with fault_index_source_code: functions, methods, ' +
        'class skeletons and top-level code, best first, each with its file path and 1-based lines, symbol, score and ' +
        'code. score, 0-1, comparable across hits and queries: 1 when the query is the definition\'s name; otherwise the ' +
        'share of the query\'s words found in it, rarer words weighing more, a word in its name counting fully (with an ' +
        'embedding provider, averaged with the embeddings\' cosine); lower for tests, module-level code, internal ' +
        'helpers and the opposite operation (encode for "decode"). A definition published several times (src/x.ts, ' +
        'dist/x.js, x.d.ts) is one hit, the source, naming the others in copies. Give an identifier (urlencode, ' +
        'HTTPResponse._read_status) or words ("cancel a task"). Without source_dir, searches every indexed tree the ' +
        'server may read. ' +
        `limit: 1-${MAX_SEARCH_LIMIT}, default ${DEFAULT_SEARCH_LIMIT}.`,
      input: {
        query: z.string().describe(`What to look for: identifiers, words, or a code snippet (at most ${MAX_QUERY_CHARS} characters)`),
        source_dir: z.string().optional().describe(`${sourceDirDescription}; omitted: every indexed tree`),
        limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional().describe(`Results to return (default ${DEFAULT_SEARCH_LIMIT})`),
      },
      output: {
        results: z.array(
          z.object({
            path: z.string().describe('Absolute path of the file'),
            start_line: z.number().describe('1-based'),
            end_line: z.number().describe('1-based, inclusive'),
            symbol: z.string().describe('Qualified name; #partN for a split definition, <module> for top-level code'),
            kind: z.string(),
            language: z.string(),
            score: z.number().describe('0-1: 1 = the query is its name'),
            copies: z.array(z.string()).optional().describe('Other files publishing the same definition (compiled, declarations)'),
            code: z.string(),
          }),
        ),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async ({ query, source_dir, limit }, call) => {
      const sourceDir = source_dir === undefined ? undefined : await ctx.access.resolveDirectory(source_dir, 'source_dir');
      const { index, settings } = await domain();
      const hits = await index.searchIndex(settings, {
        query,
        sourceDir,
        limit,
        signal: call.signal,
        acceptTree: (tree) => ctx.access.resolveDirectory(tree, 'source_dir').then(() => true, () => false),
      });
      return {
        text: index.renderSearchHits(hits),
        structured: {
          results: hits.map(index.searchHitJson),
        },
      };
    },
  );
}
