/**
 * The one place that decides which files the tools may read (docs/design.md, "3. Files and the
 * network").
 *
 * - A path must be absolute; a `file://` URI is accepted where a path is. A relative path is
 *   resolved against the only allowed root when there is exactly one, and refused otherwise.
 * - When roots are in force, the real path (symlinks resolved) must lie inside one of them, and
 *   any regular text file there may be read. Roots come from `--root` when the user gave any;
 *   otherwise from the MCP client's roots (roots/list) when it exposes them.
 * - With no roots at all, only source files of a known language extension are read, and never
 *   under a well-known secret location (~/.ssh, ~/.aws, ~/.gnupg, /etc/shadow, /proc, …), by the
 *   path named or by its real path: an agent cannot read /etc/shadow and send it to an LLM. The
 *   home-directory locations are every user's (each home in /etc/passwd), not only $HOME's. A
 *   regular file with more than one hard link is refused too: its other name, which nothing can
 *   find, may be ~/.ssh/id_rsa. A refusal names the path as given, never where a symlink points.
 * - A directory (a tree to index) follows the same rules: inside the roots, or with no roots
 *   outside every secret location; a walk below it asks `refusal` of every directory it enters.
 * - Only regular files are opened: a path that is not one by `stat` is refused before any open
 *   (opening a device can have effects of its own), and the open itself is non-blocking, so a
 *   FIFO swapped in meanwhile cannot block a libuv worker. The open descriptor is checked again
 *   (a regular file, the same inode), and read up to a byte bound that holds even when the size
 *   lies (files in /proc say 0). `readRegularFile` is that read for callers that judge the path
 *   themselves (the index walk: source files and ignore files); `readSourceFile` adds the rules
 *   above and reads only text (no NUL byte in the head).
 *
 * Every refusal is an InputError whose message names the argument, says what was wrong and
 * what is accepted.
 */
