/**
 * The definitions of sources listed before, on disk, shared by every process that uses the same
 * directory: a fresh process (a CLI run, a new MCP server) asked about a file any of them listed
 * answers from here without loading tree-sitter, which costs it hundreds of milliseconds of
 * WebAssembly compilation and cold code on its first call.
 *
 * - Keyed by content: sha256 of the language's grammar fingerprint (grammar, query, runtime and
 *   extraction code: grammar-files.ts) and of the source's UTF-16 code units. An edited file, a
 *   new grammar or query, or a new build of the extraction rules is a new key; old keys age out.
 * - One file per entry, `<directory>/<first hex digit>/<key>.json`: a JSON header (format, key,
 *   language, source length, body length and sha256), a line break, then the body (definitions as
 *   compact rows, the syntax-error summary).
 * - Never trusted blindly: an entry whose header, checksum or shape does not check out against the
 *   key and the source asked about (a truncated file, a file from another program or format,
 *   offsets beyond the source) is a miss, and the next listing writes a good one over it.
 * - Safe with concurrent writers: an entry is written to a temporary file of its own in the same
 *   directory and renamed over its final name, so a reader sees a whole entry or none; writers of
 *   the same key write the same bytes. Eviction tolerates entries vanishing under it.
 * - Bounded in bytes and entries: each of the 16 shard directories holds at most 1/16 of either
 *   bound, checked after every write there, least recently used out first (a hit refreshes its
 *   entry's mtime). Temporary files older than a minute (a writer that died) are removed then too.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Definition, DefinitionKind, SourceSpan } from './definitions.js';
import { grammarFingerprint, sourceCodeVersion } from './grammar-files.js';
import type { LanguageInfo } from './languages.js';
import type { SyntaxErrorSummary } from './syntax-errors.js';

/** What a listing produces for a source, apart from its language. */
export interface StoredDefinitions {
  definitions: Definition[];
  syntaxErrors: SyntaxErrorSummary;
}

export interface DefinitionStoreOptions {
  directory: string;
  /** Upper bound on the bytes of all entries (default 64 MiB); one entry may take 1/16 of it. */
  maxBytes?: number;
  /** Upper bound on the number of entries (default 8,192; at least 16). */
  maxEntries?: number;
  /** The fingerprint of a language's grammar, query and extraction code (default: grammarFingerprint). */
  fingerprint?: (info: LanguageInfo) => string;
}

export const DEFAULT_STORE_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_STORE_MAX_ENTRIES = 8192;

/** Shard directories, by the key's first hex digit: eviction lists one small directory, not all entries. */
const SHARDS = 16;
/** A temporary file this old belongs to a writer that died. */
const STALE_TEMP_MS = 60_000;
const FORMAT = 'faultline-definitions/1';
const KINDS: ReadonlySet<string> = new Set<DefinitionKind>([
  'function',
  'method',
  'constructor',
  'class',
  'interface',
  'struct',
  'enum',
  'trait',
  'module',
]);
const ENTRY_NAME = /^[0-9a-f]{64}\.json$/;

export class DefinitionStore {
  readonly directory: string;
  private readonly shardEntries: number;
  private readonly shardBytes: number;
  private readonly fingerprint: (info: LanguageInfo) => string;
  private readonly ownFingerprint: boolean;
  private readonly fingerprints = new Map<string, string>();
  /** Shard directories made by this instance: made once, not on every write. */
  private readonly madeShards = new Set<string>();
  private readonly pending = new Set<Promise<void>>();

