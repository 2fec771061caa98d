/**
 * Indexes a source tree: walk, read, chunk, embed, store — incrementally.
 *
 * A file whose content hash equals the indexed one is neither chunked nor embedded. A changed
 * file's chunks replace its old ones; a file that is gone (or now ignored, too large or binary)
 * loses its chunks. Only files of the selected languages are touched, so indexing `python` after
 * `all` keeps the other languages' chunks.
 *
 * Work goes in batches of about EMBED_BATCH_CHUNKS chunks (file by file when the store keeps no
 * vectors: there is nothing to embed), checking the AbortSignal in between;
 * nothing is visible to searches until the store's commit, so a cancelled or failed run leaves
 * the previous index as it was (see store.ts).
 */
import { createHash } from 'node:crypto';
import { FileAccess, readRegularFile } from '../access.js';
import type { CodeChunk } from '../code/chunk.js';
import { CancelledError } from '../kernel/errors.js';
import { selectEmbedder, type Embedder } from './embedder.js';
import { IndexError } from './errors.js';
import { LanguageSelection } from './languages.js';
import { indexWorkersFrom, openChunkPool } from './chunk-pool.js';
import { canonicalTree, registerTree } from './location.js';
import { openStore, removeLegacyLocalIndex, type IndexSettings } from './open.js';
import type { FileJob, PreparedChunk } from './prepare-file.js';
import { normalised, type StoredChunk, type VectorStore } from './store.js';
import {
  indexLimitsFrom,
  MAX_INDEXED_FILE_BYTES,
  walkSourceTree,
  type SkippedDirectory,
  type WalkAccess,
  type WalkedFile,
  type WalkResult,
} from './walk.js';

/** Chunks embedded per round (and per provider request group): bounds memory and cancel latency. */
const EMBED_BATCH_CHUNKS = 256;
/**
 * Files handed to the pool per thread ahead of the one being stored (chunk-pool.ts). Files are
 * stored in the walk's order, so one big file holds up the window: with 4 a worker, the standard
 * library's workers waited for work 30% of a run (profiled), with 16 about 10%.
 */
const IN_FLIGHT_PER_WORKER = 16;
/** …and at most this much source text in flight (but at least one file), so big files are not held 16 at a time. */
const IN_FLIGHT_CHARS = 4 * 1024 * 1024;
/** Files read concurrently: reading is I/O-bound, while chunking and embedding are not. */
const READ_AHEAD = 16;
/** …and at most this many bytes of them (but at least one file), so that big files are not held 16 at a time. */
const READ_AHEAD_BYTES = 1024 * 1024;
/** Bytes inspected for a NUL byte to call a file binary (git's heuristic uses 8000). */
const BINARY_SNIFF_BYTES = 8000;
/**
 * Part of every file hash, so that files indexed by an older faultline are chunked again: bump it
 * whenever a change to chunking (src/code) or to embeddingText changes the chunks of a file.
 */
const CHUNKING_VERSION = '9';

export interface IndexOptions {
  /** An absolute directory the caller has already checked (FileAccess.resolveDirectory). */
  sourceDir: string;
  /** `all` (default) or a language name; see languages.ts. */
  lang?: string | undefined;
  /** Directories to enter although skipped by name or ignored by git (walk.ts WalkOptions.includeDirs). */
  includeDirs?: readonly string[] | undefined;
  /** The rules for reading the walk follows (the caller's FileAccess); default: no roots, so no secret location is
   * entered. */
  access?: WalkAccess | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: IndexProgress) => void) | undefined;
  /** Threads that parse and chunk, the caller's included (chunk-pool.ts): default FAULTLINE_INDEX_WORKERS, else one
   * per core. */
  workers?: number | undefined;
  /**
   * Whether the calling thread may parse and chunk files itself (default true: alone for a small tree, and while it
   * would wait with a pool sized to the cores). False for a caller whose event loop serves others (a server's): every
   * changed file is prepared on a worker thread, at least one, so a large file's parse never holds that loop.
   */
  callerPrepares?: boolean | undefined;
  /** Told once when the run waits for another run's write lock on the local index file. */
  onWaitingForLock?: ((file: string) => void) | undefined;
  /**
   * Told once the walk is done, before any file is read or parsed: how many source files it found and
   * their bytes (the CLI chooses V8's WebAssembly tiers by it, commands/index-command.ts).
   */
  onWalked?: ((walk: { files: number; bytes: number }) => void) | undefined;
}

