/**
 * Where an index run prepares its changed files (prepare-file.ts: parse, chunk, tokenise): the
 * caller's own thread and, with a pool of N > 1, N − 1 worker threads (chunk-worker.ts), each with
 * its own web-tree-sitter runtime and grammars. Writing stays with the caller: it takes the results
 * in the order it asked for them and writes them to the one store, so the index is the same
 * whatever the pool's size (test/index-workers.test.ts compares them).
 *
 * The size is `--workers` / the tool's default, else FAULTLINE_INDEX_WORKERS, else one per core
 * (os.availableParallelism). The caller's thread counts as one: it writes, and (with no more
 * threads than cores) prepares a file whenever it would otherwise wait for one. So a pool sized to
 * the cores keeps as many threads busy as there are cores; a worker more would cost its own
 * start-up and warm-up (~0.5 s of CPU: its runtime, grammars and JIT, none shared between threads)
 * and every chunk's trip between threads, and take the writing thread's share of a core. A small
 * tree is chunked on the caller's thread, and threads start only as work comes.
 *
 * A caller whose event loop serves others (the MCP server's: other calls, pings, cancellation)
 * opens the pool with `callerPrepares: false`: every file is prepared on a worker thread, at least
 * one whatever the size asked and the tree's, and the caller's thread only writes, so no parse of
 * a large file holds its loop. The CLI keeps its own thread preparing: nothing else waits on it.
 *
 * Who prepares a job is decided by one compare-and-swap on a cell of shared memory, so a job is
 * prepared once: its thread takes it when it comes to it; the caller takes it when it needs it
 * before that (it is still queued), or while it waits for another job being prepared (the oldest
 * job still queued). A thread skips a job the caller took.
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
/**
 * Cells of the shared claims array: a job holds one from being given to a thread until the thread
 * has passed it (prepared or skipped it). Jobs given while none is free are the caller's.
 */
const CLAIM_CELLS = 1024;
/** A cell's states: the job waits in its thread's queue, its thread prepares it, the caller does. */
export const CLAIM = { queued: 0, thread: 1, caller: 2 } as const;
/** A job given without a cell (none free, and the caller may not prepare): its thread prepares it, no claim made. */
export const NO_CELL = -1;

export interface ChunkPool {
  /** Threads preparing files, the caller's own included (1: the caller's alone). */
  readonly size: number;
  /** Worker threads started so far (at most size − 1). */
  readonly threadsStarted: number;
  /** Jobs the caller's thread prepared (every job with a pool of one). */
  readonly preparedByCaller: number;
  /**
   * Starts preparing `job`; the function gives its chunks when the caller is ready to store them
   * (call it once). A job is started as soon as it is given, whenever its chunks are asked for.
   */
  prepare(job: FileJob): () => Promise<PreparedChunk[]>;
  /** Settles once the worker threads have passed every job given so far (prepared, or skipped as the caller's). */
  whenPassed(): Promise<void>;
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

export interface ChunkPoolOptions {
  /** The cores this process may use (default os.availableParallelism()). */
  cores?: number | undefined;
  /**
   * Whether the caller's thread may prepare files (default true): alone for a small tree or a pool of 1, and while
   * it would wait with no more threads than cores. False: worker threads prepare every file, at least one of them,
   * and the caller's thread only writes (its event loop is never held by a parse).
   */
  callerPrepares?: boolean | undefined;
}

/**
 * A pool of `workers` threads for a run over `files` files: the caller's own thread alone for a
 * small tree; else it and up to `workers` − 1 worker threads, started as jobs come while the others
 * are busy (so a run whose files are all unchanged starts none). Without `callerPrepares`, the
 * caller and at least one worker thread, whatever the tree.
 */
export function openChunkPool(workers: number, files: number, options: ChunkPoolOptions = {}): ChunkPool {
  const { cores = availableParallelism(), callerPrepares = true } = options;
  if (!callerPrepares) return new WorkerPool(Math.max(workers, 2), false);
  return workers === 1 || files < MIN_FILES_FOR_WORKERS ? inProcessPool() : new WorkerPool(workers, workers <= cores);
}

function inProcessPool(): ChunkPool {
  let prepared = 0;
  const prepare = (job: FileJob) => {
    prepared++;
    const chunks = prepareFile(job);
    // Asked for in order by the caller; one that stops first must not leave a rejection unhandled.
    chunks.catch(() => {});
    return () => chunks;
  };
  return {
    size: 1,
    threadsStarted: 0,
    get preparedByCaller() {
      return prepared;
    },
    prepare,
    whenPassed: async () => {},
    close: async () => {},
  };
}

type Answer = { id: number; chunks: PreparedChunk[] } | { id: number; error: { message: string; stack?: string } };

/** One thread and the jobs it has been given. */
interface PoolThread {
  worker: Worker;
  /** Jobs given that the thread has not passed yet (answered, or skipped as the caller's). */
  pending: Map<number, Job>;
  /** Where the thread answers, read as the caller asks (chunk-worker.ts posts there, then says so). */
  answers: MessagePort;
  /** Answers read from `answers` while looking for another one, by id. */
  unclaimed: Map<number, Answer>;
}

/** A job given and not yet asked for. */
interface Job {
  id: number;
  job: FileJob;
  /** Its cell of the claims array while its thread has not passed it (NO_CELL: the thread's alone). */
  cell: number;
  thread: PoolThread;
  /** Settles when the thread has answered (or the pool failed). */
  answered: Promise<void>;
  resolve(): void;
  reject(error: Error): void;
  /** The chunks, when the caller's thread took the job. */
  local?: Promise<PreparedChunk[]> | undefined;
}

class WorkerPool implements ChunkPool {
  private readonly threads: PoolThread[] = [];
  /** Jobs given and not yet asked for, in the order given (ids grow). */
  private readonly jobs = new Map<number, Job>();
  private readonly claims = new Int32Array(new SharedArrayBuffer(CLAIM_CELLS * Int32Array.BYTES_PER_ELEMENT));
  private readonly freeCells = Array.from({ length: CLAIM_CELLS }, (_, cell) => CLAIM_CELLS - 1 - cell);
  private nextId = 0;
  private failure: Error | undefined;
  /** Told when a thread has passed a job (whenPassed). */
  private passedWaiters: Array<() => void> = [];
  preparedByCaller = 0;

