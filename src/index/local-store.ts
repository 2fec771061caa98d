/**
 * The embedded store: one file per tree and embedder, searched exactly (cosine over every chunk).
 *
 * File layout (little-endian):
 *   "FLIDX001"  8 bytes magic
 *   uint32      byte length of the header (padded with spaces to a multiple of 4)
 *   header      JSON {format, tree, embedder, dimension, chunks: ChunkRecord[]}
 *   float32[]   count × dimension unit vectors, chunk i at i × dimension
 *
 * Exact search over a Float32Array is a few milliseconds per 10,000 chunks at 512 dimensions,
 * which is enough for one repository and needs no native code (see
 * ../shared/reference/code-analysis-anchors.md §4). Writes replace the whole file atomically
 * (atomic-file.ts), so an interrupted index leaves the previous one intact. Loaded indexes are
 * cached per process and reloaded when the file changes, so searches after the first do not
 * read the disk.
 */
import { readFile, stat } from 'node:fs/promises';
import { IndexError } from './errors.js';
import { writeFileAtomically } from './atomic-file.js';
import { withFileLock } from './file-lock.js';
import { isUnder, type ChunkRecord, type StoreHit, type StoredChunk, type VectorStore } from './store.js';

const MAGIC = 'FLIDX001';
const FORMAT = 'faultline-index-1';

interface Snapshot {
  dimension: number | undefined;
  chunks: ChunkRecord[];
  /** chunks.length × dimension. */
  vectors: Float32Array;
}

interface CachedSnapshot {
  mtimeMs: number;
  size: number;
  snapshot: Snapshot;
}

/** Loaded indexes by file; few are used at once, and each is as large as its repository's code. */
const cache = new Map<string, CachedSnapshot>();
const MAX_CACHED = 4;

const EMPTY: Snapshot = { dimension: undefined, chunks: [], vectors: new Float32Array(0) };

export interface LocalStoreIdentity {
  tree: string;
  embedder: string;
}

export class LocalStore implements VectorStore {
  readonly description: string;
  private pending = new Map<string, readonly StoredChunk[]>();

  private constructor(
    private readonly file: string,
    private readonly identity: LocalStoreIdentity,
    private snapshot: Snapshot,
    /** Why the file on disk could not be read; searches report it, the next index rewrites it. */
    private damage: string | undefined,
  ) {
    this.description = `local index ${file}`;
  }

  /** Opens the index file (absent: an empty index). */
  static async open(file: string, identity: LocalStoreIdentity): Promise<LocalStore> {
    const { snapshot, damage } = await readIndex(file, identity.tree);
    return new LocalStore(file, identity, snapshot, damage);
  }

  /** Whether an index file exists (searching a tree that was never indexed is an error). */
  static async exists(file: string): Promise<boolean> {
    return stat(file).then(
      (info) => info.isFile(),
      () => false,
    );
  }

  async dimension(): Promise<number | undefined> {
    return this.snapshot.dimension;
  }

  async fileHashes(): Promise<Map<string, string>> {
    const hashes = new Map<string, string>();
    for (const chunk of this.snapshot.chunks) hashes.set(chunk.path, chunk.fileHash);
    return hashes;
  }

  async replaceFile(path: string, chunks: readonly StoredChunk[]): Promise<void> {
    const expected = this.snapshot.dimension ?? firstPendingDimension(this.pending);
    const mismatch = chunks.find((chunk) => expected !== undefined && chunk.vector.length !== expected);
    if (mismatch) throw dimensionMismatch(mismatch.vector.length, expected!, this.file);
    this.pending.set(path, chunks);
  }

  /**
   * Writes the index with this run's files replaced. Under a lock, and over the newest file on
   * disk: another run (another process, or a concurrent call) may have committed since this one
   * opened the index, and its files must not be lost.
   */
  async commit(): Promise<void> {
    if (this.pending.size === 0) return;
    await withFileLock(`${this.file}.lock`, async () => {
      const { snapshot: newest } = await readIndex(this.file, this.identity.tree);
      const snapshot = withReplacedFiles(newest, this.pending, this.file);
      await writeFileAtomically(this.file, encode(snapshot, this.identity));
      this.snapshot = snapshot;
      this.damage = undefined;
      this.pending = new Map();
      const info = await stat(this.file);
      remember(this.file, { mtimeMs: info.mtimeMs, size: info.size, snapshot });
    });
  }

