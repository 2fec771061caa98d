/**
 * The proxy thread: one worker thread per process that hosts fault proxies (startProxy, run by
 * worker.ts), started by the first one and kept for the next.
 *
 * Why a thread of its own: a scenario's load generator and its proxy each want a free event loop.
 * Sharing one (as the in-process proxy shared the caller's thread) made the generator send late
 * and stamp responses late whenever the proxy was busy, and that lateness was reported as the
 * target's latency. Why one kept thread, as for the generator: a new thread costs tens of
 * milliseconds and runs its code cold; the scenario's warm-up warms this one once per process.
 * It holds nothing between proxies and is unref'd then, so it never keeps the process alive.
 *
 *   caller's thread                           proxy thread (worker.ts)
 *   startHostedProxy ───start(options)─────▶   startProxy, watch this thread's load
 *        HostedProxy   ◀──reply: ports, seed, load gauge──
 *   setFaults / setHttpFaults / counters ─▶   the proxy's own; a refusal comes back as it was thrown
 *   onEvent(event)     ◀──event────────────   open / connect_failed / close
 *   stop()             ───stop─────────────▶   every socket closed, then the reply
 *
 * A proxy's stop is bounded: past STOP_BOUND_MS without a reply the thread is terminated, with
 * every proxy on it, and the next start begins a new one. A thread that fails or exits fails
 * every call in progress; its proxies are gone (their stop resolves at once).
 */
import { Worker } from 'node:worker_threads';
import { lendClock } from '../clock/index.js';
import { errorFromWire } from '../kernel/errors.js';
import type { ProxyEvent } from '../proxy/index.js';
import type { FromProxyThread, ReplyValue, StartOptions, Started, ToProxyThread } from './messages.js';

/** The longest a hosted proxy's stop may take before its thread is terminated. */
export const STOP_BOUND_MS = 10_000;

type Request = ToProxyThread extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

interface Call {
  resolve(value: ReplyValue): void;
  reject(error: Error): void;
}

export class ProxyThread {
  // A slot of the process's wake-up board, given back when the thread exits: the proxy's links are timed by the
  // process's one clock helper.
  private readonly worker = lendClock(
    (clock) =>
      new Worker(new URL('./worker.js', import.meta.url), {
        workerData: { clock },
      }),
  );
  private readonly calls = new Map<number, Call>();
  /** Event handlers of the proxies hosted here, by the id of their start. */
  private readonly listeners = new Map<number, ((event: ProxyEvent) => void) | undefined>();
  private nextId = 1;
  private failure: Error | undefined;

  constructor(private readonly onGone: () => void) {
    this.worker.unref();
    this.worker.on('message', (message: FromProxyThread) => this.receive(message));
    this.worker.on('error', (error) => this.end(error));
    this.worker.on('exit', (code) => this.end(new Error(`the proxy thread exited (code ${code})`)));
  }

  /** Whether the thread has failed or exited (a new one must be started). */
  get gone(): boolean {
    return this.failure !== undefined;
  }

  /** Starts a proxy here; its events go to `onEvent`. Resolves with its id and facts. */
  async start(
    options: StartOptions,
    onEvent: ((event: ProxyEvent) => void) | undefined,
  ): Promise<{ id: number; started: Started }> {
    const id = this.nextId;
    this.listeners.set(id, onEvent); // before the call: an event may come before the reply
    try {
      const started = (await this.call({ type: 'start', options })) as Started;
      return { id, started };
    } catch (error) {
      this.listeners.delete(id);
      this.holdProcess();
      throw error;
    }
  }

  /** Stops a hosted proxy; terminates the whole thread if that takes longer than STOP_BOUND_MS. */
  async stop(proxy: number): Promise<void> {
    if (this.gone) return;
    let bound: NodeJS.Timeout | undefined;
    const outlasted = new Promise<'outlasted'>((resolve) => {
      bound = setTimeout(() => resolve('outlasted'), STOP_BOUND_MS);
    });
    try {
      const stopped = this.call({ type: 'stop', proxy }).then(
        () => 'stopped' as const,
        () => 'stopped' as const, // the thread went away: so did the proxy
      );
      if ((await Promise.race([stopped, outlasted])) === 'outlasted')
        await this.terminate(
          new Error(`a proxy did not stop within ${STOP_BOUND_MS / 1000} s; its thread was terminated`),
        );
    } finally {
      clearTimeout(bound);
      this.listeners.delete(proxy);
      this.holdProcess();
    }
  }

  /** Sends a request and resolves with its reply's value (rejects with its error, revived). */
  call(request: Request): Promise<ReplyValue> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      this.holdProcess();
      this.worker.postMessage({ ...request, id } as ToProxyThread);
    });
  }

  /** Hosted proxies and calls in progress keep the process alive (as listening sockets would); an idle thread never
   * does. */
  private holdProcess(): void {
    if (this.gone) return;
    if (this.listeners.size + this.calls.size > 0) this.worker.ref();
    else this.worker.unref();
  }

  private receive(message: FromProxyThread): void {
    if (message.type === 'event') {
      try {
        this.listeners.get(message.proxy)?.(message.event);
      } catch {
        // An observer's bug must not take the proxy down (as startProxy's onEvent).
      }
      return;
    }
    const call = this.calls.get(message.id);
    if (call === undefined) return;
    this.calls.delete(message.id);
    this.holdProcess();
    if (message.error !== undefined) call.reject(errorFromWire(message.error));
    else call.resolve(message.value);
  }

  private async terminate(error: Error): Promise<void> {
    this.end(error);
    await this.worker.terminate();
  }

  /** The thread failed or exited: every call in progress fails, and the next start makes a new thread. */
  private end(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.onGone();
    for (const call of this.calls.values()) call.reject(error);
    this.calls.clear();
    this.listeners.clear();
    void this.worker.terminate();
  }
}

let thread: ProxyThread | undefined;

/** The process's proxy thread, started when first needed (again after one has gone). */
export function proxyThread(): ProxyThread {
  const current = (thread ??= new ProxyThread(() => {
    if (thread === current) thread = undefined;
  }));
  return current;
}

/** The handles alive on the proxy thread ([] when it has not started): for tests that check nothing leaks. */
export async function proxyThreadResources(): Promise<string[]> {
  if (thread === undefined) return [];
  try {
    return (await thread.call({ type: 'resources' })) as string[];
  } catch {
    return [];
  }
}