  /**
   * `callerPrepares`: whether the caller's thread prepares files while it would wait. Not with more
   * threads than cores: the workers alone keep the cores busy, and the files the caller would take
   * (35 of the standard library's 664 with 4 threads on 2 cores) cost its own start-up and JIT
   * warm-up of the preparing code, taken from the writing: without them its thread's CPU fell from
   * 3.12 to 2.55 s, the process's from 11.31 to 11.03 s (medians of 4, load 8).
   */
  constructor(
    readonly size: number,
    private readonly callerPrepares: boolean,
  ) {}

  get threadsStarted(): number {
    return this.threads.length;
  }

  prepare(job: FileJob): () => Promise<PreparedChunk[]> {
    if (this.failure) {
      const failure = this.failure;
      return () => Promise.reject(failure);
    }
    const cell = this.freeCells.pop();
    if (cell === undefined && this.callerPrepares) return this.preparedHere(job);
    // The thread with the fewest jobs waiting (files differ in size by orders of magnitude), or a
    // new one while every thread has work and the pool has room.
    let thread = this.threads.reduce<PoolThread | undefined>(
      (best, next) => (best === undefined || next.pending.size < best.pending.size ? next : best),
      undefined,
    );
    if (thread === undefined || (thread.pending.size > 0 && this.threads.length < this.size - 1)) {
      thread = this.start();
      this.threads.push(thread);
    }
    const id = this.nextId++;
    // Every cell held (the threads lag far behind) and the caller may not prepare: the thread's alone, no cell.
    const entry = { id, job, cell: cell ?? NO_CELL, thread } as Job;
    entry.answered = new Promise<void>((resolve, reject) => Object.assign(entry, { resolve, reject }));
    // Asked for in order by the caller; one that stops first must not leave a rejection unhandled.
    entry.answered.catch(() => {});
    this.jobs.set(id, entry);
    thread.pending.set(id, entry);
    if (entry.cell !== NO_CELL) Atomics.store(this.claims, entry.cell, CLAIM.queued);
    thread.worker.postMessage({ id, cell: entry.cell, job });
    return () => this.chunksOf(entry);
  }

  whenPassed(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.threads.every((thread) => thread.pending.size === 0)) return Promise.resolve();
    return new Promise((resolve, reject) =>
      this.passedWaiters.push(() => (this.failure ? reject(this.failure) : this.whenPassed().then(resolve, reject))),
    );
  }

