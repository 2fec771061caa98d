/**
 * What the caller's thread (worker-host.ts) and the generator's worker (open-loop-worker.ts) say
 * to each other. Everything crosses by structured clone, so only plain data: the functions of a
 * run (onSecond, lookup, the AbortSignal) stay on the caller's side and are reached by messages.
 */
import type { LiveCounters, Plan, SecondBucket, OpenLoopResult } from './open-loop.js';
import type { LoadTarget } from './options.js';

/** The target without its lookup function: the worker asks the caller's thread to resolve names. */
export type WorkerTarget = Omit<LoadTarget, 'lookup'>;

export interface WorkerInput {
  plan: Plan;
  target: WorkerTarget;
  /** True when names must be resolved by the caller's lookup function. */
  proxiedLookup: boolean;
  /** True when the caller wants each second's bucket as it closes. */
  seconds: boolean;
  /** LIVE_FIELDS.length float64s, written by the worker, read by the caller. */
  live: SharedArrayBuffer;
  /**
   * One float64: the caller's thread writes the time (timeOrigin + now, ms) every BEAT_MS; when
   * it is older than that, the caller's event loop — which runs the in-process proxy — is behind.
   */
  callerBeat: SharedArrayBuffer;
}

/** How often the caller's thread stamps `callerBeat`. */
export const BEAT_MS = 5;

/** The order of the live counters in the shared buffer. */
export const LIVE_FIELDS = ['dispatched', 'settled', 'openConnections'] as const satisfies readonly (keyof LiveCounters)[];

export interface SerializedError {
  name: string;
  message: string;
  stack?: string | undefined;
  code?: string | undefined;
}

export type WorkerMessage =
  | { type: 'second'; bucket: SecondBucket }
  | { type: 'lookup'; id: number; hostname: string; options: LookupRequest }
  | { type: 'done'; result: OpenLoopResult }
  | { type: 'failed'; error: SerializedError };

export type HostMessage = { type: 'stop' } | { type: 'lookup-result'; id: number; error: SerializedError | null; args: unknown[] };

/** The lookup options node:net passes, as plain data. */
export interface LookupRequest {
  family?: number | string | undefined;
  hints?: number | undefined;
  all?: boolean | undefined;
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, message: error.message, stack: error.stack, code: typeof code === 'string' ? code : undefined };
  }
  return { name: 'Error', message: String(error) };
}

export function reviveError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (serialized.stack !== undefined) error.stack = serialized.stack;
  if (serialized.code !== undefined) Object.assign(error, { code: serialized.code });
  return error;
}
