/**
 * What `faultline search` does once its arguments are read: the commander command
 * (index-command.ts) and the plain path cli.ts takes for a plain search (plain-search.ts) both
 * run it, so the two give the same output, errors and exit codes.
 */
import { resolve } from 'node:path';
import { FileAccess } from '../access.js';
import type { Config } from '../config.js';
import { withIndexHint } from '../search/errors.js';
import { indexSettingsFrom } from '../search/open.js';
import { renderSearchHits, searchHitJson, searchIndex } from '../search/search.js';
import { runCommand, withInterrupt } from './run-command.js';

export interface SearchCommandOptions {
  dir?: string | undefined;
  /** Undefined: search.ts's default. */
  limit?: number | undefined;
  json?: boolean | undefined;
}

/**
 * `config` is called inside runCommand, so that a usage error it raises exits 2 like the search's own;
 * `write` prints the result (the plain search's bundle writes to the descriptor, plain-search-main.ts).
 */
export function runSearchCommand(
  query: string,
  options: SearchCommandOptions,
  config: () => Config,
  write: (text: string) => void = (text) => process.stdout.write(text),
): Promise<void> {
  return runCommand(async () => {
    const settings = config();
    const access = new FileAccess(settings.roots);
    const sourceDir =
      options.dir === undefined ? undefined : await access.resolveDirectory(resolve(options.dir), 'dir');
    const hits = await withInterrupt((signal) =>
      searchIndex(indexSettingsFrom(settings), {
        query,
        sourceDir,
        limit: options.limit,
        signal,
        acceptTree: (tree) =>
          access.resolveDirectory(tree).then(
            () => true,
            () => false,
          ),
      }).catch((error: unknown) => {
        throw withIndexHint(error, (tree) => `faultline index ${tree || 'DIR'}`);
      }),
    );
    write(options.json ? `${JSON.stringify(hits.map(searchHitJson), null, 2)}\n` : `${renderSearchHits(hits)}\n`);
  });
}
