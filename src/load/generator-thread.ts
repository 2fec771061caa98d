/**
 * The generator thread: where open-loop runs happen by default, one worker thread per process,
 * started by the first run and kept for the next ones.
 *
 * Why a thread of its own: an open-loop run is only as exact as its event loop is free. A
 * scenario runs the fault proxy in this process, and an MCP server answers messages here; on one
 * thread with them, the generator sends late and timestamps responses late whenever they are
 * busy, and that lateness is reported as the target's latency. Measured through the in-process
 * proxy at 10,000 req/s (bench/load, headroom): generator and proxy together cost 50–74 µs of CPU
 * per request on one thread, and p99 rose 20.7 ms over idle; the generator alone added 1.5.
 *
 * Why one kept thread and not one per run: a new thread costs tens of milliseconds and runs its
 * code cold (interpreted) for its first thousands of requests — the very cost the scenario's
 * warm-up (scenario/warm-up.ts) pays once per process so that no measured run carries it. The
 * thread holds nothing between runs (every socket and timer of a run is closed before its result
 * is sent), and is unref'd then, so it never keeps the process alive.
 *
 *   caller's thread                          generator thread (generator-worker.ts)
 *   runOnGeneratorThread ──run(plan,target)──▶ runOnThisThread
 *        onStart(startedAt)    ◀──start──────      (clock started)
 *        onSecond(bucket)      ◀──second─────      (each settled second)
 *        onEdge(index)         ◀──edge───────      (a schedule edge: sending waits…)
 *                              ──edgePassed──▶     (…until the caller has switched)
 *        resolve(result)       ◀──done───────      (samples' buffers moved, not copied)
 *        reject(error)         ◀──failed─────
 *   signal aborted / a callback threw ──abort──▶   run stopped, sockets closed, then failed
 *   scheduleEnd.end(atMs)           ──endAt──▶     no request due from atMs on is sent
 *   live counters: shared memory, no message
 */
import { Worker } from 'node:worker_threads';
import { lendClock } from '../clock/index.js';
import { errorFromWire, type ErrorOnTheWire } from '../kernel/errors.js';
import { LiveCounters } from './live-counters.js';
import type { OpenLoopOptions, OpenLoopResult, Plan, SecondBucket } from './open-loop.js';
import type { LoadTarget } from './options.js';
import { watchThisThread } from './thread-load.js';

/** What the generator thread is sent to start a run: everything in it can be copied to a thread. */
export interface RunRequest {
  type: 'run';
  id: number;
  plan: Plan;
  target: LoadTarget;
  live: SharedArrayBuffer;
  /** The load gauges (thread-load.ts) of the threads the run watches: the caller's, a hosted proxy's. */
  watched: Float64Array[];
}

export type ToGenerator =
  | RunRequest
  | { type: 'abort'; id: number }
  | { type: 'endAt'; id: number; atMs: number }
  | { type: 'edgePassed'; id: number }
  | { type: 'resources'; id: number };

export type FromGenerator =
  | { type: 'start'; id: number; startedAt: number }
  | { type: 'second'; id: number; bucket: SecondBucket }
  | { type: 'edge'; id: number; index: number }
  | { type: 'done'; id: number; result: OpenLoopResult }
  | { type: 'failed'; id: number; error: ErrorOnTheWire }
  | { type: 'resources'; id: number; resources: string[] };

interface PendingRun {
  options: OpenLoopOptions;
  resolve(result: OpenLoopResult): void;
  reject(error: unknown): void;
  /** Set when the caller's side ended the run (a callback threw): the run rejects with it. */
  failure?: unknown;
  stopSignal?: () => void;
  stopWatching?: () => void;
  stopEndWatch?: () => void;
}

class GeneratorThread {
  // A slot of the process's wake-up board, given back when the thread exits: it paces on the process's one clock
  // helper, not one of its own.
  private readonly worker = lendClock(
    (clock) =>
      new Worker(new URL('./generator-worker.js', import.meta.url), {
        workerData: { clock },
      }),
  );
  private readonly runs = new Map<number, PendingRun>();
  private readonly questions = new Map<number, (resources: string[]) => void>();
  private nextId = 1;
  private gone = false;

  constructor(private readonly onGone: () => void) {
    this.worker.unref();
    this.worker.on('message', (message: FromGenerator) => this.receive(message));
    this.worker.on('error', (error) => this.end(error));
    this.worker.on('exit', (code) => this.end(new Error(`the load generator's thread exited (code ${code})`)));
  }

