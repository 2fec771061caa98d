/**
 * fault_index_source_code (fault's name and arguments) and fault_search_code (new): src/search
 * behind MCP. Text content: `done` for the index, as fault answers; a readable list of results
 * for the search. structuredContent: the index statistics, or the results with path, lines,
 * symbol, score and code.
 */
import * as z from 'zod';
import { CancelledError } from '../kernel/errors.js';
import { acceptedLangValues } from '../search/languages.js';
import {
  checkIncludeDirs,
  DEFAULT_SEARCH_LIMIT,
  MAX_INCLUDE_CHARS,
  MAX_INCLUDE_DIRS,
  MAX_LISTED_DIRECTORIES,
  MAX_QUERY_CHARS,
  MAX_SEARCH_LIMIT,
} from '../search/limits.js';
import type { ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';

const sourceDirDescription = 'Absolute path or file:// URI of the source tree (a directory)';

export function registerSearchTools(tools: ToolRegistry, ctx: ToolContext): void {
  registerIndexTool(tools, ctx);
  registerSearchTool(tools, ctx);
}

/** src/search (SQLite, embedders, tree-sitter) loads on the first call, not when the server starts. */
async function domain(ctx: ToolContext) {
  const index = await import('../search/index.js');
  return { index, settings: index.indexSettingsFrom(ctx.config) };
}

function registerIndexTool(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_index_source_code',
      toolset: 'search',
      title: 'Index source code',
      description:
        'Indexes a source tree for fault_search_code and the fault_suggest_* tools: chunks every file by definition ' +
        '(tree-sitter) with lexical terms and, with an LLM provider, ' +
        'embeddings (SQLite in the data directory, or Qdrant ' +
        'with QDRANT_URL). Respects .gitignore; skips node_modules, ' +
        'vendor, build output, hidden directories, binaries, ' +
        'files over 1 MB, and (without roots) secret locations; each ' +
        'skipped directory is listed with the include_dirs ' +
        'entry that indexes it. At most 100,000 files and 1 GB. ' +
        'Incremental. Sends progress; cancellable. Text: "done", ' +
        'the skipped directories and any note. Structured: file, chunk and skip counts, seconds, store.',
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
            'Directories to index although skipped by name (dependency, build ' +
              'output, hidden) or ignored by git: a name ' +
              '("dist": every directory so named) or a path inside the tree ("packages/web/dist")',
          ),
      },
      output: {
        note: z.string().optional().describe('Why nothing was found, or that the index was rebuilt'),
        files: z.number().describe('Files in the index = changed + unchanged + empty'),
        changed: z.number().describe('Chunked and embedded in this run'),
        unchanged: z.number(),
        empty: z.number().describe('Nothing to index'),
        chunks: z.number().describe('In the whole index of this tree'),
        embedded: z.number().describe('Chunks embedded in this run'),
        skipped: z.number().describe('Files, directories (trailing /) and symlinks left out'),
        skipped_files: z.object({
          too_large: z.array(z.string()),
          binary: z.array(z.string()),
          unreadable: z.array(z.string()).describe('Files, directories (trailing /) and ignore files'),
          directories: z
            .array(
              z.object({
                path: z.string().describe('Inside the tree, trailing /'),
                reason: z.enum(['dependency', 'build output', 'hidden', 'ignored by .gitignore', 'secret location']),
                include: z.string().optional().describe('The include_dirs entry that indexes it'),
              }),
            )
            .describe(`At most ${MAX_LISTED_DIRECTORIES}`),
          directories_not_listed: z.number().optional(),
          symlinks: z.array(z.string()).describe('Not followed'),
        }),
        removed: z.number().describe('Files whose chunks were removed'),
        seconds: z.number(),
        store: z.string().describe('A local file, or the Qdrant URL and collection'),
        embedder: z.string(),
        lang: z.string(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async ({ source_dir, lang, include_dirs }, call) => {
      const includeDirs = checkIncludeDirs(include_dirs, 'include_dirs');
      const sourceDir = await ctx.access.resolveDirectory(source_dir, 'source_dir');
      const { index, settings } = await domain(ctx);
      const stats = await index
        .indexSourceTree(settings, {
          sourceDir,
          lang,
          includeDirs,
          access: ctx.access,
          signal: call.signal,
          // This thread is the server's: other calls, pings and cancellation must not wait behind a file's parse.
          callerPrepares: false,
          onProgress: ({ filesDone, filesTotal, embedded }) =>
            call.progress(filesDone, filesTotal, `${filesDone}/${filesTotal} files, ${embedded} chunks embedded`),
        })
        .catch((error: unknown) => {
          throw call.signal.aborted ? new CancelledError() : error;
        });
      // "done" as fault answers, then what the model should know, since a client may show it the
      // text alone: the directories left out (and how to include them), and why nothing was found.
      const skipped = index.describeSkippedDirectories(stats, (name) => `include_dirs: [${JSON.stringify(name)}]`);
      const lines = [
        'done',
        ...(skipped ? [`skipped directories: ${skipped}`] : []),
        ...(stats.note ? [`note: ${stats.note}`] : []),
      ];
      return { text: lines.join('\n\n'), structured: index.indexStatsJson(stats) };
    },
  );
}

function registerSearchTool(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_search_code',
      toolset: 'search',
      title: 'Search indexed code',
      description:
        'Finds the code most related to a query (an identifier such as HTTPResponse._read_status, or words) in trees ' +
        'indexed with fault_index_source_code, best first: path, 1-based lines, symbol, score and code. score, 0-1, ' +
        'comparable across hits and queries: 1 when the query is the ' +
        "definition's name, else the share of the query's " +
        'words found (rarer words weigh more; averaged with the ' +
        "embeddings' cosine with a provider), lower for tests, " +
        'internal helpers and the opposite operation. A definition published several times (src/x.ts, dist/x.js, ' +
        'x.d.ts) is one hit, naming the others in copies. Without source_dir, every indexed tree the server may read.',
      input: {
        query: z.string().describe(`Identifiers, words or code (at most ${MAX_QUERY_CHARS} characters)`),
        source_dir: z.string().optional().describe(`${sourceDirDescription}; omitted: every indexed tree`),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_SEARCH_LIMIT)
          .optional()
          .describe(`Results (default ${DEFAULT_SEARCH_LIMIT})`),
      },
      output: {
        results: z.array(
          z.object({
            path: z.string().describe('Absolute path of the file'),
            start_line: z.number().describe('1-based'),
            end_line: z.number().describe('1-based, inclusive'),
            symbol: z.string().describe('Qualified name; <module> for top-level code'),
            kind: z.string(),
            language: z.string(),
            score: z.number().describe('0-1: 1 = the query is its name'),
            copies: z
              .array(z.string())
              .optional()
              .describe('Other files publishing the same definition (compiled, declarations)'),
            code: z.string(),
          }),
        ),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async ({ query, source_dir, limit }, call) => {
      const sourceDir =
        source_dir === undefined ? undefined : await ctx.access.resolveDirectory(source_dir, 'source_dir');
      const { index, settings } = await domain(ctx);
      const hits = await index
        .searchIndex(settings, {
          query,
          sourceDir,
          limit,
          signal: call.signal,
          acceptTree: (tree) =>
            ctx.access.resolveDirectory(tree, 'source_dir').then(
              () => true,
              () => false,
            ),
        })
        .catch((error: unknown) => {
          throw index.withIndexHint(error, () => 'fault_index_source_code');
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