  async close(): Promise<void> {
    this.fail(new CancelledError('indexing stopped before this file was chunked'));
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
    for (const thread of this.threads) {
      thread.answers.close();
      thread.unclaimed.clear();
    }
    this.jobs.clear();
  }

  /**
   * The job's chunks: its thread's answer, or the caller's own if it is still queued. While its
   * thread prepares it, the caller prepares the oldest job still queued rather than wait.
   */
  private async chunksOf(entry: Job): Promise<PreparedChunk[]> {
    try {
      for (;;) {
        // A closed or failed pool's answers are not read (close() closes the ports).
        if (this.failure) throw this.failure;
        if (entry.local || (this.callerPrepares && this.take(entry))) return await entry.local!;
        if (!entry.thread.pending.has(entry.id)) return claim(entry.thread, entry.id);
        // Being prepared on its thread.
        const queued = this.callerPrepares ? this.oldestQueued(entry.id) : undefined;
        if (queued) await queued.local!.catch(() => {});
        else await entry.answered;
      }
    } finally {
      this.jobs.delete(entry.id);
    }
  }

  /** Takes a job still in its thread's queue to prepare on the caller's thread; false if the thread has it. */
  private take(entry: Job): boolean {
    if (entry.local || entry.cell === NO_CELL || !entry.thread.pending.has(entry.id)) return false;
    if (Atomics.compareExchange(this.claims, entry.cell, CLAIM.queued, CLAIM.caller) !== CLAIM.queued) return false;
    this.prepareLocally(entry);
    return true;
  }

  /** The oldest job after `id` still waiting in a thread's queue, taken by the caller. */
  private oldestQueued(id: number): Job | undefined {
    for (const entry of this.jobs.values()) if (entry.id > id && this.take(entry)) return entry;
    return undefined;
  }

  private prepareLocally(entry: Job): void {
    this.preparedByCaller++;
    entry.local = prepareFile(entry.job);
    // Asked for in order by the caller; one that stops first must not leave a rejection unhandled.
    entry.local.catch(() => {});
  }

  /** A job the caller prepares when it asks for it (every cell is held: the threads lag far behind). */
  private preparedHere(job: FileJob): () => Promise<PreparedChunk[]> {
    return () => {
      if (this.failure) return Promise.reject(this.failure);
      this.preparedByCaller++;
      return prepareFile(job);
    };
  }

  private start(): PoolThread {
    // stdout belongs to MCP in stdio mode: whatever a worker prints goes to stderr.
    const { port1: answers, port2 } = new MessageChannel();
    const worker = new Worker(new URL('./chunk-worker.js', import.meta.url), {
      stdout: true,
      workerData: { answers: port2, claims: this.claims },
      transferList: [port2],
    });
    worker.stdout.pipe(process.stderr);
    const thread: PoolThread = { worker, pending: new Map(), answers, unclaimed: new Map() };
    // The thread has passed job `id`: answered it, or skipped it as the caller's.
    worker.on('message', (id: number) => {
      const entry = thread.pending.get(id);
      if (!entry) return;
      thread.pending.delete(id);
      if (entry.cell !== NO_CELL) this.freeCells.push(entry.cell);
      if (!entry.local) entry.resolve();
      this.tellPassed();
    });
    worker.on('error', (error) => this.fail(new IndexError(`an indexing worker failed: ${error.message}`)));
    // Only close() ends a worker, after failing the pool: any other exit (process.exit() in it, a terminate() from
    // elsewhere) leaves a thread that answers nothing it is given, so the run would wait on it for ever.
    worker.on('exit', (code) => {
      if (!this.failure) this.fail(new IndexError(`an indexing worker exited (code ${code})`));
    });
    return thread;
  }

  /** Rejects every job waiting, and every later one, with `error`. */
  private fail(error: Error): void {
    this.failure ??= error;
    for (const thread of this.threads) {
      for (const entry of thread.pending.values()) entry.reject(this.failure);
      thread.pending.clear();
    }
    this.tellPassed();
  }

  private tellPassed(): void {
    const waiters = this.passedWaiters;
    this.passedWaiters = [];
    for (const waiter of waiters) waiter();
  }
}

/**
 * The answer to job `id`, read from the thread's answers port (it is there: the worker posts it
 * before saying so). Answers come in the order the thread finished its jobs, which is the order it
 * was given them, less the ones the caller took; one read past is kept until claimed.
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
