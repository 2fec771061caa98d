/**
 * The one place that decides which files the tools may read (DESIGN.md §2).
 *
 * - A path must be absolute; a `file://` URI is accepted where a path is. A relative path is
 *   resolved against the only allowed root when there is exactly one, and refused otherwise.
 * - When roots are in force, the real path (symlinks resolved) must lie inside one of them.
 *   Roots come from `--root` when the user gave any; otherwise from the MCP client's roots
 *   (roots/list) when it exposes them; with neither, every path is allowed.
 * - Only regular files are read, up to a size limit, and only text (no NUL byte in the head).
 *
 * Every refusal is a ToolInputError whose message says what was wrong and what is accepted.
 */
import { realpath, stat, open } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolInputError } from './errors.js';

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
    const path = await this.resolveExisting(input, what, 'file');
    const info = await stat(path);
    if (info.size > maxBytes) {
      throw new ToolInputError(
        `${what}: ${path} is ${formatBytes(info.size)}; files over ${formatBytes(maxBytes)} are not read`,
      );
    }
    const handle = await open(path, 'r');
    let bytes: Buffer;
    try {
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
      throw new ToolInputError(`${what}: ${path} looks like a binary file (it contains NUL bytes); only text source files are read`);
    }
    let text = bytes.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return { path, text };
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

  private async checkInsideRoots(path: string, what: string): Promise<void> {
    const roots = this.roots;
    if (roots.length === 0) return;
    const real = await realpath(path);
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

function describeFsError(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException).code;
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
