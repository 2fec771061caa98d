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
 *   path named or by its real path: an agent cannot read /etc/shadow and send it to an LLM.
 * - Files are opened first (non-blocking, so a FIFO or device cannot block a libuv worker), then
 *   the open descriptor is checked: only a regular file is read, up to a size limit, and only
 *   text (no NUL byte in the head). Nothing is stat-ed by path and then opened, so a file swapped
 *   between the check and the open cannot slip through.
 *
 * Every refusal is a ToolInputError whose message names the argument, says what was wrong and
 * what is accepted.
 */
import { constants as fsConstants } from 'node:fs';
import { realpath, stat, open, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { supportedExtensions } from './code/languages.js';
import { ToolInputError } from './errors.js';

/** Source extensions read without roots: the parsed languages' and other common source languages'. */
export const SOURCE_EXTENSIONS: ReadonlySet<string> = new Set([
  ...supportedExtensions(),
  ...['.kt', '.kts', '.swift', '.scala', '.sc', '.m', '.mm', '.lua', '.pl', '.pm', '.r', '.dart', '.ex', '.exs', '.erl', '.hs'],
  ...['.clj', '.cljs', '.fs', '.fsx', '.vb', '.zig', '.nim', '.jl', '.groovy', '.vue', '.svelte', '.sh', '.bash', '.sql'],
]);

/** Where secrets live: never read without roots (the path named and its real path are both checked). */
export function secretLocations(home: string = homedir()): string[] {
  const inHome = ['.ssh', '.aws', '.gnupg', '.kube', '.docker', '.azure', '.config/gcloud', '.netrc', '.npmrc', '.pypirc', '.pgpass', '.git-credentials', '.password-store'];
  return [
    ...inHome.map((entry) => join(home, entry)),
    ...['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/ssh', '/etc/ssl/private', '/root', '/proc', '/sys', '/dev', '/run/secrets', '/var/run/secrets'],
  ];
}

export const MAX_SOURCE_FILE_BYTES = 5 * 1024 * 1024;
/** How much of a file's head is inspected for NUL bytes (git's heuristic uses 8000). */
const BINARY_SNIFF_BYTES = 8000;

export interface SourceFile {
  /** The absolute path as the caller named it (after URI and root resolution). */
  path: string;
  text: string;
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

  /** Reads a text source file, with every check above. `what` names the argument in errors. */
  async readSourceFile(input: string, what = 'file', maxBytes = MAX_SOURCE_FILE_BYTES): Promise<SourceFile> {
    const path = this.toAbsolutePath(input, what);
    const unrestricted = this.roots.length === 0;
    if (unrestricted) checkNotSecret(path, what);
    let handle: FileHandle;
    try {
      // O_NONBLOCK: opening a FIFO (or a device) returns at once instead of blocking a worker.
      handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    } catch (error) {
      throw new ToolInputError(`${what}: ${describeFsError(error, path)}`);
    }
    try {
      const info = await handle.stat();
      if (info.isDirectory()) throw new ToolInputError(`${what}: ${path} is a directory; give the path of a source file`);
      if (!info.isFile()) throw new ToolInputError(`${what}: ${path} is not a regular file (a FIFO, socket or device); only regular text files are read`);
      if (info.size > maxBytes) {
        throw new ToolInputError(`${what}: ${path} is ${formatBytes(info.size)}; files over ${formatBytes(maxBytes)} are not read`);
      }
      // The real path decides roots and secret locations; it must be the file that was opened.
      const real = await this.realPathOf(path, what);
      const realInfo = await stat(real).catch(() => undefined);
      if (!realInfo || realInfo.ino !== info.ino || realInfo.dev !== info.dev) {
        throw new ToolInputError(`${what}: ${path} changed while it was being opened; try again`);
      }
      if (unrestricted) {
        checkNotSecret(real, what);
        checkSourceExtension(path, what);
        checkSourceExtension(real, what);
      }
      else await this.checkInsideRoots(path, what, real);
      const bytes = await readBounded(handle, maxBytes, path, what);
      if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
        throw new ToolInputError(`${what}: ${path} looks like a binary file (it contains NUL bytes); only text source files are read`);
      }
      let text = bytes.toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      return { path, text };
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  private async realPathOf(path: string, what: string): Promise<string> {
    try {
      return await realpath(path);
    } catch (error) {
      throw new ToolInputError(`${what}: ${describeFsError(error, path)}`);
    }
  }

  /** Resolves a directory argument with the same rules (absolute, inside the roots, exists). */
  async resolveDirectory(input: string, what = 'source_dir'): Promise<string> {
    return this.resolveExisting(input, what, 'directory');
  }

  private async resolveExisting(input: string, what: string, kind: 'file' | 'directory'): Promise<string> {
    const path = this.toAbsolutePath(input, what);
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      throw new ToolInputError(`${what}: ${describeFsError(error, path)}`);
    }
    if (kind === 'file' && info.isDirectory()) {
      throw new ToolInputError(`${what}: ${path} is a directory; give the path of a source file`);
    }
    if (kind === 'file' && !info.isFile()) {
      throw new ToolInputError(`${what}: ${path} is not a regular file`);
    }
    if (kind === 'directory' && !info.isDirectory()) {
      throw new ToolInputError(`${what}: ${path} is not a directory`);
    }
    await this.checkInsideRoots(path, what);
    return path;
  }

  private toAbsolutePath(input: string, what: string): string {
    const trimmed = input.trim();
    if (trimmed === '') throw new ToolInputError(`${what}: empty path; give an absolute path or a file:// URI`);
    let path = trimmed;
    if (/^file:/i.test(trimmed)) {
      try {
        path = fileURLToPath(trimmed);
      } catch (error) {
        throw new ToolInputError(`${what}: "${trimmed}" is not a valid file:// URI (${(error as Error).message})`);
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
      throw new ToolInputError(`${what}: "${trimmed}" is a URL; give an absolute local path or a file:// URI`);
    }
    if (isAbsolute(path)) return resolve(path);
    const roots = this.roots;
    if (roots.length === 1) return resolve(roots[0]!, path);
    const hint =
      roots.length > 1 ? ` (relative paths are resolved only when there is exactly one root; the roots are ${roots.join(', ')})` : '';
    throw new ToolInputError(`${what}: "${trimmed}" is a relative path; it must be absolute${hint}`);
  }

  private async checkInsideRoots(path: string, what: string, knownReal?: string): Promise<void> {
    const roots = this.roots;
    if (roots.length === 0) return;
    const real = knownReal ?? (await this.realPathOf(path, what));
    for (const root of roots) {
      const realRoot = await realpath(root).catch(() => resolve(root));
      if (isInside(real, realRoot)) return;
    }
    throw new ToolInputError(`${what}: ${path} is outside the allowed roots (${roots.join(', ')})`);
  }
}

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

/** Without roots: outside every secret location. */
function checkNotSecret(path: string, what: string): void {
  for (const secret of secretLocations()) {
    if (isInside(path, secret)) {
      throw new ToolInputError(
        `${what}: ${path} is under ${secret}, a location that holds secrets; it is never read without roots (give --root or let the client expose roots)`,
      );
    }
  }
}

/** Without roots: a known source extension. */
function checkSourceExtension(path: string, what: string): void {
  const extension = extname(path).toLowerCase();
  if (!SOURCE_EXTENSIONS.has(extension)) {
    throw new ToolInputError(
      `${what}: ${path} is not a source file of a known language (${extension || 'no extension'}); without roots only source files ` +
        `(${[...SOURCE_EXTENSIONS].slice(0, 8).join(', ')}, …) are read — give --root DIR or let the client expose roots to read other text files`,
    );
  }
}

/** Reads at most `maxBytes` (files in /proc report size 0 and may be longer than they say). */
async function readBounded(handle: FileHandle, maxBytes: number, path: string, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buffer = Buffer.allocUnsafe(Math.min(64 * 1024, maxBytes + 1 - total));
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(buffer, 0, buffer.length, null));
    } catch (error) {
      throw new ToolInputError(`${what}: ${describeFsError(error, path)}`);
    }
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) throw new ToolInputError(`${what}: ${path} is over ${formatBytes(maxBytes)}; larger files are not read`);
  }
  return Buffer.concat(chunks, total);
}

function describeFsError(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EIO') return `${path} cannot be read (input/output error; files under /proc and devices often refuse reads)`;
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
