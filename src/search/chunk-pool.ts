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
 *
 * A worker answers a file's chunks on a port of their own, which the caller reads only when it
 * stores the file (`receiveMessageOnPort`), and tells it on its own port only that they are there.
 * Answers read as they arrived waited, as objects on the caller's heap, behind the files before
 * them (up to 16 files per worker): they outlived the young generation and were copied by every
 * scavenge in between, while with a pool of one each file's chunks are stored as they are made and
 * die young. Unread, an answer waits serialized, outside the heap.
 */
import { availableParallelism } from 'node:os';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
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
  /**
   * Starts preparing `job`; the function gives its chunks when the caller is ready to store them
   * (call it once). A job is started as soon as it is given, whenever its chunks are asked for.
   */
  prepare(job: FileJob): () => Promise<PreparedChunk[]>;
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
  const prepare = (job: FileJob) => {
    const chunks = prepareFile(job);
    // Asked for in order by the caller; one that stops first must not leave a rejection unhandled.
    chunks.catch(() => {});
    return () => chunks;
  };
  return { size: 1, threadsStarted: 0, prepare, close: async () => {} };
}

interface Pending {
  /** The answer is waiting on the thread's answers port. */
  resolve(): void;
  reject(error: Error): void;
}

type Answer = { id: number; chunks: PreparedChunk[] } | { id: number; error: { message: string; stack?: string } };

/** One thread and the jobs it has been given. */
interface PoolThread {
  worker: Worker;
  /** Jobs not answered yet. */
  pending: Map<number, Pending>;
  /** Where the thread answers, read as the caller asks (chunk-worker.ts posts there, then says so). */
  answers: MessagePort;
  /** Answers read from `answers` while looking for another one, by id. */
  unclaimed: Map<number, Answer>;
}

class WorkerPool implements ChunkPool {
  private readonly threads: PoolThread[] = [];
  private nextId = 0;
  private failure: Error | undefined;

  constructor(readonly size: number) {}

  get threadsStarted(): number {
    return this.threads.length;
  }

  prepare(job: FileJob): () => Promise<PreparedChunk[]> {
    if (this.failure) {
      const failure = this.failure;
      return () => Promise.reject(failure);
    }
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
    const answered = new Promise<void>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, job });
    });
    // Asked for in order by the caller; one that stops first must not leave a rejection unhandled.
    answered.catch(() => {});
    return async () => {
      await answered;
      // A closed or failed pool's answers are not read (close() closes the ports).
      if (this.failure) throw this.failure;
      return claim(thread, id);
    };
  }

  async close(): Promise<void> {
    this.fail(new CancelledError('indexing stopped before this file was chunked'));
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
    for (const thread of this.threads) {
      thread.answers.close();
      thread.unclaimed.clear();
    }
  }

  private start(): PoolThread {
    // stdout belongs to MCP in stdio mode: whatever a worker prints goes to stderr.
    const { port1: answers, port2 } = new MessageChannel();
    const worker = new Worker(new URL('./chunk-worker.js', import.meta.url), {
      stdout: true,
      workerData: { answers: port2 },
      transferList: [port2],
    });
    worker.stdout.pipe(process.stderr);
    const thread: PoolThread = { worker, pending: new Map(), answers, unclaimed: new Map() };
    worker.on('message', (id: number) => {
      const pending = thread.pending.get(id);
      if (!pending) return;
      thread.pending.delete(id);
      pending.resolve();
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

/**
 * The answer to job `id`, read from the thread's answers port (it is there: the worker posts it
 * before saying so). Answers come in the order the thread finished its jobs, which is the order it
 * was given them; one read past is kept until claimed.
 */
function claim(thread: PoolThread, id: number): PreparedChunk[] {
  let answer = thread.unclaimed.get(id);
  thread.unclaimed.delete(id);
  while (answer === undefined) {
    const received = receiveMessageOnPort(thread.answers);
    if (received === undefined) throw new IndexError(`an indexing worker's answer to job ${id} is missing`);
    const next = received.message as Answer;
    if (next.id === id) answer = next;
    else thread.unclaimed.set(next.id, next);
  }
  if ('chunks' in answer) return answer.chunks;
  throw Object.assign(new Error(answer.error.message), { stack: answer.error.stack });
}
