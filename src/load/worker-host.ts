/**
 * Runs an open-loop plan in a worker thread of its own (open-loop-worker.ts), so the generator's
 * timers, sockets and parsing get their own event loop and core instead of sharing one with the
 * caller's work — in a scenario, the in-process fault proxy that every request crosses, whose
 * socket writes cost more than the generator itself (issue 18; bench/load.ts shows both ways).
 *
 * The caller sees exactly what runOpenLoop on its own thread gives: the same result (the sample
 * arrays are moved across, not copied), `onSecond` called in order on the caller's thread,
 * `live` counters readable at any moment (backed by a SharedArrayBuffer while the run lasts,
 * plain numbers again once it has ended), host names resolved by the caller's `lookup`. Abort,
 * or an `onSecond` that throws, tells the worker to stop; the promise settles only once the
 * worker has exited, which it does after closing every socket and clearing every timer — so
 * nothing outlives a run, whether it returned, failed or was cancelled.
 *
 * While the run lasts, this thread stamps a shared clock every BEAT_MS: when the stamp is stale,
 * this thread (which runs the in-process proxy every request crosses) is behind, and the worker
 * opens no on-demand connection — more would only give this thread more to do.
 */
import { Worker } from 'node:worker_threads';
import { CancelledError } from '../errors.js';
import type { LiveCounters, OpenLoopOptions, OpenLoopResult, Plan } from './open-loop.js';
import { BEAT_MS, LIVE_FIELDS, reviveError, serializeError, type HostMessage, type WorkerInput, type WorkerMessage } from './worker-protocol.js';

const WORKER_URL = new URL('./open-loop-worker.js', import.meta.url);

/**
 * After a stop, the worker closes its sockets and exits within milliseconds; should it not (a
 * bug), it is terminated after this long, which tears down its event loop and every handle on it.
 */
const STOP_GRACE_MS = 2000;

let running = 0;

/** Load workers started and not yet exited (for tests: none may outlive its run). */
export function liveLoadWorkers(): number {
  return running;
}

type Outcome = { ok: true; result: OpenLoopResult } | { ok: false; error: unknown };

export function runInWorker(plan: Plan, options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { url, connectTo, method, body, headers, tls, lookup, signal, onSecond, live } = options;
  // Aborted while this module was loading: nothing has started yet.
  if (signal?.aborted) return Promise.reject(new CancelledError('load run cancelled before it started'));
  const liveBuffer = new SharedArrayBuffer(LIVE_FIELDS.length * Float64Array.BYTES_PER_ELEMENT);
  const liveValues = new Float64Array(liveBuffer);
  const beatBuffer = new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT);
  const beat = new Float64Array(beatBuffer);
  const stamp = (): void => {
    beat[0] = performance.timeOrigin + performance.now();
  };
  stamp();
  const input: WorkerInput = {
    plan,
    target: { url, connectTo, method, body, headers, tls },
    proxiedLookup: lookup !== undefined,
    seconds: onSecond !== undefined,
    live: liveBuffer,
    callerBeat: beatBuffer,
  };
  return new Promise<OpenLoopResult>((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: input });
    running++;
    // The heartbeat the worker reads to tell whether this thread (the proxy's) is behind.
    const beatTimer = setInterval(stamp, BEAT_MS);
    let outcome: Outcome | undefined;
    let forceTimer: NodeJS.Timeout | undefined;
    const send = (message: HostMessage): void => worker.postMessage(message);
    const stop = (error: unknown): void => {
      if (outcome !== undefined) return;
      outcome = { ok: false, error };
      send({ type: 'stop' });
      forceTimer = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
    };
    const onAbort = (): void => stop(new CancelledError('load run cancelled'));
    signal?.addEventListener('abort', onAbort);
    if (live !== undefined) bindLive(live, liveValues);

    worker.on('message', (message: WorkerMessage) => {
      switch (message.type) {
        case 'second':
          if (outcome !== undefined) return;
          try {
            onSecond?.(message.bucket);
          } catch (error) {
            stop(error);
          }
          return;
        case 'lookup':
          lookup!(message.hostname, { ...message.options, family: message.options.family as number }, (error, ...args: unknown[]) => {
            // The worker may have ended meanwhile; a message to it is then dropped.
            send({ type: 'lookup-result', id: message.id, error: error ? serializeError(error) : null, args });
          });
          return;
        case 'done':
          outcome ??= { ok: true, result: message.result };
          return;
        case 'failed':
          outcome ??= { ok: false, error: reviveError(message.error) };
      }
    });
    worker.on('error', (error) => {
      outcome ??= { ok: false, error };
    });
    worker.once('exit', (code) => {
      running--;
      clearTimeout(forceTimer);
      clearInterval(beatTimer);
      signal?.removeEventListener('abort', onAbort);
      if (live !== undefined) unbindLive(live, liveValues);
      if (outcome === undefined) reject(new Error(`the load worker exited (code ${code}) before the run ended`));
      else if (outcome.ok) resolve(outcome.result);
      else reject(outcome.error);
    });
  });
}

/** Makes the caller's counters read the worker's values while the run lasts. */
function bindLive(live: LiveCounters, values: Float64Array): void {
  LIVE_FIELDS.forEach((field, k) => {
    values[k] = live[field];
    Object.defineProperty(live, field, { get: () => values[k], configurable: true, enumerable: true });
  });
}

/** Plain numbers again, the run's final values. */
function unbindLive(live: LiveCounters, values: Float64Array): void {
  LIVE_FIELDS.forEach((field, k) => {
    Object.defineProperty(live, field, { value: values[k], writable: true, configurable: true, enumerable: true });
  });
}
