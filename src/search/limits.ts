/** The index and search limits, in a leaf module so the MCP server can quote them in schemas without loading the index.
 * */
import { InputError } from '../kernel/errors.js';

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;
/** About 8,000 tokens, the most any provider's embedding model takes in one input. */
export const MAX_QUERY_CHARS = 32_000;

/** The most skipped directories an index result lists one by one (a monorepo can have thousands of node_modules). */
export const MAX_LISTED_DIRECTORIES = 500;
/** include_dirs: at most this many entries, each at most this long. */
export const MAX_INCLUDE_DIRS = 100;
export const MAX_INCLUDE_CHARS = 1000;

/**
 * Checks the directories to include (names or tree-relative paths): a path that leaves the tree or
 * is absolute cannot name a directory inside it. Returns them trimmed, blanks dropped.
 */
export function checkIncludeDirs(entries: readonly string[] | undefined, what: string): string[] | undefined {
  if (entries === undefined) return undefined;
  if (entries.length > MAX_INCLUDE_DIRS)
    throw new InputError(`${what}: ${entries.length} entries; at most ${MAX_INCLUDE_DIRS}`);
  const kept: string[] = [];
  entries.forEach((entry, index) => {
    const trimmed = entry.trim();
    if (trimmed === '') return;
    if (trimmed.length > MAX_INCLUDE_CHARS)
      throw new InputError(`${what}[${index}]: ${trimmed.length} characters; at most ${MAX_INCLUDE_CHARS}`);
    if (/^([/\\]|[a-z]:)/i.test(trimmed) || trimmed.split(/[/\\]/).includes('..')) {
      throw new InputError(
        `${what}[${index}]: "${trimmed.slice(0, 80)}" is not a directory ` +
          `name or a path inside the tree (no leading /, no ..)`,
      );
    }
    kept.push(trimmed);
  });
  return kept;
}
