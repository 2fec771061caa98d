/**
 * Lists the source files of a tree that an index takes, and says what it left out.
 *
 * Directories left out, each listed with its reason and the name that brings it back
 * (`include`, see WalkOptions.includeDirs):
 * - dependency directories by name (node_modules, vendor, …), and Python virtual environments
 *   (a pyvenv.cfg at their top);
 * - build output by name (dist, build, target, …) outside a git checkout: in a checkout that is
 *   what its .gitignore says, and a tracked directory of that name is source (Go's go/build);
 * - hidden directories (.venv, .github, …), but not version-control data (.git, .hg, .svn);
 * - what git ignores (every .gitignore from the top of the enclosing checkout down, plus
 *   .git/info/exclude): only the highest such directory is listed, not what lies below it;
 * - with no roots, secret locations (~/.aws, /etc/ssh, …), which nothing brings back (access.ts).
 * Also listed: files over the size limit, directories that cannot be read, and symbolic links,
 * which are never followed (they could leave the tree or loop): those to a directory, and those
 * named like a source file. Binary files are recognised when read (indexer.ts).
 *
 * Ignore files are read as every file is (access.ts readRegularFile): only regular files, without
 * blocking, up to MAX_IGNORE_FILE_BYTES; a .gitignore that is a symbolic link is not followed, as
 * git does not. One that cannot be read is listed in `ignoreFileProblems` and its rules do not apply.
 *
 * Paths are tree-relative POSIX paths, sorted, so an index is the same on every run and OS.
 */
import { statSync } from 'node:fs';
import { lstat, readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { readRegularFile } from '../access.js';
import { CancelledError, messageOf } from '../kernel/errors.js';
import { IndexError } from './errors.js';
import { InputError } from '../kernel/errors.js';
import { IgnoreFile, isIgnored } from './gitignore.js';
import { MAX_LISTED_DIRECTORIES } from './limits.js';
import type { IndexLanguage, LanguageSelection } from './languages.js';
import { byCodeUnits } from '../order.js';

/** Files larger than this are not indexed (generated or vendored code, data). */
export const MAX_INDEXED_FILE_BYTES = 1024 * 1024;
/** An ignore file larger than this is not read (real ones are a few KB). */
export const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

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
    if (!Number.isSafeInteger(value) || value < 1)
      throw new IndexError(`${name} must be a positive whole number (got "${text}")`);
    return value;
  };
  return {
    maxFiles: read(MAX_FILES_ENV, DEFAULT_INDEX_LIMITS.maxFiles),
    maxBytes: read(MAX_BYTES_ENV, DEFAULT_INDEX_LIMITS.maxBytes),
  };
}

/** A tree over an index limit: the caller's argument, so the tools answer it as an InputError. */
export class IndexLimitError extends InputError {}

/** Directory names never entered unless included: dependencies and caches. */
const DEPENDENCY_DIRECTORIES: ReadonlySet<string> = new Set([
  'node_modules',
  'bower_components',
  'vendor',
  'third_party',
  '__pycache__',
  'site-packages',
]);

/** A Python virtual environment has this file at its top, whatever its name (the standard library's own `venv` package
 * has not). */
const VIRTUAL_ENVIRONMENT_MARKER = 'pyvenv.cfg';

/** Directory names taken for build output when no git checkout says what it ignores. */
const BUILD_DIRECTORIES: ReadonlySet<string> = new Set(['dist', 'build', 'out', 'target', 'obj', 'coverage']);

/** Version-control data: never source, never listed. */
const VCS_DIRECTORIES: ReadonlySet<string> = new Set(['.git', '.hg', '.svn', '.bzr', '_darcs', '.jj']);

/** Why a directory was not entered. */
export type SkipReason = 'dependency' | 'build output' | 'hidden' | 'ignored by .gitignore' | 'secret location';

export interface SkippedDirectory {
  /** Tree-relative, with a trailing slash. */
  path: string;
  reason: SkipReason;
  /** What to add to the included directories to index it; undefined when nothing can (a secret location). */
  include: string | undefined;
}

export interface WalkedFile {
  /** Tree-relative POSIX path. */
  path: string;
  absolutePath: string;
  language: IndexLanguage;
  size: number;
}