  run(plan: Plan, options: OpenLoopOptions): Promise<OpenLoopResult> {
    const id = this.nextId++;
    const live = options.live ?? new LiveCounters();
    const target: LoadTarget = {
      url: options.url,
      connectTo: options.connectTo,
      method: options.method,
      body: options.body,
      headers: options.headers,
      tls: options.tls,
      targets: options.targets,
    };
    return new Promise<OpenLoopResult>((resolve, reject) => {
      const pending: PendingRun = { options, resolve, reject };
      const signal = options.signal;
      if (signal !== undefined) {
        const onAbort = (): void => this.send({ type: 'abort', id });
        signal.addEventListener('abort', onAbort, { once: true });
        pending.stopSignal = () => signal.removeEventListener('abort', onAbort);
      }
      pending.stopEndWatch = options.scheduleEnd?.on((atMs) => this.send({ type: 'endAt', id, atMs }));
      const watch = options.watchCallerThread === true ? watchThisThread() : undefined;
      pending.stopWatching = watch?.stop;
      this.runs.set(id, pending);
      this.holdProcess();
      const watched = [...(watch ? [watch.gauge] : []), ...(options.watchLoadOf ? [options.watchLoadOf] : [])];
      this.send({ type: 'run', id, plan, target, live: live.shared.buffer as SharedArrayBuffer, watched });
    });
  }

  /** The kinds of handle (sockets, timers…) alive on the generator thread now, as process.getActiveResourcesInfo()
   * names them. */
  resources(): Promise<string[]> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.questions.set(id, resolve);
      this.holdProcess();
      this.send({ type: 'resources', id });
    });
  }

  /** A run or a question in progress keeps the process alive (as a run's sockets would); an idle thread never does. */
  private holdProcess(): void {
    if (this.gone) return;
    if (this.runs.size + this.questions.size > 0) this.worker.ref();
    else this.worker.unref();
  }

  private send(message: ToGenerator): void {
    if (!this.gone) this.worker.postMessage(message);
  }

  private receive(message: FromGenerator): void {
    if (message.type === 'resources') {
      this.questions.get(message.id)?.(message.resources);
      this.questions.delete(message.id);
      this.holdProcess();
      return;
    }
    const pending = this.runs.get(message.id);
    if (pending === undefined) return;
    switch (message.type) {
      case 'start':
        this.callBack(message.id, pending, () => pending.options.onStart?.(message.startedAt));
        return;
      case 'second':
        this.callBack(message.id, pending, () => pending.options.onSecond?.(message.bucket));
        return;
      case 'edge':
        this.passEdge(message.id, message.index, pending);
        return;
      case 'done':
        this.settle(message.id, pending);
        if (pending.failure !== undefined) pending.reject(pending.failure);
        else pending.resolve(message.result);
        return;
      case 'failed':
        this.settle(message.id, pending);
        pending.reject(pending.failure ?? errorFromWire(message.error));
        return;
    }
  }

  /**
   * The run sends nothing due past the edge until it is told the caller's onEdge is done (its
   * promise, if it returns one, settled): the caller's switch comes first.
   */
  private passEdge(id: number, index: number, pending: PendingRun): void {
    let waiting: void | Promise<void> = undefined;
    this.callBack(id, pending, () => {
      waiting = pending.options.onEdge?.(index);
    });
    Promise.resolve(waiting).then(
      () => this.send({ type: 'edgePassed', id }),
      (error: unknown) => {
        pending.failure ??= error;
        this.send({ type: 'abort', id });
      },
    );
  }

  /** Runs one of the caller's callbacks; one that throws ends the run with its error, as on the caller's own thread. */
  private callBack(id: number, pending: PendingRun, callback: () => void): void {
    if (pending.failure !== undefined) return;
    try {
      callback();
    } catch (error) {
      pending.failure = error;
      this.send({ type: 'abort', id });
    }
  }

  private settle(id: number, pending: PendingRun): void {
    pending.stopSignal?.();
    pending.stopWatching?.();
    pending.stopEndWatch?.();
    this.runs.delete(id);
    this.holdProcess();
  }

  /** The thread failed or exited: every run on it fails, and the next run starts a new thread. */
  private end(error: Error): void {
    if (this.gone) return;
    this.gone = true;
    this.onGone();
    for (const [id, pending] of this.runs) {
      this.settle(id, pending);
      pending.reject(pending.failure ?? error);
    }
    for (const answer of this.questions.values()) answer([]);
    this.questions.clear();
    void this.worker.terminate();
  }
}

let thread: GeneratorThread | undefined;

/** Runs a validated plan on the generator thread, starting the thread if this is the process's first run. */
export function runOnGeneratorThread(plan: Plan, options: OpenLoopOptions): Promise<OpenLoopResult> {
  const current = (thread ??= new GeneratorThread(() => {
    if (thread === current) thread = undefined;
  }));
  return current.run(plan, options);
}

/** The handles alive on the generator thread ([] when it has not started): for tests that check nothing leaks. */
export function generatorThreadResources(): Promise<string[]> {
  return thread?.resources() ?? Promise.resolve([]);
}