  async count(): Promise<number> {
    return this.snapshot.chunks.length;
  }

  async search(query: Float32Array, limit: number, within?: readonly string[]): Promise<StoreHit[]> {
    if (this.damage !== undefined) throw new IndexError(this.damage);
    const { dimension, chunks, vectors } = this.snapshot;
    if (dimension === undefined || chunks.length === 0) return [];
    if (query.length !== dimension) {
      throw new IndexError(`the query vector has dimension ${query.length} but the index at ${this.file} has dimension ${dimension}`);
    }
    const included = within === undefined ? undefined : chunks.map((chunk) => isUnder(chunk.path, within));
    return topK(query, vectors, dimension, limit, included).map(({ index, score }) => ({ chunk: chunks[index]!, score }));
  }
}

/**
 * The `limit` best dot products, best first (a sorted insertion list: limit is small). A sparse
 * query (the hashed embedder's has a few dozen non-zero dimensions) is multiplied over its
 * non-zero dimensions only, which gives the same sums at a fraction of the cost.
 */
function topK(
  query: Float32Array,
  vectors: Float32Array,
  dimension: number,
  limit: number,
  included: readonly boolean[] | undefined,
): Array<{ index: number; score: number }> {
  const nonZero: number[] = [];
  for (let d = 0; d < dimension; d++) if (query[d] !== 0) nonZero.push(d);
  const dims = Int32Array.from(nonZero);
  const weights = Float32Array.from(nonZero, (d) => query[d]!);
  const sparse = dims.length < dimension / 2;
  const best: Array<{ index: number; score: number }> = [];
  const count = vectors.length / dimension;
  for (let index = 0, base = 0; index < count; index++, base += dimension) {
    if (included !== undefined && !included[index]) continue;
    const score = sparse ? sparseDot(weights, dims, vectors, base) : denseDot(query, vectors, base, dimension);
    if (best.length === limit && score <= best[best.length - 1]!.score) continue;
    let at = best.length;
    while (at > 0 && best[at - 1]!.score < score) at--;
    best.splice(at, 0, { index, score });
    if (best.length > limit) best.pop();
  }
  return best;
}

function sparseDot(weights: Float32Array, dims: Int32Array, vectors: Float32Array, base: number): number {
  let sum = 0;
  for (let j = 0; j < dims.length; j++) sum += weights[j]! * vectors[base + dims[j]!]!;
  return sum;
}

/** Four running sums: fewer dependent additions per step, measurably faster in V8. */
function denseDot(query: Float32Array, vectors: Float32Array, base: number, dimension: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 4 <= dimension; d += 4) {
    s0 += query[d]! * vectors[base + d]!;
    s1 += query[d + 1]! * vectors[base + d + 1]!;
    s2 += query[d + 2]! * vectors[base + d + 2]!;
    s3 += query[d + 3]! * vectors[base + d + 3]!;
  }
  for (; d < dimension; d++) s0 += query[d]! * vectors[base + d]!;
  return s0 + s1 + s2 + s3;
}

/** `base` with the chunks of every file in `replacements` swapped for the given ones. */
function withReplacedFiles(base: Snapshot, replacements: ReadonlyMap<string, readonly StoredChunk[]>, file: string): Snapshot {
  const kept = base.chunks.flatMap((chunk, index) => (replacements.has(chunk.path) ? [] : [index]));
  const added = [...replacements.values()].flat();
  const dimension = base.dimension ?? added[0]?.vector.length;
  if (dimension === undefined) return EMPTY;
  const mismatch = added.find((chunk) => chunk.vector.length !== dimension);
  if (mismatch) throw dimensionMismatch(mismatch.vector.length, dimension, file);
  const vectors = new Float32Array((kept.length + added.length) * dimension);
  const chunks: ChunkRecord[] = [];
  kept.forEach((from, to) => {
    vectors.set(base.vectors.subarray(from * dimension, (from + 1) * dimension), to * dimension);
    chunks.push(base.chunks[from]!);
  });
  added.forEach((chunk, offset) => {
    vectors.set(chunk.vector, (kept.length + offset) * dimension);
    const { vector: _vector, ...record } = chunk;
    chunks.push(record);
  });
  return { dimension, chunks, vectors };
}

