/**
 * Lists the source files of a tree that an index takes.
 *
 * Skipped without being counted: what .gitignore ignores (every .gitignore in the tree, plus
 * .git/info/exclude), dependency and build directories (node_modules, vendor, dist, build, target,
 * …), hidden directories, symlinks (they could leave the tree or loop), and files the language
 * selection does not take. Counted as skipped: files over the size limit, and directories that
 * cannot be read. Binary files are recognised when read (src/index/indexer.ts), since that needs
 * their bytes.
 *
 * Paths are tree-relative POSIX paths, sorted, so an index is the same on every run and OS.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CancelledError, messageOf } from '../errors.js';
import { IndexError } from './errors.js';
import { IgnoreFile, isIgnored } from './gitignore.js';
import type { IndexLanguage, LanguageSelection } from './languages.js';

/** Files larger than this are not indexed (generated or vendored code, data). */
export const MAX_INDEXED_FILE_BYTES = 1024 * 1024;

/** Directory names never entered: dependencies, build output, caches. */
const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set([
  'node_modules',
  'bower_components',
  'vendor',
  'third_party',
  'dist',
  'build',
  'out',
  'target',
  'obj',
  'coverage',
  '__pycache__',
  'venv',
  'site-packages',
]);

export interface WalkedFile {
  /** Tree-relative POSIX path. */
  path: string;
  absolutePath: string;
  language: IndexLanguage;
  size: number;
}

export interface WalkResult {
  files: WalkedFile[];
  /** Files the selection takes but that are over MAX_INDEXED_FILE_BYTES. */
  tooLarge: string[];
  /** Directories that could not be listed (permissions), with a trailing slash. */
  unreadable: string[];
}

export async function walkSourceTree(root: string, selection: LanguageSelection, signal?: AbortSignal): Promise<WalkResult> {
  const result: WalkResult = { files: [], tooLarge: [], unreadable: [] };
  const rootIgnores = [await readIgnoreFile(join(root, '.git', 'info', 'exclude'), '')].flatMap((file) => (file ? [file] : []));
  await walkDirectory(root, '', rootIgnores, selection, result, signal);
  result.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  result.tooLarge.sort();
  result.unreadable.sort();
  return result;
}

async function walkDirectory(
  root: string,
  relativeDir: string,
  inheritedIgnores: readonly IgnoreFile[],
  selection: LanguageSelection,
  result: WalkResult,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) throw new CancelledError('indexing was cancelled');
  const absoluteDir = join(root, relativeDir);
  const own = await readIgnoreFile(join(absoluteDir, '.gitignore'), relativeDir);
  const ignores = own ? [...inheritedIgnores, own] : inheritedIgnores;
  let entries;
  try {
    entries = await readdir(absoluteDir, { withFileTypes: true });
  } catch (error) {
    // Without the tree itself there is nothing to index (and nothing to remove from the index).
    if (relativeDir === '') throw new IndexError(`cannot list ${root}: ${messageOf(error)}`);
    // An unreadable subdirectory is left out, as git does, rather than failing the whole index.
    result.unreadable.push(`${relativeDir}/`);
    return;
  }
  const files: Array<Omit<WalkedFile, 'size'>> = [];
  for (const entry of entries) {
    const path = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || SKIPPED_DIRECTORIES.has(entry.name)) continue;
      if (isIgnored(ignores, path, true)) continue;
      await walkDirectory(root, path, ignores, selection, result, signal);
    } else if (entry.isFile()) {
      const language = selection.languageOf(entry.name);
      if (language && !isIgnored(ignores, path, false)) files.push({ path, absolutePath: join(absoluteDir, entry.name), language });
    }
  }
  // The sizes of a directory's files at once: stat calls are independent I/O.
  const sizes = await Promise.all(files.map((file) => stat(file.absolutePath).then((info) => info.size, () => undefined)));
  files.forEach((file, index) => {
    const size = sizes[index];
    if (size === undefined) return;
    if (size > MAX_INDEXED_FILE_BYTES) result.tooLarge.push(file.path);
    else result.files.push({ ...file, size });
  });
}

async function readIgnoreFile(path: string, base: string): Promise<IgnoreFile | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : new IgnoreFile(base, text);
}
