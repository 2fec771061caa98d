/**
 * Lists the source files of a tree that an index takes.
 *
 * Skipped without being counted: what git ignores (every .gitignore from the top of the enclosing
 * git checkout down, plus .git/info/exclude), dependency directories (node_modules, vendor, …),
 * hidden directories, and files the language selection does not take. Not followed but listed
 * (symlinks): symbolic links to a directory or to a file the selection takes — they could leave
 * the tree or loop, and a user whose sources sit behind one must learn why they are missing.
 * Listed as skipped (skippedDirectories): directories left out for
 * their name (dependencies, and build output outside a checkout). Build output (dist, build, target, …) is what .gitignore says in a git
 * checkout, where a tracked directory of that name is source (Go's go/build); outside one, those
 * names are skipped. Counted as skipped: files over the size limit, and directories that cannot
 * be read. Binary files are recognised when read (src/search/indexer.ts), since that needs their
 * bytes.
 *
 * Paths are tree-relative POSIX paths, sorted, so an index is the same on every run and OS.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { CancelledError, messageOf } from '../errors.js';
import { IndexError } from './errors.js';
import { ToolInputError } from '../errors.js';
import { IgnoreFile, isIgnored } from './gitignore.js';
import type { IndexLanguage, LanguageSelection } from './languages.js';
import { byCodeUnits } from '../order.js';

/** Files larger than this are not indexed (generated or vendored code, data). */
export const MAX_INDEXED_FILE_BYTES = 1024 * 1024;

/**
 * How much one index takes, so that indexing `/` by mistake stops early with an error saying which
 * limit and how to raise it, instead of running for minutes and exhausting memory.
 */
export interface IndexLimits {
  /** Source files of the selected languages (after ignores and the size limit). */
  maxFiles: number;
  /** Their total size in bytes. */
  maxBytes: number;
}

export const MAX_FILES_ENV = 'FAULTLINE_INDEX_MAX_FILES';
export const MAX_BYTES_ENV = 'FAULTLINE_INDEX_MAX_BYTES';
/** The Python standard library is ~2,000 files and 40 MB; the Linux kernel ~60,000 and 1.2 GB of C. */
export const DEFAULT_INDEX_LIMITS: IndexLimits = { maxFiles: 100_000, maxBytes: 1024 * 2 ** 20 };

/** The limits, from the environment where set (a positive whole number), else the defaults. */
export function indexLimitsFrom(env: NodeJS.ProcessEnv): IndexLimits {
  const read = (name: string, fallback: number): number => {
    const text = env[name]?.trim();
    if (!text) return fallback;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < 1) throw new IndexError(`${name} must be a positive whole number (got "${text}")`);
    return value;
  };
  return { maxFiles: read(MAX_FILES_ENV, DEFAULT_INDEX_LIMITS.maxFiles), maxBytes: read(MAX_BYTES_ENV, DEFAULT_INDEX_LIMITS.maxBytes) };
}

/** A tree over an index limit: the caller's argument, so the tools answer it as a ToolInputError. */
export class IndexLimitError extends ToolInputError {}

/** Directory names never entered: dependencies and caches. */
const DEPENDENCY_DIRECTORIES: ReadonlySet<string> = new Set([
  'node_modules',
  'bower_components',
  'vendor',
  'third_party',
  '__pycache__',
  'venv',
  'site-packages',
]);

/** Directory names taken for build output when no git checkout says what it ignores. */
const BUILD_DIRECTORIES: ReadonlySet<string> = new Set(['dist', 'build', 'out', 'target', 'obj', 'coverage']);

export interface WalkedFile {
  /** Tree-relative POSIX path. */
  path: string;
  absolutePath: string;
  language: IndexLanguage;
  size: number;
}

export interface WalkResult {
  files: WalkedFile[];
  /** Directories not entered because of their name (dependencies, build output), with a trailing slash. */
  skippedDirectories: string[];
  /** Files the selection takes but that are over MAX_INDEXED_FILE_BYTES. */
  tooLarge: string[];
  /** Directories that could not be listed (permissions), with a trailing slash. */
  unreadable: string[];
  /** Symbolic links not followed: to a directory (with a trailing slash), or named like a selected source file. */
  symlinks: string[];
  /**
   * What git's ignore rules left out, counted so that an index that finds nothing can say why:
   * files the selection would take, and directories not entered (their files are not counted).
   */
  ignored: { files: number; directories: number };
}

interface Walk {
  root: string;
  /** The tree's path inside its git checkout ('' at its top, or outside any checkout): .gitignore rules see these paths. */
  prefix: string;
  skippedNames: ReadonlySet<string>;
  selection: LanguageSelection;
  result: WalkResult;
  signal: AbortSignal | undefined;
  limits: IndexLimits;
  /** Bytes of the files taken so far. */
  bytes: number;
}