function dimensionMismatch(actual: number, expected: number, file: string): IndexError {
  return new IndexError(
    `the vectors have dimension ${actual} but the index at ${file} has dimension ${expected}; ` +
      'it was built with another embedding model or dimension',
  );
}

function firstPendingDimension(pending: ReadonlyMap<string, readonly StoredChunk[]>): number | undefined {
  for (const chunks of pending.values()) if (chunks[0]) return chunks[0].vector.length;
  return undefined;
}

function encode(snapshot: Snapshot, identity: LocalStoreIdentity): Uint8Array[] {
  let header = JSON.stringify({ format: FORMAT, ...identity, dimension: snapshot.dimension ?? null, chunks: snapshot.chunks });
  header += ' '.repeat((4 - (Buffer.byteLength(header) % 4)) % 4);
  const headerBytes = Buffer.from(header, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(headerBytes.length);
  const vectorBytes = new Uint8Array(snapshot.vectors.buffer, snapshot.vectors.byteOffset, snapshot.vectors.byteLength);
  return [Buffer.from(MAGIC, 'latin1'), length, headerBytes, vectorBytes];
}

/** The index on disk (absent: empty); a damaged one reads as empty, with the reason. */
async function readIndex(file: string, tree: string): Promise<{ snapshot: Snapshot; damage: string | undefined }> {
  try {
    return { snapshot: await loadSnapshot(file, tree), damage: undefined };
  } catch (error) {
    if (!(error instanceof IndexError)) throw error;
    return { snapshot: EMPTY, damage: error.message };
  }
}

async function loadSnapshot(file: string, tree: string): Promise<Snapshot> {
  let info;
  try {
    info = await stat(file);
  } catch {
    return EMPTY;
  }
  const cached = cache.get(file);
  if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.snapshot;
  const bytes = await readFile(file);
  const snapshot = decode(bytes, file, tree);
  remember(file, { mtimeMs: info.mtimeMs, size: info.size, snapshot });
  return snapshot;
}

function decode(bytes: Buffer, file: string, tree: string): Snapshot {
  const damaged = (why: string): IndexError =>
    new IndexError(`the index of ${tree} at ${file} is damaged (${why}); rebuild it: faultline index ${tree} (or fault_index_source_code)`);
  if (bytes.length < 12 || bytes.toString('latin1', 0, 8) !== MAGIC) throw damaged('not a faultline index file');
  const headerLength = bytes.readUInt32LE(8);
  const vectorsStart = 12 + headerLength;
  if (vectorsStart > bytes.length) throw damaged('truncated header');
  let header: { format?: unknown; dimension?: unknown; chunks?: unknown };
  try {
    header = JSON.parse(bytes.toString('utf8', 12, vectorsStart)) as typeof header;
  } catch {
    throw damaged('unreadable header');
  }
  if (header.format !== FORMAT || !Array.isArray(header.chunks)) throw damaged(`unknown format ${String(header.format)}`);
  if (!header.chunks.every(isChunkRecord)) throw damaged('a chunk without its path, symbol, lines or text');
  const chunks = header.chunks;
  const dimension = typeof header.dimension === 'number' ? header.dimension : undefined;
  const expectedBytes = chunks.length * (dimension ?? 0) * 4;
  if (bytes.length - vectorsStart !== expectedBytes) throw damaged(`expected ${expectedBytes} bytes of vectors, found ${bytes.length - vectorsStart}`);
  // A copy: the file's buffer may not be 4-byte aligned for a Float32Array view.
  const vectors = new Float32Array(expectedBytes / 4);
  new Uint8Array(vectors.buffer).set(bytes.subarray(vectorsStart));
  return { dimension, chunks, vectors };
}

function isChunkRecord(value: unknown): value is ChunkRecord {
  const record = value as Partial<Record<keyof ChunkRecord, unknown>> | null;
  return (
    typeof record === 'object' &&
    record !== null &&
    (['id', 'path', 'language', 'symbol', 'kind', 'text', 'hash', 'fileHash'] as const).every((key) => typeof record[key] === 'string') &&
    Number.isInteger(record.startLine) &&
    Number.isInteger(record.endLine)
  );
}

function remember(file: string, entry: CachedSnapshot): void {
  cache.delete(file);
  cache.set(file, entry);
  while (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
}
