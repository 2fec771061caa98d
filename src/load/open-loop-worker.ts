/**
 * The worker thread that runs one open-loop run (worker-host.ts starts it): the same OpenLoopRun
 * as on the caller's thread, on an event loop of its own. It reports each second as it closes and
 * the result at the end (the sample arrays are transferred, not copied), stops when the caller
 * says so, and resolves host names through the caller's lookup function when the caller gave one
 * (a function cannot cross threads; names are rare here, since a target is usually an address).
 * Once the run has settled and every socket has closed it closes its port, and the thread ends.
 */
import type { LookupFunction } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { runPlanned, type LiveCounters } from './open-loop.js';
import { resolveTarget } from './options.js';
import { BEAT_MS, LIVE_FIELDS, reviveError, serializeError, type HostMessage, type WorkerInput, type WorkerMessage } from './worker-protocol.js';

const port = parentPort!;
const input = workerData as WorkerInput;
const controller = new AbortController();
const pendingLookups = new Map<number, (...args: unknown[]) => void>();
let nextLookup = 0;

const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

port.on('message', (message: HostMessage) => {
  if (message.type === 'stop') controller.abort();
  else if (message.type === 'lookup-result') {
    const callback = pendingLookups.get(message.id);
    pendingLookups.delete(message.id);
    callback?.(message.error === null ? null : reviveError(message.error), ...message.args);
  }
});

const lookup: LookupFunction = (hostname, options, callback) => {
  const id = nextLookup++;
  pendingLookups.set(id, callback as (...args: unknown[]) => void);
  post({ type: 'lookup', id, hostname, options: { family: options.family, hints: options.hints, all: options.all } });
};

/** The run's live counters, written where the caller's thread reads them. */
function sharedLive(buffer: SharedArrayBuffer): LiveCounters {
  const values = new Float64Array(buffer);
  const live = {} as LiveCounters;
  LIVE_FIELDS.forEach((field, k) => {
    Object.defineProperty(live, field, { get: () => values[k], set: (value: number) => (values[k] = value), enumerable: true });
  });
  return live;
}

const { tls } = input.target;
// A Buffer arrives as a plain Uint8Array; TLS wants a Buffer (or a string).
const ca = tls?.ca instanceof Uint8Array ? Buffer.from(tls.ca.buffer, tls.ca.byteOffset, tls.ca.byteLength) : tls?.ca;
const target = resolveTarget({ ...input.target, ...(tls ? { tls: { ...tls, ca } } : {}), ...(input.proxiedLookup ? { lookup } : {}) });
const onSecond = input.seconds ? (bucket: Parameters<NonNullable<Parameters<typeof runPlanned>[3]>>[0]) => post({ type: 'second', bucket }) : undefined;

/** How far behind the caller's thread is: the age of its latest heartbeat beyond the beat period. */
const beat = new Float64Array(input.callerBeat);
const callerLateMs = (): number => performance.timeOrigin + performance.now() - beat[0]! - BEAT_MS;

runPlanned(input.plan, target, controller.signal, onSecond, sharedLive(input.live), callerLateMs)
  .then(
    (result) => {
      const { samples } = result;
      const buffers = [samples.intendedStartMs, samples.latencyMs, samples.serviceMs, samples.ttfbMs, samples.status, samples.errorClass].map(
        (array) => array.buffer as ArrayBuffer,
      );
      post({ type: 'done', result }, buffers);
    },
    (error: unknown) => post({ type: 'failed', error: serializeError(error) }),
  )
  .finally(() => port.close());