export async function walkSourceTree(
  root: string,
  selection: LanguageSelection,
  signal?: AbortSignal,
  limits: IndexLimits = DEFAULT_INDEX_LIMITS,
): Promise<WalkResult> {
  const result: WalkResult = { files: [], skippedDirectories: [], tooLarge: [], unreadable: [], symlinks: [], ignored: { files: 0, directories: 0 } };
  const checkout = await enclosingCheckout(root);
  const prefix = checkout === undefined ? '' : relative(checkout, root).split(sep).join('/');
  const skippedNames = checkout === undefined ? new Set([...DEPENDENCY_DIRECTORIES, ...BUILD_DIRECTORIES]) : DEPENDENCY_DIRECTORIES;
  const ignores = checkout === undefined ? [] : await checkoutIgnores(checkout, prefix);
  await walkDirectory({ root, prefix, skippedNames, selection, result, signal, limits, bytes: 0 }, '', ignores);
  result.files.sort((a, b) => byCodeUnits(a.path, b.path));
  result.tooLarge.sort();
  result.skippedDirectories.sort();
  result.unreadable.sort();
  result.symlinks.sort();
  return result;
}

/** The top of the git checkout holding `root` (the nearest directory with a .git), if any. */
async function enclosingCheckout(root: string): Promise<string | undefined> {
  for (let dir = root; ; dir = dirname(dir)) {
    if (await stat(join(dir, '.git')).then(() => true, () => false)) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** .git/info/exclude and the .gitignore files above the tree, which git applies inside it too. */
async function checkoutIgnores(checkout: string, prefix: string): Promise<IgnoreFile[]> {
  const files = [await readIgnoreFile(join(checkout, '.git', 'info', 'exclude'), '')];
  const parts = prefix === '' ? [] : prefix.split('/');
  for (let depth = 0; depth < parts.length; depth++) {
    const base = parts.slice(0, depth).join('/');
    files.push(await readIgnoreFile(join(checkout, ...parts.slice(0, depth), '.gitignore'), base));
  }
  return files.flatMap((file) => (file ? [file] : []));
}

async function walkDirectory(walk: Walk, relativeDir: string, inheritedIgnores: readonly IgnoreFile[]): Promise<void> {
  const { root, prefix, result, signal } = walk;
  if (signal?.aborted) throw new CancelledError('indexing was cancelled');
  const inCheckout = (path: string): string => (prefix === '' ? path : path === '' ? prefix : `${prefix}/${path}`);
  const absoluteDir = join(root, relativeDir);
  const own = await readIgnoreFile(join(absoluteDir, '.gitignore'), inCheckout(relativeDir));
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
  const links: string[] = [];
  for (const entry of entries) {
    const path = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.')) continue;
      if (walk.skippedNames.has(entry.name)) {
        if (!isIgnored(ignores, inCheckout(path), true)) result.skippedDirectories.push(`${path}/`);
        continue;
      }
      if (isIgnored(ignores, inCheckout(path), true)) {
        result.ignored.directories++;
        continue;
      }
      await walkDirectory(walk, path, ignores);
    } else if (entry.isFile()) {
      const language = walk.selection.languageOf(entry.name);
      if (!language) continue;
      if (isIgnored(ignores, inCheckout(path), false)) result.ignored.files++;
      else files.push({ path, absolutePath: join(absoluteDir, entry.name), language });
    } else if (entry.isSymbolicLink() && !entry.name.startsWith('.')) {
      links.push(path);
    }
  }
  // What a link points to decides whether it is worth saying (stat follows it; a broken link is
  // said when its name is a source file's).
  const targets = await Promise.all(links.map((path) => stat(join(root, path)).then((info) => info.isDirectory(), () => false)));
  links.forEach((path, index) => {
    const toDirectory = targets[index]!;
    if (!toDirectory && !walk.selection.languageOf(path.slice(path.lastIndexOf('/') + 1))) return;
    if (isIgnored(ignores, inCheckout(path), toDirectory)) return;
    result.symlinks.push(toDirectory ? `${path}/` : path);
  });
  // The sizes of a directory's files at once: stat calls are independent I/O.
  const sizes = await Promise.all(files.map((file) => stat(file.absolutePath).then((info) => info.size, () => undefined)));
  files.forEach((file, index) => {
    const size = sizes[index];
    if (size === undefined) return;
    if (size > MAX_INDEXED_FILE_BYTES) result.tooLarge.push(file.path);
    else {
      result.files.push({ ...file, size });
      walk.bytes += size;
    }
  });
  // Checked as the walk goes, so a tree far over a limit (`/`) stops early and holds little.
  const { maxFiles, maxBytes } = walk.limits;
  if (result.files.length > maxFiles) {
    throw new IndexLimitError(
      `source_dir: ${root} has more than ${maxFiles} source files, the limit of one index; index a smaller ` +
        `directory, or raise the limit with ${MAX_FILES_ENV}`,
    );
  }
  if (walk.bytes > maxBytes) {
    throw new IndexLimitError(
      `source_dir: ${root} has more than ${maxBytes} bytes (${Math.round(maxBytes / 2 ** 20)} MB) of source files, the ` +
        `limit of one index; index a smaller directory, or raise the limit with ${MAX_BYTES_ENV}`,
    );
  }
}

async function readIgnoreFile(path: string, base: string): Promise<IgnoreFile | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : new IgnoreFile(base, text);
}