export interface IndexProgress {
  filesDone: number;
  filesTotal: number;
  /** Chunks embedded so far in this run. */
  embedded: number;
}

export interface IndexStats {
  /** The tree as indexed (symlinks resolved). */
  tree: string;
  lang: string;
  /** Source files of the selected languages in the index after this run. */
  files: number;
  /** Of those, files chunked and embedded in this run (new or changed). */
  changed: number;
  unchanged: number;
  /**
   * Of those, files with nothing to index (empty, or no code the chunker keeps) and no chunks from
   * before; one that just became empty is `changed` (its chunks are removed). files = changed + unchanged + empty.
   */
  empty: number;
  /** Chunks in the whole index after this run. */
  chunks: number;
  /** Chunks embedded in this run. */
  embedded: number;
  /** Files left out (over 1 MB, binary, unreadable), directories left out (unreadable, or see walk.ts) and symlinks. */
  skipped: number;
  skippedFiles: {
    tooLarge: string[];
    binary: string[];
    unreadable: string[];
    /** At most MAX_LISTED_DIRECTORIES, by path; `unlistedDirectories` more were skipped. */
    directories: SkippedDirectory[];
    unlistedDirectories: number;
    symlinks: string[];
  };
  /** Files whose chunks were removed because they are gone or no longer indexable. */
  removed: number;
  seconds: number;
  store: string;
  embedder: string;
  /** Something the user should know about this run (an index rebuilt in a new format). */
  note?: string | undefined;
}

/** IndexStats as the tool's structuredContent and `faultline index` print them: snake_case, without the tree. */
export function indexStatsJson(stats: IndexStats) {
  return {
    files: stats.files,
    changed: stats.changed,
    unchanged: stats.unchanged,
    empty: stats.empty,
    chunks: stats.chunks,
    embedded: stats.embedded,
    skipped: stats.skipped,
    skipped_files: {
      too_large: stats.skippedFiles.tooLarge,
      binary: stats.skippedFiles.binary,
      unreadable: stats.skippedFiles.unreadable,
      directories: stats.skippedFiles.directories.map(({ path, reason, include }) => ({
        path,
        reason,
        ...(include !== undefined ? { include } : {}),
      })),
      ...(stats.skippedFiles.unlistedDirectories > 0
        ? { directories_not_listed: stats.skippedFiles.unlistedDirectories }
        : {}),
      symlinks: stats.skippedFiles.symlinks,
    },
    removed: stats.removed,
    seconds: stats.seconds,
    store: stats.store,
    embedder: stats.embedder,
    lang: stats.lang,
    ...(stats.note !== undefined ? { note: stats.note } : {}),
  };
}

export async function indexSourceTree(settings: IndexSettings, options: IndexOptions): Promise<IndexStats> {
  const started = performance.now();
  const selection = LanguageSelection.parse(options.lang);
  const workers = indexWorkersFrom(settings.env, options.workers);
  const embedder = await selectEmbedder(settings.llm, settings.env);
  const tree = await canonicalTree(options.sourceDir);
  const note = removeLegacyLocalIndex(settings, tree, embedder)
    ? 'the index was in the format of an older faultline and was rebuilt once in the new one (SQLite)'
    : undefined;
  const { store } = await openStore(settings, tree, embedder, options.signal, options.onWaitingForLock);
  try {
    const access = options.access ?? new FileAccess();
    const run: IndexRun = { store, embedder, tree, selection, options, settings, workers, access };
    return await indexInto(run, started, note);
  } catch (error) {
    store.rollback?.();
    throw error;
  }
}

/** What one run works with. */
interface IndexRun {
  store: VectorStore;
  embedder: Embedder;
  tree: string;
  selection: LanguageSelection;
  options: IndexOptions;
  settings: IndexSettings;
  /** The chunk pool's size asked for (chunk-pool.ts). */
  workers: number;
  /** What may be read: the walk's choice, and each opened file's (hard links without roots). */
  access: WalkAccess;
}

/** What the pass over the walked files found. */
interface FilesPass {
  present: Set<string>;
  changed: number;
  unchanged: number;
  empty: number;
  embedded: number;
}