export interface WalkResult {
  files: WalkedFile[];
  /** Directories not entered, sorted by path, at most MAX_LISTED_DIRECTORIES. */
  skippedDirectories: SkippedDirectory[];
  /** How many more were not entered than are listed. */
  unlistedDirectories: number;
  /** Files the selection takes but that are over MAX_INDEXED_FILE_BYTES. */
  tooLarge: string[];
  /** Directories that could not be listed (permissions), with a trailing slash. */
  unreadable: string[];
  /** Symbolic links not followed: to a directory (with a trailing slash), or named like a selected source file. */
  symlinks: string[];
  /** Ignore files whose rules were not applied, and why (a path above the tree starts with `../`). */
  ignoreFileProblems: Array<{ path: string; problem: string }>;
  /**
   * What git's ignore rules left out, counted so that an index that finds nothing can say why:
   * files the selection would take, and directories not entered (their files are not counted).
   */
  ignored: { files: number; directories: number };
}

/** What the walk asks of the rules for reading (src/access.ts FileAccess). */
export interface WalkAccess {
  /** Why a directory may not be entered; undefined: it may. */
  refusal(directory: string): string | undefined;
  /** Whether some directory strictly below may be refused (else `refusal` is not asked there). */
  holdsRefusals(directory: string): boolean;
  /** Why a file outside the tree (an ignore file of the enclosing checkout) may not be read; undefined: it may. */
  readRefusal(path: string): Promise<string | undefined>;
  /** Why an opened file may not be read (several hard links without roots); undefined: it may. */
  fileRefusal(info: { nlink: number; isFile(): boolean }): string | undefined;
}

export interface WalkOptions {
  selection: LanguageSelection;
  access: WalkAccess;
  signal?: AbortSignal | undefined;
  limits?: IndexLimits;
  /**
   * Directories to enter although they are dependencies, build output, hidden or ignored by git:
   * a name (`dist`: every directory so named) or a tree-relative path (`packages/web/dist`).
   */
  includeDirs?: readonly string[] | undefined;
}

interface Walk {
  root: string;
  /** The tree's path inside its git checkout ('' at its top, or outside any checkout): .gitignore rules see these
   * paths. */
  prefix: string;
  skippedNames: ReadonlyMap<string, SkipReason>;
  included: (path: string, name: string) => boolean;
  options: WalkOptions;
  limits: IndexLimits;
  result: WalkResult;
  skipped: SkippedDirectory[];
  /** Bytes of the files taken so far. */
  bytes: number;
}

export async function walkSourceTree(root: string, options: WalkOptions): Promise<WalkResult> {
  const result: WalkResult = {
    files: [],
    skippedDirectories: [],
    unlistedDirectories: 0,
    tooLarge: [],
    unreadable: [],
    symlinks: [],
    ignoreFileProblems: [],
    ignored: { files: 0, directories: 0 },
  };
  const checkout = await enclosingCheckout(root);
  const prefix = checkout === undefined ? '' : relative(checkout, root).split(sep).join('/');
  const skippedNames = new Map<string, SkipReason>([...DEPENDENCY_DIRECTORIES].map((name) => [name, 'dependency']));
  if (checkout === undefined) for (const name of BUILD_DIRECTORIES) skippedNames.set(name, 'build output');
  const walk: Walk = {
    root,
    prefix,
    skippedNames,
    included: includeMatcher(options.includeDirs ?? []),
    options,
    limits: options.limits ?? DEFAULT_INDEX_LIMITS,
    result,
    skipped: [],
    bytes: 0,
  };
  const ignores = checkout === undefined ? [] : await checkoutIgnores(walk, checkout);
  await walkDirectory(walk, '', ignores, options.access.holdsRefusals(root));
  result.files.sort((a, b) => byCodeUnits(a.path, b.path));
  result.tooLarge.sort(byCodeUnits);
  walk.skipped.sort((a, b) => byCodeUnits(a.path, b.path));
  result.skippedDirectories = walk.skipped.slice(0, MAX_LISTED_DIRECTORIES);
  result.unlistedDirectories = walk.skipped.length - result.skippedDirectories.length;
  result.unreadable.sort(byCodeUnits);
  result.symlinks.sort(byCodeUnits);
  result.ignoreFileProblems.sort((a, b) => byCodeUnits(a.path, b.path));
  return result;
}

/** Whether a directory (tree-relative path, name) is one of `includeDirs`: by name, or by path. */
function includeMatcher(includeDirs: readonly string[]): (path: string, name: string) => boolean {
  const names = new Set<string>();
  const paths = new Set<string>();
  for (const entry of includeDirs) {
    const clean = entry
      .trim()
      .replace(/\\/g, '/')
      .replace(/^\.\/+/, '')
      .replace(/\/+$/, '');
    if (clean === '') continue;
    (clean.includes('/') ? paths : names).add(clean);
  }
  if (names.size === 0 && paths.size === 0) return () => false;
  return (path, name) => names.has(name) || paths.has(path);
}

