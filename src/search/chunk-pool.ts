/**
 * Where an index run prepares its changed files (prepare-file.ts: parse, chunk, tokenise): on its
 * own thread with a pool of one, else on that many worker threads (chunk-worker.ts), each with its
 * own web-tree-sitter runtime and grammars. Writing stays with the caller: it takes the results
 * in the order it asked for them and writes them to the one store, so the index is the same
 * whatever the pool's size (test/index-workers.test.ts compares them).
 *
 * The size is `--workers` / the tool's default, else FAULTLINE_INDEX_WORKERS, else one per core
 * (os.availableParallelism). A worker costs a start-up (~100 ms: the runtime and the grammars it
 * meets), so a small tree is chunked on the caller's thread, and threads start only as work comes.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CancelledError } from '../kernel/errors.js';
import { IndexError } from './errors.js';
import { prepareFile, type FileJob, type PreparedChunk } from './prepare-file.js';

export const INDEX_WORKERS_ENV = 'FAULTLINE_INDEX_WORKERS';
/** More threads than this only add memory (each holds its own wasm heap and grammars). */
export const MAX_INDEX_WORKERS = 32;
/** Walked files below which a worker's start-up costs more than it saves: the caller's thread chunks them. */
const MIN_FILES_FOR_WORKERS = 32;

export interface ChunkPool {
  /** Threads preparing files (1: the caller's own). */
  readonly size: number;
  /** Worker threads started so far (0 for the caller's own thread). */
  readonly threadsStarted: number;
  prepare(job: FileJob): Promise<PreparedChunk[]>;
  /** Stops the workers; jobs still waiting reject with a CancelledError. */
  close(): Promise<void>;
}

/**
 * The pool size asked for: `asked` (a flag or an argument) wins, then FAULTLINE_INDEX_WORKERS,
 * then the cores this process may use, at most MAX_INDEX_WORKERS.
 */
export function indexWorkersFrom(env: NodeJS.ProcessEnv, asked?: number): number {
  if (asked !== undefined) {
    if (!Number.isSafeInteger(asked) || asked < 1 || asked > MAX_INDEX_WORKERS)
      throw new IndexError(`workers must be a whole number from 1 to ${MAX_INDEX_WORKERS} (got ${asked})`);
    return asked;
  }
  const text = env[INDEX_WORKERS_ENV]?.trim();
  if (!text) return Math.min(availableParallelism(), MAX_INDEX_WORKERS);
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > MAX_INDEX_WORKERS)
    throw new IndexError(`${INDEX_WORKERS_ENV} must be a whole number from 1 to ${MAX_INDEX_WORKERS} (got "${text}")`);
  return value;
}

/**
 * A pool of up to `workers` threads for a run over `files` files: the caller's own thread for a
 * small tree; else threads started as jobs come while the others are busy (so a run whose files
 * are all unchanged starts none).
 */
export function openChunkPool(workers: number, files: number): ChunkPool {
  return workers === 1 || files < MIN_FILES_FOR_WORKERS ? inProcessPool() : new WorkerPool(workers);
}

function inProcessPool(): ChunkPool {
  return { size: 1, threadsStarted: 0, prepare: prepareFile, close: async () => {} };
}

interface Pending {
  resolve(chunks: PreparedChunk[]): void;
  reject(error: Error): void;
}

type Answer = { id: number; chunks: PreparedChunk[] } | { id: number; error: { message: string; stack?: string } };

/** One thread and the jobs it has been given. */
interface PoolThread {
  worker: Worker;
  pending: Map<number, Pending>;
}

class WorkerPool implements ChunkPool {
  private readonly threads: PoolThread[] = [];
  private nextId = 0;
  private failure: Error | undefined;

  constructor(readonly size: number) {}

  get threadsStarted(): number {
    return this.threads.length;
  }

  prepare(job: FileJob): Promise<PreparedChunk[]> {
    if (this.failure) return Promise.reject(this.failure);
    // The thread with the fewest jobs waiting (files differ in size by orders of magnitude), or a
    // new one while every thread has work and the pool has room.
    let thread = this.threads.reduce<PoolThread | undefined>(
      (best, next) => (best === undefined || next.pending.size < best.pending.size ? next : best),
      undefined,
    );
    if (thread === undefined || (thread.pending.size > 0 && this.threads.length < this.size)) {
      thread = this.start();
      this.threads.push(thread);
    }
    const id = this.nextId++;
    return new Promise<PreparedChunk[]>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, job });
    });
  }

  async close(): Promise<void> {
    this.fail(new CancelledError('indexing stopped before this file was chunked'));
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
  }

  private start(): PoolThread {
    // stdout belongs to MCP in stdio mode: whatever a worker prints goes to stderr.
    const worker = new Worker(new URL('./chunk-worker.js', import.meta.url), { stdout: true });
    worker.stdout.pipe(process.stderr);
    const thread: PoolThread = { worker, pending: new Map() };
    worker.on('message', (answer: Answer) => {
      const pending = thread.pending.get(answer.id);
      if (!pending) return;
      thread.pending.delete(answer.id);
      if ('chunks' in answer) pending.resolve(answer.chunks);
      else pending.reject(Object.assign(new Error(answer.error.message), { stack: answer.error.stack }));
    });
    worker.on('error', (error) => this.fail(new IndexError(`an indexing worker failed: ${error.message}`)));
    worker.on('exit', (code) => {
      if (thread.pending.size > 0) this.fail(new IndexError(`an indexing worker exited (code ${code})`));
    });
    return thread;
  }

  /** Rejects every job waiting, and every later one, with `error`. */
  private fail(error: Error): void {
    this.failure ??= error;
    for (const thread of this.threads) {
      for (const pending of thread.pending.values()) pending.reject(this.failure);
      thread.pending.clear();
    }
  }
}