async function indexInto(run: IndexRun, started: number, note: string | undefined): Promise<IndexStats> {
  const { store, embedder, tree, selection, options, settings, access } = run;
  await checkDimension(store, embedder);
  const walked = await walkSourceTree(tree, {
    selection,
    access,
    signal: options.signal,
    limits: indexLimitsFrom(settings.env),
    includeDirs: options.includeDirs,
  });
  options.onWalked?.({ files: walked.files.length, bytes: walked.files.reduce((sum, file) => sum + file.size, 0) });
  const indexed = await store.fileHashes();
  const skippedFiles: IndexStats['skippedFiles'] = {
    tooLarge: [...walked.tooLarge],
    binary: [],
    unreadable: [...walked.unreadable, ...walked.ignoreFileProblems.map((problem) => problem.path)],
    directories: walked.skippedDirectories,
    unlistedDirectories: walked.unlistedDirectories,
    symlinks: walked.symlinks,
  };
  const pass = await storeChangedFiles(run, walked.files, indexed, skippedFiles);
  const removed = await removeGoneFiles(run, indexed, pass.present);
  throwIfAborted(options.signal);
  if (pass.changed > 0 || removed > 0) {
    await registerTree(settings.dataDir, tree);
    await store.commit();
  }
  const { present, changed, unchanged, empty, embedded } = pass;
  return {
    tree,
    lang: selection.describe(),
    files: present.size,
    changed,
    unchanged,
    empty,
    chunks: await store.count(),
    embedded,
    skipped:
      skippedFiles.tooLarge.length +
      skippedFiles.binary.length +
      skippedFiles.unreadable.length +
      skippedFiles.directories.length +
      skippedFiles.unlistedDirectories +
      skippedFiles.symlinks.length,
    skippedFiles,
    removed,
    seconds: Math.round(performance.now() - started) / 1000,
    store: store.description,
    embedder: embedder.description,
    note:
      [
        note ?? store.note,
        ...walked.ignoreFileProblems.map(({ path, problem }) => `the rules of ${path} were not applied: it ${problem}`),
        present.size === 0 ? nothingFoundNote(tree, selection, walked) : undefined,
      ]
        .filter(Boolean)
        .join('; ') || undefined,
  };
}

async function checkDimension(store: VectorStore, embedder: Embedder): Promise<void> {
  const existing = await store.dimension();
  if (embedder.dimension !== undefined && existing !== undefined && embedder.dimension !== existing) {
    throw new IndexError(
      `${store.description} has dimension ${existing} but ${embedder.description} gives ${embedder.dimension}; ` +
        'it was built with another embedding model or dimension',
    );
  }
}

/** A changed file handed to the chunk pool, and its chunks to come. */
interface InFlight {
  path: string;
  fileHash: string;
  /** Characters of its source. */
  chars: number;
  /** Its chunks, asked for when it is stored (chunk-pool.ts ChunkPool.prepare). */
  chunks: () => Promise<PreparedChunk[]>;
}

/**
 * Reads every walked file, skips the unchanged ones, has the chunk pool prepare the others and
 * stores their chunks in the walk's order (whatever order the pool finishes them in), so that the
 * store is written the same as by a single thread.
 */