  constructor(options: DefinitionStoreOptions) {
    const maxEntries = options.maxEntries ?? DEFAULT_STORE_MAX_ENTRIES;
    const maxBytes = options.maxBytes ?? DEFAULT_STORE_MAX_BYTES;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < SHARDS)
      throw new RangeError(`maxEntries must be an integer of at least ${SHARDS} (got ${maxEntries})`);
    if (!Number.isSafeInteger(maxBytes) || maxBytes < SHARDS)
      throw new RangeError(`maxBytes must be an integer of at least ${SHARDS} (got ${maxBytes})`);
    this.directory = options.directory;
    this.shardEntries = Math.floor(maxEntries / SHARDS);
    this.shardBytes = Math.floor(maxBytes / SHARDS);
    this.fingerprint = options.fingerprint ?? ((info) => grammarFingerprint(info, sourceCodeVersion()));
    this.ownFingerprint = options.fingerprint !== undefined;
    this.bounds = { directory: this.directory, maxBytes, maxEntries };
  }

  private readonly bounds: { directory: string; maxBytes: number; maxEntries: number };

  /**
   * What another thread needs to open the same store (its directory and bounds), so that it can
   * write what it parsed there itself; undefined for a store with a fingerprint of its own (a test's).
   */
  portable(): { directory: string; maxBytes: number; maxEntries: number } | undefined {
    return this.ownFingerprint ? undefined : this.bounds;
  }

  /** The stored definitions of `source`, or undefined: none stored, or the entry does not check out. */
  async get(info: LanguageInfo, source: string): Promise<StoredDefinitions | undefined> {
    let key: string;
    let bytes: Buffer;
    try {
      key = this.keyOf(info, source);
      const read = await readBounded(this.pathOf(key), this.shardBytes);
      if (!read) return undefined;
      bytes = read;
    } catch {
      return undefined;
    }
    const stored = decodeEntry(bytes, key, info.name, source);
    if (stored) {
      // Most recently used: eviction goes by mtime. Best effort: a store that cannot be written
      // still answers, and an entry evicted meanwhile only misses next time.
      const now = new Date();
      await utimes(this.pathOf(key), now, now).catch(() => {});
    }
    return stored;
  }

  /**
   * Stores `stored` as the definitions of `source`, then keeps its shard within bounds. Never
   * rejects: a store that cannot be written (read-only, full) only means later calls parse.
   */
  put(info: LanguageInfo, source: string, stored: StoredDefinitions): Promise<void> {
    // Once the caller's answer is on its way: hashing and encoding a large listing takes
    // milliseconds that the answer need not wait for.
    const work = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.write(info, source, stored))
      .catch(() => {});
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
    return work;
  }

  /** Resolves when every put started so far has finished. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /** The last key computed, for its source: a miss (get) is followed by a put of the same source. */
  private lastKey: { language: string; source: string; key: string } | undefined;

  private keyOf(info: LanguageInfo, source: string): string {
    const last = this.lastKey;
    if (last !== undefined && last.language === info.name && last.source === source) return last.key;
    let fingerprint = this.fingerprints.get(info.name);
    if (fingerprint === undefined) {
      fingerprint = this.fingerprint(info);
      this.fingerprints.set(info.name, fingerprint);
    }
    // UTF-16 code units, not UTF-8: lone surrogates would all encode as U+FFFD and collide.
    const key = createHash('sha256').update(`${fingerprint}\0${info.name}\0`).update(source, 'utf16le').digest('hex');
    this.lastKey = { language: info.name, source, key };
    return key;
  }

  private shardOf(key: string): string {
    return join(this.directory, key[0]!);
  }

  private pathOf(key: string): string {
    return join(this.shardOf(key), `${key}.json`);
  }

  private async write(info: LanguageInfo, source: string, stored: StoredDefinitions): Promise<void> {
    const key = this.keyOf(info, source);
    const bytes = encodeEntry(key, info.name, source.length, stored);
    if (bytes.length > this.shardBytes) return;
    const shard = this.shardOf(key);
    const temporary = join(shard, `${key}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await this.writeIn(shard, temporary, bytes);
      await rename(temporary, this.pathOf(key));
    } catch (error) {
      await unlink(temporary).catch(() => {});
      throw error;
    }
    await this.evict(shard);
  }

  /** Writes a new file in a shard, making the shard first unless this instance made it (and it still exists). */
  private async writeIn(shard: string, path: string, bytes: Buffer): Promise<void> {
    const write = () => writeFile(path, bytes, { mode: 0o600, flag: 'wx' });
    if (this.madeShards.has(shard)) {
      try {
        return await write();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        this.madeShards.delete(shard);
      }
    }
    await mkdir(shard, { recursive: true, mode: 0o700 });
    this.madeShards.add(shard);
    await write();
  }

  /** Removes the least recently used entries of a shard beyond its bounds, and dead writers' temporary files. */
  private async evict(shard: string): Promise<void> {
    const now = Date.now();
    const entries: { path: string; size: number; used: number }[] = [];
    await Promise.all(
      (await readdir(shard)).map(async (name) => {
        const path = join(shard, name);
        const info = await stat(path).catch(() => undefined);
        if (!info?.isFile()) return;
        if (name.endsWith('.tmp')) {
          if (now - info.mtimeMs > STALE_TEMP_MS) await unlink(path).catch(() => {});
        } else if (ENTRY_NAME.test(name)) entries.push({ path, size: info.size, used: info.mtimeMs });
      }),
    );
    let count = entries.length;
    let bytes = entries.reduce((sum, entry) => sum + entry.size, 0);
    if (count <= this.shardEntries && bytes <= this.shardBytes) return;
    entries.sort((a, b) => a.used - b.used);
    for (const entry of entries) {
      if (count <= this.shardEntries && bytes <= this.shardBytes) break;
      await unlink(entry.path).catch(() => {});
      count--;
      bytes -= entry.size;
    }
  }
}

const stores = new Map<string, DefinitionStore>();

/**
 * The store of a data directory (`<dataDir>/cache/definitions`, default bounds), one instance per
 * directory in a process, so every caller shares its pending writes.
 */
export function definitionStoreIn(dataDir: string): DefinitionStore {
  const directory = join(dataDir, 'cache', 'definitions');
  let store = stores.get(directory);
  if (!store) {
    store = new DefinitionStore({ directory });
    stores.set(directory, store);
  }
  return store;
}

/** A file's bytes, or undefined when it is missing, not a regular file or larger than `limit`. */
async function readBounded(path: string, limit: number): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > limit) return undefined;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

interface Header {
  format: string;
  key: string;
  language: string;
  sourceLength: number;
  bodyBytes: number;
  bodySha256: string;
}

/**
 * A definition as a row: name, qualified name, kind, its span's four numbers, then the body's
 * four or nothing. Rows keep entries about a third the size of the objects' JSON.
 */
type Row = [string, string, DefinitionKind, number, number, number, number, ...number[]];

function encodeEntry(key: string, language: string, sourceLength: number, stored: StoredDefinitions): Buffer {
  const rows: Row[] = stored.definitions.map((definition) => [
    definition.name,
    definition.qualifiedName,
    definition.kind,
    ...spanNumbers(definition),
    ...(definition.body ? spanNumbers(definition.body) : []),
  ]);
  const body = Buffer.from(JSON.stringify({ definitions: rows, syntaxErrors: stored.syntaxErrors }), 'utf8');
  const header: Header = {
    format: FORMAT,
    key,
    language,
    sourceLength,
    bodyBytes: body.length,
    bodySha256: sha256(body),
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), body]);
}

function spanNumbers(span: SourceSpan): [number, number, number, number] {
  return [span.startLine, span.endLine, span.startOffset, span.endOffset];
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The entry's definitions if every check passes against the key and source asked about; else undefined. */
function decodeEntry(bytes: Buffer, key: string, language: string, source: string): StoredDefinitions | undefined {
  try {
    const newline = bytes.indexOf(0x0a);
    if (newline < 0) return undefined;
    const header = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as Partial<Header>;
    const body = bytes.subarray(newline + 1);
    if (
      header.format !== FORMAT ||
      header.key !== key ||
      header.language !== language ||
      header.sourceLength !== source.length ||
      header.bodyBytes !== body.length ||
      header.bodySha256 !== sha256(body)
    ) {
      return undefined;
    }
    const parsed = JSON.parse(body.toString('utf8')) as { definitions?: unknown; syntaxErrors?: unknown };
    const bounds = { length: source.length, lines: lineCount(source) };
    const syntaxErrors = syntaxErrorsFrom(parsed.syntaxErrors, bounds.lines);
    if (!syntaxErrors || !Array.isArray(parsed.definitions)) return undefined;
    const definitions: Definition[] = [];
    for (const row of parsed.definitions) {
      const definition = definitionFrom(row, bounds);
      if (!definition) return undefined;
      definitions.push(definition);
    }
    return { definitions, syntaxErrors };
  } catch {
    return undefined;
  }
}

interface Bounds {
  length: number;
  lines: number;
}

function lineCount(source: string): number {
  let lines = 1;
  for (let at = source.indexOf('\n'); at >= 0; at = source.indexOf('\n', at + 1)) lines++;
  return lines;
}

function definitionFrom(row: unknown, bounds: Bounds): Definition | undefined {
  if (!Array.isArray(row) || (row.length !== 7 && row.length !== 11)) return undefined;
  const [name, qualifiedName, kind] = row as unknown[];
  if (typeof name !== 'string' || typeof qualifiedName !== 'string' || typeof kind !== 'string' || !KINDS.has(kind))
    return undefined;
  const span = spanFrom(row, 3, bounds);
  const body = row.length === 11 ? spanFrom(row, 7, bounds) : null;
  if (!span || body === undefined) return undefined;
  return { name, qualifiedName, kind: kind as DefinitionKind, ...span, body };
}

function spanFrom(row: unknown[], at: number, bounds: Bounds): SourceSpan | undefined {
  const [startLine, endLine, startOffset, endOffset] = row.slice(at, at + 4);
  if (!isIndex(startLine, 1, bounds.lines) || !isIndex(endLine, startLine, bounds.lines)) return undefined;
  if (!isIndex(startOffset, 0, bounds.length) || !isIndex(endOffset, startOffset, bounds.length)) return undefined;
  return { startLine, endLine, startOffset, endOffset };
}

function isIndex(value: unknown, min: number, max: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}

function syntaxErrorsFrom(value: unknown, lines: number): SyntaxErrorSummary | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { count, firstLines } = value as { count?: unknown; firstLines?: unknown };
  if (!isIndex(count, 0, Number.MAX_SAFE_INTEGER) || !Array.isArray(firstLines)) return undefined;
  if (!firstLines.every((line) => isIndex(line, 1, lines))) return undefined;
  return { count, firstLines: [...firstLines] as number[] };
}