/** The top of the git checkout holding `root` (the nearest directory with a .git), if any. */
async function enclosingCheckout(root: string): Promise<string | undefined> {
  for (let dir = root; ; dir = dirname(dir)) {
    if (
      await stat(join(dir, '.git')).then(
        () => true,
        () => false,
      )
    )
      return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * .git/info/exclude and the .gitignore files above the tree, which git applies inside it too:
 * read only where the rules for reading allow (inside the roots; no secret location).
 */
async function checkoutIgnores(walk: Walk, checkout: string): Promise<IgnoreFile[]> {
  const files: Array<IgnoreFile | undefined> = [];
  const read = async (file: string, base: string, followSymlinks: boolean): Promise<void> => {
    const refusal = await walk.options.access.readRefusal(file);
    if (refusal === undefined) files.push(await readIgnoreFile(walk, file, base, followSymlinks));
    else if (
      await lstat(file).then(
        () => true,
        () => false,
      )
    )
      walk.result.ignoreFileProblems.push({ path: treeRelative(walk, file), problem: refusal });
  };
  // git follows a symbolic link here (unlike a .gitignore in the work tree).
  await read(join(checkout, '.git', 'info', 'exclude'), '', true);
  const parts = walk.prefix === '' ? [] : walk.prefix.split('/');
  for (let depth = 0; depth < parts.length; depth++) {
    await read(join(checkout, ...parts.slice(0, depth), '.gitignore'), parts.slice(0, depth).join('/'), false);
  }
  return files.flatMap((file) => (file ? [file] : []));
}

/**
 * One directory, then its subdirectories in order. `checking`: whether a directory here may be
 * refused by the rules for reading (asked only below a directory that holds a refused one).
 */
async function walkDirectory(
  walk: Walk,
  relativeDir: string,
  inheritedIgnores: readonly IgnoreFile[],
  checking: boolean,
): Promise<void> {
  const { root, prefix, result } = walk;
  const { signal, access, selection } = walk.options;
  throwIfAborted(signal);
  const inCheckout = (path: string): string => (prefix === '' ? path : path === '' ? prefix : `${prefix}/${path}`);
  const absoluteDir = join(root, relativeDir);
  const own = await readIgnoreFile(walk, join(absoluteDir, '.gitignore'), inCheckout(relativeDir), false);
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
  throwIfAborted(signal);
  if (relativeDir !== '' && !walk.included(relativeDir, relativeDir.slice(relativeDir.lastIndexOf('/') + 1))) {
    if (entries.some((entry) => entry.name === VIRTUAL_ENVIRONMENT_MARKER && entry.isFile())) {
      walk.skipped.push({
        path: `${relativeDir}/`,
        reason: 'dependency',
        include: relativeDir.slice(relativeDir.lastIndexOf('/') + 1),
      });
      return;
    }
  }
  const files: Array<Omit<WalkedFile, 'size'>> = [];
  const links: string[] = [];
  const subdirectories: Array<{ path: string; checking: boolean }> = [];
  for (const entry of entries) {
    const path = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (VCS_DIRECTORIES.has(entry.name)) continue;
      const absolute = join(absoluteDir, entry.name);
      if (checking && access.refusal(absolute) !== undefined) {
        walk.skipped.push({ path: `${path}/`, reason: 'secret location', include: undefined });
        continue;
      }
      const included = walk.included(path, entry.name);
      const byName = entry.name.startsWith('.') ? 'hidden' : walk.skippedNames.get(entry.name);
      const ignored = isIgnored(ignores, inCheckout(path), true);
      if (!included && (byName !== undefined || ignored)) {
        if (ignored) result.ignored.directories++;
        walk.skipped.push({
          path: `${path}/`,
          reason: ignored ? 'ignored by .gitignore' : byName!,
          include: ignored ? path : entry.name,
        });
        continue;
      }
      subdirectories.push({ path, checking: checking && access.holdsRefusals(absolute) });
    } else if (entry.isFile()) {
      const language = selection.languageOf(entry.name);
      if (!language) continue;
      if (isIgnored(ignores, inCheckout(path), false)) result.ignored.files++;
      else files.push({ path, absolutePath: join(absoluteDir, entry.name), language });
    } else if (entry.isSymbolicLink() && !entry.name.startsWith('.')) {
      links.push(path);
    }
  }
  // What a link points to decides whether it is worth saying (stat follows it; a broken link is
  // said when its name is a source file's).
  const targets = await Promise.all(
    links.map((path) =>
      stat(join(root, path)).then(
        (info) => info.isDirectory(),
        () => false,
      ),
    ),
  );
  links.forEach((path, index) => {
    const toDirectory = targets[index]!;
    if (!toDirectory && !selection.languageOf(path.slice(path.lastIndexOf('/') + 1))) return;
    if (isIgnored(ignores, inCheckout(path), toDirectory)) return;
    result.symlinks.push(toDirectory ? `${path}/` : path);
  });
  for (let first = 0; first < files.length; first += STATS_PER_TURN) {
    // A directory of tens of thousands of files (or a slow mount) holds the loop one slice at a time, and a tree
    // over a limit or a cancelled walk stops within a slice, not after the whole directory's stats.
    if (first > 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      throwIfAborted(signal);
    }
    for (const file of files.slice(first, first + STATS_PER_TURN)) {
      const size = sizeOf(file.absolutePath);
      if (size === undefined) continue;
      if (size > MAX_INDEXED_FILE_BYTES) result.tooLarge.push(file.path);
      else {
        result.files.push({ ...file, size });
        walk.bytes += size;
      }
    }
    checkLimits(walk);
  }
  checkLimits(walk);
  for (const subdirectory of subdirectories)
    await walkDirectory(walk, subdirectory.path, ignores, subdirectory.checking);
}

/**
 * A listed file's size, undefined if it is gone. Asked synchronously: the inode is one the listing
 * just read, so the call is a few µs, where fs/promises' stat (a trip through libuv's thread pool
 * and a promise) cost the main thread ~35 µs a file and made the walk of the Python standard
 * library 2.5× slower (34 → 13 ms, best of 25; CPU 18–35 → 12–20 ms, load ~10). The event loop
 * turns every STATS_PER_TURN files. A listing can come from a cache while a stat must ask the file's
 * server (NFS, sshfs): such a stat holds the whole thread for as long as it takes.
 */
function sizeOf(path: string): number | undefined {
  try {
    // No exception built for a file gone since the listing (the common failure); other errors still throw.
    return statSync(path, { throwIfNoEntry: false })?.size;
  } catch {
    return undefined;
  }
}

/**
 * The most synchronous stats between two turns of the event loop: about 1.5 ms of CPU on a local disk (5-7 µs
 * each at load ~13; 20,000 in one turn held the loop 0.4-0.7 s), so a server's other calls wait that long, not a
 * whole directory's.
 */
const STATS_PER_TURN = 256;

/** Checked as the walk goes, so a tree far over a limit (`/`) stops early and holds little. */
function checkLimits(walk: Walk): void {
  const { maxFiles, maxBytes } = walk.limits;
  if (walk.result.files.length > maxFiles) {
    throw new IndexLimitError(
      `source_dir: ${walk.root} has more than ${maxFiles} source files, the limit of one index; index a smaller ` +
        `directory, or raise the limit with ${MAX_FILES_ENV}`,
    );
  }
  if (walk.bytes > maxBytes) {
    throw new IndexLimitError(
      `source_dir: ${walk.root} has more than ${maxBytes} bytes (${Math.round(maxBytes / 2 ** 20)} ` +
        `MB) of source files, the ` +
        `limit of one index; index a smaller directory, or raise the limit with ${MAX_BYTES_ENV}`,
    );
  }
}

/** An ignore file's rules; undefined when there is none, or it cannot be read (then said in ignoreFileProblems). */
async function readIgnoreFile(
  walk: Walk,
  path: string,
  base: string,
  followSymlinks: boolean,
): Promise<IgnoreFile | undefined> {
  const read = await readRegularFile(path, { maxBytes: MAX_IGNORE_FILE_BYTES, followSymlinks });
  if (read.kind === 'read') return new IgnoreFile(base, read.bytes.toString('utf8'));
  if (read.kind !== 'missing')
    walk.result.ignoreFileProblems.push({ path: treeRelative(walk, path), problem: read.problem });
  return undefined;
}

/** A path as the result names it: relative to the tree, POSIX (`../.gitignore` above it). */
function treeRelative(walk: Walk, path: string): string {
  return relative(walk.root, path).split(sep).join('/');
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError('indexing was cancelled');
}