async function storeChangedFiles(
  run: IndexRun,
  files: readonly WalkedFile[],
  indexed: ReadonlyMap<string, string>,
  skippedFiles: IndexStats['skippedFiles'],
): Promise<FilesPass> {
  const { store, options } = run;
  const pass: FilesPass = { present: new Set(), changed: 0, unchanged: 0, empty: 0, embedded: 0 };
  const batch = new EmbeddingBatch(run.embedder, store, options.signal);
  const pool = openChunkPool(run.workers, files.length - indexed.size, { callerPrepares: options.callerPrepares });
  // Files chunked ahead of the one being stored: enough to keep every worker busy, bounded for memory.
  const window = pool.size === 1 ? 1 : pool.size * IN_FLIGHT_PER_WORKER;
  const inFlight: InFlight[] = [];
  let inFlightChars = 0;
  let filesDone = 0;
  const report = (): void => options.onProgress?.({ filesDone, filesTotal: files.length, embedded: batch.embedded });
  const storeNext = async (): Promise<void> => {
    const { path, fileHash, chars, chunks } = inFlight.shift()!;
    inFlightChars -= chars;
    const prepared = await chunks();
    throwIfAborted(options.signal);
    // A file with nothing to index (empty, comments only) that never had chunks needs no write.
    if (prepared.length > 0 || indexed.has(path)) {
      pass.changed++;
      await batch.add(path, fileHash, prepared);
    } else pass.empty++;
  };
  try {
    for (const group of readAheadGroups(files)) {
      const reads = await Promise.all(group.map((file) => readSource(file, run.access)));
      for (const [offset, file] of group.entries()) {
        throwIfAborted(options.signal);
        const read = reads[offset]!;
        filesDone++;
        if (read.kind !== 'text') {
          (read.kind === 'too-large' ? skippedFiles.tooLarge : skippedFiles[read.kind]).push(file.path);
          report();
          continue;
        }
        pass.present.add(file.path);
        if (indexed.get(file.path) === read.fileHash) pass.unchanged++;
        else {
          const chunks = pool.prepare(fileJob(file, read.text, store));
          inFlight.push({ path: file.path, fileHash: read.fileHash, chars: read.text.length, chunks });
          inFlightChars += read.text.length;
          while (inFlight.length >= window || (inFlight.length > 1 && inFlightChars > IN_FLIGHT_CHARS))
            await storeNext();
        }
        report();
      }
      // Chunking and SQLite writes are synchronous: let other calls of the server run between groups.
      await new Promise((resolve) => setImmediate(resolve));
    }
    while (inFlight.length > 0) await storeNext();
  } finally {
    await pool.close();
  }
  await batch.flush();
  pass.embedded = batch.embedded;
  return pass;
}

/** Removes the chunks of indexed files of the selected languages that the walk did not find. */
async function removeGoneFiles(run: IndexRun, indexed: ReadonlyMap<string, string>, present: ReadonlySet<string>) {
  let removed = 0;
  for (const path of indexed.keys()) {
    if (present.has(path) || !run.selection.languageOf(path)) continue;
    throwIfAborted(run.options.signal);
    await run.store.replaceFile(path, []);
    removed++;
  }
  return removed;
}

function fileJob(file: WalkedFile, text: string, store: VectorStore): FileJob {
  return {
    path: file.path,
    text,
    language: file.language.name,
    hasGrammar: file.language.grammar !== undefined,
    treeName: store.termsTreeName,
  };
}

/**
 * The skipped directories in a line, grouped by reason and by what includes them, each group with
 * how to include it (`how('dist')`: `--include-dir dist`, `include_dirs: ["dist"]`):
 * `node_modules/ (dependency; --include-dir node_modules), 3 directories named dist (build output; …)`.
 * Undefined when none was skipped.
 */
export function describeSkippedDirectories(
  stats: Pick<IndexStats, 'skippedFiles'>,
  how: (include: string) => string,
): string | undefined {
  const { directories, unlistedDirectories } = stats.skippedFiles;
  if (directories.length === 0) return undefined;
  const groups = new Map<string, SkippedDirectory[]>();
  for (const directory of directories) {
    const key = `${directory.reason}\0${directory.include ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), directory]);
  }
  const parts = [...groups.values()].map((group) => {
    const { path, reason, include } = group[0]!;
    const what = group.length === 1 ? path : `${group.length} directories named ${include ?? path}`;
    const remedy = include === undefined ? 'never read without roots' : how(include);
    return `${what} (${reason}; ${remedy})`;
  });
  if (unlistedDirectories > 0) parts.push(`${unlistedDirectories} more not listed`);
  return parts.join(', ');
}

/**
 * Why an index holds no file: an answer of "files 0, skipped 0" alone reads as a broken indexer
 * when the tree's files are all excluded by a .gitignore (often one above the tree, in the
 * enclosing checkout) or are not in the selected languages.
 */
function nothingFoundNote(tree: string, selection: LanguageSelection, walked: WalkResult): string {
  const { files, directories } = walked.ignored;
  const languages = selection.describe();
  const found =
    `no source file${languages === 'all' ? '' : ` in the selected languages (${languages})`} ` + `to index in ${tree}`;
  if (files === 0 && directories === 0)
    return `${found} (hidden directories, dependency directories and symlinks are not entered)`;
  const parts = [
    files > 0 ? `${files} file${files === 1 ? '' : 's'}` : '',
    directories > 0 ? `${directories} director${directories === 1 ? 'y' : 'ies'}` : '',
  ];
  return (
    `${found}: git's ignore rules (.gitignore files from the top of ` +
    `the enclosing checkout down, and .git/info/exclude) ` +
    `exclude ${parts.filter(Boolean).join(' and ')} there; \`git check-ignore -v PATH\` shows which rule`
  );
}

