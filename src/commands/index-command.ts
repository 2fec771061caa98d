/**
 * `faultline index DIR [--lang L]` and `faultline search "QUERY" [--dir DIR]`: the index and
 * search tools without an MCP client, with the same store and embedder selection (LLM flags and
 * API keys, QDRANT_URL, FAULTLINE_DATA_DIR), so the server finds what the CLI indexed.
 */
import { constants as osConstants } from 'node:os';
import { resolve } from 'node:path';
import { Option, type Command } from './commander.js';
import { FileAccess } from '../access.js';
// The search side by its own modules: `search` never loads the indexer (chunking, tree-sitter);
// `index` imports it when it runs.
import type { IndexProgress } from '../search/indexer.js';
import { acceptedLangValues } from '../search/languages.js';
import { checkIncludeDirs, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from '../search/limits.js';
import { indexSettingsFrom } from '../search/open.js';
import { runCommand, withInterrupt } from './run-command.js';
import { runSearchCommand } from './search-action.js';
import { compileWasmForOneShot, ONE_SHOT_INDEX_BYTES } from './wasm-tiers.js';
import { collect, positiveInteger } from './parsers.js';
import { addLlmOptions, addRootOption, type GlobalOptions, type ServerOptionValues } from './flags.js';
import { configFrom } from './flag-values.js';

interface IndexOptions extends ServerOptionValues {
  lang: string;
  includeDir?: string[];
  workers?: number;
}

interface SearchOptions extends ServerOptionValues {
  dir?: string;
  limit: number;
  json?: boolean;
}

export function registerIndexCommands(program: Command, globals: () => GlobalOptions): void {
  const index = program
    .command('index')
    .argument('<dir>', 'source tree to index (a relative path is taken from the current directory)')
    .summary('index a source tree for code search')
    .description(
      'Chunk every source file of DIR by definition, embed the chunks and store them, as the ' +
        'fault_index_source_code tool does. Incremental: unchanged files are not re-embedded. Respects ' +
        '.gitignore; skips node_modules, vendor, build output, binaries and files over 1 MB. ' +
        'Hidden directories are skipped too, and build output (dist, build, target, …) outside a git checkout; ' +
        'the summary names each skipped directory and the --include-dir that indexes it. ' +
        'The store is local (under $FAULTLINE_DATA_DIR, default ~/.local/share/faultline) unless QDRANT_URL ' +
        'is set; embeddings come from the configured LLM provider, else a local lexical embedder. ' +
        "Prints the statistics as JSON on stdout (the tool's structured result) and a summary on stderr, with a " +
        'progress bar when stderr is a terminal. Ctrl-C or SIGTERM stop ' +
        'it at once (exit 130 or 143), leaving the previous index.',
    )
    .addOption(new Option('--lang <lang>', `language to index: ${acceptedLangValues().join(', ')}`).default('all'))
    .option(
      '--include-dir <dir>',
      'index this directory although it is skipped by name (dependency, ' +
        'build output, hidden) or ignored by git: a name (dist) or a path ' +
        'inside DIR (packages/web/dist); repeatable',
      collect,
    )
    .addOption(
      new Option(
        '--workers <n>',
        'threads that parse and chunk files (1: this one only); the index is the same whatever the number',
      )
        .argParser(positiveInteger)
        .env('FAULTLINE_INDEX_WORKERS'),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  faultline index .\n  faultline index ~/src/api ' +
        '--lang python\n  faultline index . --include-dir dist\n  ' +
        'QDRANT_URL=http://127.0.0.1:6333 faultline index .',
    );
  addRootOption(addLlmOptions(index)).action((dir: string, options: IndexOptions) =>
    runCommand(async () => {
      const config = configFrom(globals(), options);
      const access = new FileAccess(config.roots);
      const sourceDir = await access.resolveDirectory(resolve(dir), 'dir');
      const includeDirs = checkIncludeDirs(options.includeDir, '--include-dir');
      const bar = process.stderr.isTTY ? new ProgressBar() : undefined;
      const { indexSourceTree, indexStatsJson, describeSkippedDirectories } = await import('../search/indexer.js');
      const stopWaiting = exitIfStuckAfterInterrupt();
      const stats = await withInterrupt((signal) =>
        indexSourceTree(indexSettingsFrom(config), {
          sourceDir,
          lang: options.lang,
          includeDirs,
          access,
          workers: options.workers,
          signal,
          onProgress: bar?.update,
          onWaitingForLock: (file) =>
            process.stderr.write(`waiting for another indexing run to finish writing ${file}\n`),
          onWalked: ({ bytes }) => {
            if (bytes <= ONE_SHOT_INDEX_BYTES) compileWasmForOneShot();
          },
        }),
      ).finally(() => {
        stopWaiting();
        bar?.finish();
      });
      process.stdout.write(`${JSON.stringify(indexStatsJson(stats), null, 2)}\n`);
      const skipped = describeSkippedDirectories(
        stats,
        (name) => `--include-dir ${/^[\w./-]+$/.test(name) ? name : JSON.stringify(name)}`,
      );
      process.stderr.write(
        `indexed ${stats.files} files of ${stats.tree}: ${stats.chunks} ` +
          `chunks (${stats.changed} files changed, ${stats.removed} ` +
          `removed) in ${stats.seconds} s\n` +
          (skipped ? `skipped directories: ${skipped}\n` : '') +
          (stats.note ? `note: ${stats.note}\n` : ''),
      );
    }),
  );

  const search = program
    .command('search')
    .argument('<query>', 'what to look for: identifiers, words or a snippet')
    .summary('search indexed code')
    .description(
      'Print the indexed chunks that best match QUERY, best first: path:lines, symbol, score and code, as the ' +
        'fault_search_code tool does (--json: the same snake_case ' +
        'fields). The score, 0 to 1, means the same in every ' +
        "search: 1 when QUERY is the definition's name, otherwise the " +
        'share of its words found in the chunk (rarer words ' +
        'weigh more; a word in the name counts fully). Without --dir, every indexed tree.',
    )
    .option('--dir <dir>', 'search this indexed tree only')
    .addOption(
      new Option('--limit <n>', `results, 1-${MAX_SEARCH_LIMIT}`)
        .argParser(positiveInteger)
        .default(DEFAULT_SEARCH_LIMIT),
    )
    .option('--json', 'print the results as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  faultline search "parse config file" --dir .\n  faultline search retryPolicy --limit 3 --json',
    );
  addRootOption(addLlmOptions(search)).action((query: string, options: SearchOptions) =>
    runSearchCommand(query, options, () => configFrom(globals(), options)),
  );
}

/** How long an interrupted run may take to stop by itself before the process exits anyway. */
const INTERRUPT_GRACE_MS = 1500;

/**
 * After Ctrl-C or SIGTERM, withInterrupt aborts the run, which stops at its next step and rolls
 * its transaction back. Should a step not return (a provider request that ignores the abort, a
 * file system that hangs), the process exits anyway after INTERRUPT_GRACE_MS with the signal's
 * code: nothing of the run was committed, and SQLite discards an unfinished transaction, so the
 * index stays the previous one. A second signal finds no handler left and ends the process at once.
 */
function exitIfStuckAfterInterrupt(): () => void {
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((name) => {
    const handler = (): void => {
      setTimeout(() => {
        process.stderr.write(
          `faultline: indexing did not stop within ${INTERRUPT_GRACE_MS} ms ` +
            `of ${name}; exiting (the previous index is kept)\n`,
        );
        process.exit(128 + osConstants.signals[name]);
      }, INTERRUPT_GRACE_MS).unref();
    };
    process.once(name, handler);
    return [name, handler] as const;
  });
  return () => handlers.forEach(([name, handler]) => process.off(name, handler));
}

/** One line on stderr, redrawn: `[########------------]  120/500 files  800 chunks embedded`. */
class ProgressBar {
  private drawn = false;

  readonly update = ({ filesDone, filesTotal, embedded }: IndexProgress): void => {
    const width = 30;
    const filled = filesTotal === 0 ? width : Math.round((filesDone / filesTotal) * width);
    process.stderr.write(
      `\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ` +
        `${filesDone}/${filesTotal} files  ${embedded} chunks embedded`,
    );
    this.drawn = true;
  };

  finish(): void {
    if (this.drawn) process.stderr.write('\n');
  }
}