import { constants as fsConstants, readFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, realpath, stat, open, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { extname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { supportedExtensions } from './code/languages.js';
import { InputError } from './kernel/errors.js';

/** Source extensions read without roots: the parsed languages' and other common source languages'. */
export const SOURCE_EXTENSIONS: ReadonlySet<string> = new Set([
  ...supportedExtensions(),
  ...[
    '.kt',
    '.kts',
    '.swift',
    '.scala',
    '.sc',
    '.m',
    '.mm',
    '.lua',
    '.pl',
    '.pm',
    '.r',
    '.dart',
    '.ex',
    '.exs',
    '.erl',
    '.hs',
  ],
  ...[
    '.clj',
    '.cljs',
    '.fs',
    '.fsx',
    '.vb',
    '.zig',
    '.nim',
    '.jl',
    '.groovy',
    '.vue',
    '.svelte',
    '.sh',
    '.bash',
    '.sql',
  ],
]);

/** The password database's file: where every user's home is listed. */
export const PASSWD_FILE = '/etc/passwd';

/**
 * Every user's home directory from the password database (`/etc/passwd`; users only a directory
 * service knows are not listed there), read once per process; `/` and relative entries left out.
 */
export function passwdHomes(file = PASSWD_FILE): string[] {
  if (file === PASSWD_FILE && cachedHomes !== undefined) return cachedHomes;
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No password database (a minimal container): $HOME alone.
  }
  const homes = new Set<string>();
  for (const line of text.split('\n')) {
    const home = line.split(':')[5]?.trim();
    if (home && isAbsolute(home) && resolve(home) !== sep) homes.add(resolve(home));
  }
  const result = [...homes];
  if (file === PASSWD_FILE) cachedHomes = result;
  return result;
}

let cachedHomes: string[] | undefined;

/**
 * Where secrets live: never read without roots (the path named and its real path are both checked).
 * The home-directory entries are $HOME's and every other user's (`homes`, default passwdHomes()):
 * /home/other/.ssh is as secret as ~/.ssh. `/root` is another user's home, whole; when it is the
 * user's own, the entries in the home cover it.
 */
export function secretLocations(home: string = homedir(), homes: readonly string[] = passwdHomes()): readonly string[] {
  // Asked for every path checked, with the same answer while $HOME stays: built once per home.
  if (home === lastSecrets?.home && homes === lastSecrets.homes) return lastSecrets.secrets;
  const secrets = listSecretLocations(home, homes);
  lastSecrets = { home, homes, secrets };
  return secrets;
}

let lastSecrets: { home: string; homes: readonly string[]; secrets: readonly string[] } | undefined;

function listSecretLocations(home: string, homes: readonly string[]): string[] {
  const inHome = [
    '.ssh',
    '.aws',
    '.gnupg',
    '.kube',
    '.docker',
    '.azure',
    '.config/gcloud',
    '.netrc',
    '.npmrc',
    '.pypirc',
    '.pgpass',
    '.git-credentials',
    '.password-store',
  ];
  const system = [
    '/etc/shadow',
    '/etc/gshadow',
    '/etc/sudoers',
    '/etc/ssh',
    '/etc/ssl/private',
    '/root',
    '/proc',
    '/sys',
    '/dev',
    '/run/secrets',
    '/var/run/secrets',
  ];
  const everyHome = [...new Set([resolve(home), ...homes])];
  // The homes are resolved, so `dir/entry` is join's answer, without join's normalising pass
  // (hundreds of entries, once per process).
  const under = (dir: string, entry: string): string =>
    sep !== '/' ? join(dir, entry) : dir === '/' ? `/${entry}` : `${dir}/${entry}`;
  return [
    ...everyHome.flatMap((dir) => inHome.map((entry) => under(dir, entry))),
    ...system.filter((entry) => !isInside(resolve(home), entry)),
  ];
}

/**
 * Why a regular file with more than one hard link is not read without roots (undefined: it may
 * be): its other names cannot be found, and one may be in a secret location (a link in a source
 * tree to ~/.ssh/id_rsa named key.py). Inside roots the owner or the client chose the tree.
 */
export function hardLinkRefusal(info: { nlink: number; isFile(): boolean }): string | undefined {
  if (!info.isFile() || info.nlink <= 1) return undefined;
  return (
    `has ${info.nlink} hard links; without roots a file with more than one name is not read (another name may be ` +
    'in a location that holds secrets): give --root or let the client expose roots'
  );
}

/** The secret location `path` (absolute, resolved) lies in, if any. */
export function secretLocationOf(path: string, secrets: readonly string[] = secretLocations()): string | undefined {
  return secrets.find(
    (secret) => path === secret || path.startsWith(secret.endsWith(sep) ? secret : `${secret}${sep}`),
  );
}

export const MAX_SOURCE_FILE_BYTES = 5 * 1024 * 1024;
/** How much of a file's head is inspected for NUL bytes (git's heuristic uses 8000). */
const BINARY_SNIFF_BYTES = 8000;

export interface SourceFile {
  /** The absolute path as the caller named it (after URI and root resolution). */
  path: string;
  text: string;
  /** The bytes read, whose sourceText() is `text` (the listing thread decodes them itself: src/code/listing-thread.ts). */
  bytes: Uint8Array;
}

/** A source file's text from its bytes: UTF-8, without a byte-order mark. */
export function sourceText(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export class FileAccess {
  private readonly configuredRoots: string[];
  private clientRoots: string[] = [];

  /** @param roots directories given by the user (`--root`); they take precedence over the client's. */
  constructor(roots: readonly string[] = []) {
    this.configuredRoots = roots.map((root) => resolve(root));
  }

  /** Replaces the roots the MCP client exposed (`file://` URIs; others are ignored). */
  setClientRoots(uris: readonly string[]): void {
    const roots: string[] = [];
    for (const uri of uris) {
      if (!uri.startsWith('file://')) continue;
      try {
        roots.push(fileURLToPath(uri));
      } catch {
        // A malformed root from the client is ignored rather than trusted.
      }
    }
    this.clientRoots = roots;
  }

  /** The directories reads are confined to; empty means unrestricted. */
  get roots(): readonly string[] {
    return this.configuredRoots.length > 0 ? this.configuredRoots : this.clientRoots;
  }

  /**
   * Reads a text source file, with every check above. `what` names the argument in errors.
   *
   * Each file-system step is a trip through libuv's thread pool (milliseconds each on a loaded
   * machine), so steps that do not depend on each other run together: the real path (and the
   * roots' real paths) are looked up while the file is judged and opened, the descriptor's stat
   * alongside the real path's, and a file is read in one read of its size; the close is not
   * waited for. The checks and their order of precedence are those of the sequential steps: the
   * real path is still confirmed, after the open, to name the file that was opened.
   */
  async readSourceFile(input: string, what = 'file', maxBytes = MAX_SOURCE_FILE_BYTES): Promise<SourceFile> {
    const path = this.toAbsolutePath(input, what);
    const unrestricted = this.roots.length === 0;
    if (unrestricted) checkNotSecret(path, what);
    const realLookup = settle(realpath(path));
    const realRoots = unrestricted ? undefined : realRootsOf(this.roots);
    const started = await openStatted(path, true);
    if ('refusal' in started) throw new InputError(`${what}: ${sourceRefusal(started, path)}`);
    const { handle } = started;
    let closed = false;
    try {
      // The real path's stat is taken after the open: the descriptor holds the inode, which cannot be reused meanwhile.
      const [info, real] = await Promise.all([
        handle.stat().catch(() => undefined),
        realLookup.then(async (found) =>
          'value' in found ? { path: found.value, info: await stat(found.value).catch(() => undefined) } : found,
        ),
      ]);
      const refusal = openedRefusal(started.before, info);
      if (refusal !== undefined) throw new InputError(`${what}: ${sourceRefusal(refusal, path)}`);
      if (info!.size > maxBytes) {
        throw new InputError(
          `${what}: ${path} is ${formatBytes(info!.size)}; files over ${formatBytes(maxBytes)} are not read`,
        );
      }
      // The real path decides roots and secret locations; it must be the file that was opened.
      if ('error' in real) throw new InputError(`${what}: ${describeFsError(real.error, path)}`);
      if (!real.info || real.info.ino !== info!.ino || real.info.dev !== info!.dev) {
        throw new InputError(`${what}: ${path} changed while it was being opened; try again`);
      }
      if (unrestricted) {
        checkNotSecret(real.path, what, path);
        checkSourceExtension(path, what);
        checkSourceExtension(real.path, what, path);
        const linked = hardLinkRefusal(info!);
        if (linked !== undefined) throw new InputError(`${what}: ${path} ${linked}`);
      } else await this.checkInsideRoots(path, what, real.path, await realRoots);
      let bytes: Buffer | undefined;
      try {
        bytes = await readBounded(handle, maxBytes, info!.size);
      } catch (error) {
        throw new InputError(`${what}: ${describeFsError(error, path)}`);
      }
      // Nothing below reads the file: its close is not waited for (its failure was ignored anyway).
      closed = true;
      void handle.close().catch(() => undefined);
      if (bytes === undefined)
        throw new InputError(`${what}: ${path} is over ${formatBytes(maxBytes)}; larger files are not read`);
      if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
        throw new InputError(
          `${what}: ${path} looks like a binary file (it contains NUL bytes); only text source files are read`,
        );
      }
      return { path, text: sourceText(bytes), bytes };
    } finally {
      if (!closed) await handle.close().catch(() => undefined);
    }
  }

  private async realPathOf(path: string, what: string): Promise<string> {
    try {
      return await realpath(path);
    } catch (error) {
      throw new InputError(`${what}: ${describeFsError(error, path)}`);
    }
  }

  /**
   * Resolves a directory argument with the same rules: absolute, exists, inside the roots, or with
   * no roots outside every secret location (the path named and its real path).
   */
  async resolveDirectory(input: string, what = 'source_dir'): Promise<string> {
    // The path named is judged before anything is looked up: a refusal says nothing of what exists there.
    if (this.roots.length === 0) checkNotSecret(this.toAbsolutePath(input, what), what);
    const path = await this.resolveExisting(input, what, 'directory');
    if (this.roots.length > 0) return path;
    const real = await this.realPathOf(path, what);
    checkNotSecret(real, what, path);
    // Every source file of the machine: an agent's slip that would run for an hour (46,676 files on
    // a bare Debian), never a project. Whoever means it says so with a root.
    if (parse(real).root === real)
      throw new InputError(
        `${what}: ${path} is the whole file system; without roots give a project's directory ` +
          '(or allow it: --root /, or roots exposed by the client)',
      );
    return path;
  }

  /**
   * Why a directory met on a walk below a resolved tree may not be entered (undefined: it may):
   * with no roots, a secret location. A walk that follows no symbolic link stays inside the roots
   * its tree is in, so only the secret locations are asked here (a string comparison per directory).
   */
  refusal(directory: string): string | undefined {
    if (this.roots.length > 0) return undefined;
    const secret = secretLocationOf(directory);
    return secret === undefined
      ? undefined
      : `${secret} holds secrets; it is never read without roots (give --root or let the client expose roots)`;
  }

  /** Why a file a walk is about to read may not be (undefined: it may): without roots, one with several hard links. */
  fileRefusal(info: { nlink: number; isFile(): boolean }): string | undefined {
    return this.roots.length > 0 ? undefined : hardLinkRefusal(info);
  }

  /** Whether a secret location lies strictly below `directory` (a walk must then ask `refusal` below it). */
  holdsRefusals(directory: string): boolean {
    if (this.roots.length > 0) return false;
    const prefix = directory.endsWith(sep) ? directory : `${directory}${sep}`;
    return secretLocations().some((secret) => secret.startsWith(prefix));
  }

  /**
   * Why a file outside a tree (an ignore file of the enclosing checkout) may not be read, by the
   * path and its real path: outside the roots, or with no roots in a secret location. Undefined: it may.
   */
  async readRefusal(path: string): Promise<string | undefined> {
    const real = await realpath(path).catch(() => path);
    if (this.roots.length > 0)
      return this.checkInsideRoots(path, 'file', real).then(
        () => undefined,
        () => 'is outside the roots',
      );
    const secret = secretLocationOf(path);
    if (secret !== undefined)
      return `${secret === path ? 'is' : `is in ${secret},`} a location that holds secrets (never read without roots)`;
    // Where a symbolic link points is not said: that would tell an agent what lies in a secret location.
    return secretLocationOf(real) === undefined
      ? undefined
      : 'resolves into a location that holds secrets (never read without roots)';
  }

  private async resolveExisting(input: string, what: string, kind: 'file' | 'directory'): Promise<string> {
    const path = this.toAbsolutePath(input, what);
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      throw new InputError(`${what}: ${describeFsError(error, path)}`);
    }
    if (kind === 'file' && info.isDirectory()) {
      throw new InputError(`${what}: ${path} is a directory; give the path of a source file`);
    }
    if (kind === 'file' && !info.isFile()) {
      throw new InputError(`${what}: ${path} is not a regular file`);
    }
    if (kind === 'directory' && !info.isDirectory()) {
      throw new InputError(`${what}: ${path} is not a directory`);
    }
    await this.checkInsideRoots(path, what);
    return path;
  }

  private toAbsolutePath(input: string, what: string): string {
    const trimmed = input.trim();
    if (trimmed === '') throw new InputError(`${what}: empty path; give an absolute path or a file:// URI`);
    let path = trimmed;
    if (/^file:/i.test(trimmed)) {
      try {
        path = fileURLToPath(trimmed);
      } catch (error) {
        throw new InputError(`${what}: "${trimmed}" is not a valid file:// URI (${(error as Error).message})`);
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
      throw new InputError(`${what}: "${trimmed}" is a URL; give an absolute local path or a file:// URI`);
    }
    if (isAbsolute(path)) return resolve(path);
    const roots = this.roots;
    if (roots.length === 1) return resolve(roots[0]!, path);
    const hint =
      roots.length > 1
        ? ` (relative paths are resolved only when there is exactly one root; the roots are ${roots.join(', ')})`
        : '';
    throw new InputError(`${what}: "${trimmed}" is a relative path; it must be absolute${hint}`);
  }

  private async checkInsideRoots(
    path: string,
    what: string,
    knownReal?: string,
    knownRealRoots?: readonly string[],
  ): Promise<void> {
    const roots = this.roots;
    if (roots.length === 0) return;
    const real = knownReal ?? (await this.realPathOf(path, what));
    const realRoots = knownRealRoots ?? (await realRootsOf(roots));
    if (realRoots.some((realRoot) => isInside(real, realRoot))) return;
    throw new InputError(`${what}: ${path} is outside the allowed roots (${roots.join(', ')})`);
  }
}

/** The roots' real paths, looked up together (a root that cannot be resolved stands as given). */
function realRootsOf(roots: readonly string[]): Promise<string[]> {
  return Promise.all(roots.map((root) => realpath(root).catch(() => resolve(root))));
}

/** A promise's outcome as a value: started early, looked at later, never an unhandled rejection. */
function settle<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Without roots: outside every secret location. `named`, when `path` is the real path of what the
 * caller named, is what the message shows: where a symbolic link points is never printed.
 */
function checkNotSecret(path: string, what: string, named?: string): void {
  const secret = secretLocationOf(path);
  if (secret === undefined) return;
  const where =
    named === undefined || named === path
      ? `${path} ${secret === path ? 'is' : `is under ${secret},`} a location that holds secrets`
      : `${named} resolves into a location that holds secrets`;
  throw new InputError(
    `${what}: ${where}; it is never read without roots (give --root or let the client expose roots)`,
  );
}

/** Without roots: a known source extension (by the path named, and by its real path: `named` shown then). */
function checkSourceExtension(path: string, what: string, named?: string): void {
  const extension = extname(path).toLowerCase();
  if (SOURCE_EXTENSIONS.has(extension)) return;
  const which =
    named === undefined || named === path
      ? `${path} is not a source file of a known language (${extension || 'no extension'})`
      : `${named} resolves to a file that is not a source file of a known language`;
  throw new InputError(
    `${what}: ${which}; without roots only source files ` +
      `(${[...SOURCE_EXTENSIONS].slice(0, 8).join(', ')}, …) are read — ` +
      `give --root DIR or let the client expose roots to read other ` +
      `text files`,
  );
}

/**
 * Reads at most `maxBytes` (files in /proc report size 0 and may be longer than they say); undefined when there is
 * more. `size`, the descriptor's stat, sizes the first read: a file that is what it says is read in one read (a
 * read of exactly its size ends it, as in fs.readFile); one that grew or shrank meanwhile goes on to the end.
 */
async function readBounded(handle: FileHandle, maxBytes: number, size = 0): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const want = total === 0 && size > 0 ? size + 1 : 64 * 1024;
    const buffer = Buffer.allocUnsafe(Math.min(want, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) return undefined;
    if (chunks.length === 1 && total === size) break;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

type Refusal = {
  refusal: 'missing' | 'symlink' | 'directory' | 'not-regular' | 'changed' | 'unreadable';
  error?: unknown;
};

/**
 * Opens `path` when it is a regular file, judged by `stat` (or `lstat`: a symbolic link is then
 * refused) before anything is opened, and again on the open descriptor, which must be the same
 * file. The open is non-blocking (a FIFO swapped in between cannot block a libuv worker) and
 * does not make the file the process's controlling terminal.
 */
async function openRegular(
  path: string,
  followSymlinks: boolean,
): Promise<{ handle: FileHandle; info: Stats } | Refusal> {
  const started = await openStatted(path, followSymlinks);
  if ('refusal' in started) return started;
  const info = await started.handle.stat().catch(() => undefined);
  const refusal = openedRefusal(started.before, info);
  if (refusal !== undefined) {
    await started.handle.close().catch(() => undefined);
    return refusal;
  }
  return { handle: started.handle, info: info! };
}

/** openRegular's first half: the stat before the open, and the open (the descriptor not yet checked). */
async function openStatted(
  path: string,
  followSymlinks: boolean,
): Promise<{ handle: FileHandle; before: Stats } | Refusal> {
  let before: Stats;
  try {
    before = followSymlinks ? await stat(path) : await lstat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { refusal: code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unreadable', error };
  }
  if (before.isSymbolicLink()) return { refusal: 'symlink' };
  if (before.isDirectory()) return { refusal: 'directory' };
  if (!before.isFile()) return { refusal: 'not-regular' };
  try {
    const flags =
      fsConstants.O_RDONLY |
      fsConstants.O_NONBLOCK |
      fsConstants.O_NOCTTY |
      (followSymlinks ? 0 : fsConstants.O_NOFOLLOW);
    return { handle: await open(path, flags), before };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' && !followSymlinks) return { refusal: 'symlink' };
    return { refusal: code === 'ENOENT' ? 'missing' : 'unreadable', error };
  }
}

/** openRegular's second half: why the open descriptor (its stat `info`) is not the regular file judged before. */
function openedRefusal(before: Stats, info: Stats | undefined): Refusal | undefined {
  if (info && info.isFile() && info.ino === before.ino && info.dev === before.dev) return undefined;
  return { refusal: info && !info.isFile() ? 'not-regular' : 'changed' };
}

function sourceRefusal({ refusal, error }: Refusal, path: string): string {
  switch (refusal) {
    case 'directory':
      return `${path} is a directory; give the path of a source file`;
    case 'not-regular':
      return `${path} is not a regular file (a FIFO, socket or device); only regular text files are read`;
    case 'changed':
      return `${path} changed while it was being opened; try again`;
    case 'symlink':
      return `${path} is a symbolic link`;
    default:
      return describeFsError(error, path);
  }
}

/** What `readRegularFile` found: the bytes, or why there are none (`problem`: for people, without the path). */
export type BoundedRead =
  | { kind: 'read'; bytes: Buffer }
  | { kind: 'missing' | 'symlink' | 'not-regular' | 'too-large' | 'unreadable' | 'refused'; problem: string };

/**
 * Reads a regular file, at most `maxBytes` of it, without ever blocking a libuv worker or opening
 * anything else (see openRegular). It decides nothing about where the file is: callers that take
 * paths from users ask FileAccess first. `followSymlinks: false` refuses a symbolic link, as git
 * does for a .gitignore in the work tree.
 */
export async function readRegularFile(
  path: string,
  options: {
    maxBytes: number;
    followSymlinks?: boolean;
    /** Why the opened file may not be read (FileAccess.fileRefusal: several hard links without roots). */
    refuse?: ((info: Stats) => string | undefined) | undefined;
  },
): Promise<BoundedRead> {
  const { maxBytes, followSymlinks = true } = options;
  const opened = await openRegular(path, followSymlinks);
  if ('refusal' in opened) {
    switch (opened.refusal) {
      case 'missing':
        return { kind: 'missing', problem: 'does not exist' };
      case 'symlink':
        return { kind: 'symlink', problem: 'is a symbolic link (not followed)' };
      case 'directory':
        return { kind: 'not-regular', problem: 'is a directory' };
      case 'not-regular':
        return { kind: 'not-regular', problem: 'is not a regular file (a FIFO, socket or device)' };
      case 'changed':
        return { kind: 'unreadable', problem: 'changed while it was being opened' };
      default:
        return { kind: 'unreadable', problem: describeFsError(opened.error, '').trim() };
    }
  }
  const { handle, info } = opened;
  try {
    // Judged on the open descriptor's own stat: a link made after a walk looked is seen too.
    const refusal = options.refuse?.(info);
    if (refusal !== undefined) return { kind: 'refused', problem: refusal };
    const tooLarge = { kind: 'too-large', problem: `is over ${formatBytes(maxBytes)}` } as const;
    if (info.size > maxBytes) return tooLarge;
    const bytes = await readBounded(handle, maxBytes, info.size);
    return bytes === undefined ? tooLarge : { kind: 'read', bytes };
  } catch (error) {
    return { kind: 'unreadable', problem: describeFsError(error, '').trim() };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function describeFsError(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EIO')
    return `${path} cannot be read (input/output error; files under /proc and devices often refuse reads)`;
  if (code === 'EAGAIN') return `${path} has no data to read now (not a regular file)`;
  if (code === 'ELOOP') return `${path} is a symbolic link loop`;
  if (code === 'ENOENT') return `${path} does not exist`;
  if (code === 'EACCES' || code === 'EPERM') return `${path} cannot be read (permission denied)`;
  if (code === 'ENOTDIR') return `${path} does not exist (a parent is not a directory)`;
  if (code === 'ENAMETOOLONG') return `the path is too long`;
  return `${path} cannot be read (${(error as Error).message})`;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}