export { chunkId } from './prepare-file.js';

/** What is embedded for a chunk: where it is and what it is called, then the code. */
export function embeddingText(chunk: Pick<CodeChunk, 'path' | 'symbol' | 'text'>): string {
  return `${chunk.path}\n${chunk.symbol}\n\n${chunk.text}`;
}

/** The files in order, in groups of at most READ_AHEAD files and READ_AHEAD_BYTES bytes (a bigger file alone). */
export function* readAheadGroups<T extends { size: number }>(
  files: readonly T[],
  maxFiles = READ_AHEAD,
  maxBytes = READ_AHEAD_BYTES,
): Generator<T[]> {
  let group: T[] = [];
  let bytes = 0;
  for (const file of files) {
    if (group.length > 0 && (group.length >= maxFiles || bytes + file.size > maxBytes)) {
      yield group;
      group = [];
      bytes = 0;
    }
    group.push(file);
    bytes += file.size;
  }
  if (group.length > 0) yield group;
}

type ReadResult = { kind: 'text'; fileHash: string; text: string } | { kind: 'binary' | 'unreadable' | 'too-large' };

/**
 * A file's text and hash; its bytes are not kept (a read-ahead group holds only the texts). Read as
 * the walk saw it, a regular file: one replaced meanwhile by a FIFO, a device or a symbolic link
 * is not read (access.ts readRegularFile), one that grew is read up to the limit.
 */
async function readSource(file: WalkedFile, access: WalkAccess): Promise<ReadResult> {
  const read = await readRegularFile(file.absolutePath, {
    maxBytes: MAX_INDEXED_FILE_BYTES,
    followSymlinks: false,
    // Without roots, a file with several hard links may be another name of a secret: not sent to the embedder.
    refuse: (info) => access.fileRefusal(info),
  });
  if (read.kind === 'too-large') return { kind: 'too-large' };
  if (read.kind !== 'read') return { kind: 'unreadable' };
  const bytes = read.bytes;
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { kind: 'binary' };
  const fileHash = createHash('sha256').update(`faultline-chunks-${CHUNKING_VERSION}\0`).update(bytes).digest('hex');
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { kind: 'text', fileHash, text };
}

/**
 * Collects changed files until enough chunks are waiting, then embeds and stores them together;
 * for a store without vectors, stores each file's chunks as they come.
 */
class EmbeddingBatch {
  embedded = 0;
  private files: Array<{ path: string; fileHash: string; chunks: PreparedChunk[] }> = [];
  private waiting = 0;

  constructor(
    private readonly embedder: Embedder,
    private readonly store: VectorStore,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async add(path: string, fileHash: string, chunks: PreparedChunk[]): Promise<void> {
    this.files.push({ path, fileHash, chunks });
    this.waiting += chunks.length;
    // Without vectors there is nothing to batch: a file's chunks go to the store at once, and die
    // young (held for a batch, they outlived the V8 young generation and filled the old one).
    if (this.waiting >= EMBED_BATCH_CHUNKS || !this.store.wantsVectors) await this.flush();
  }

  async flush(): Promise<void> {
    const files = this.files;
    this.files = [];
    this.waiting = 0;
    const chunks = files.flatMap((file) => file.chunks);
    throwIfAborted(this.signal);
    const vectors = this.store.wantsVectors
      ? await this.embedder.embed(chunks.map(embeddingText), this.signal)
      : undefined;
    throwIfAborted(this.signal);
    let next = 0;
    for (const file of files) {
      const stored: StoredChunk[] = file.chunks.map((chunk) => ({
        ...chunk,
        fileHash: file.fileHash,
        vector: vectors ? normalised(vectors[next++]!) : undefined,
      }));
      await this.store.replaceFile(file.path, stored);
    }
    this.embedded += chunks.length;
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError('indexing was cancelled');
}
