/**
 * What the caller's side (thread.ts) and the proxy thread (worker.ts) say to each other. Every
 * request carries an id and gets one reply with that id; events carry the id of the `start` that
 * made their proxy. Everything here can be copied to a thread (no functions).
 */
import type { ErrorOnTheWire } from '../kernel/errors.js';
import type { TargetAllowance } from '../target-policy.js';
import type { Mapping, ProxyCounters, ProxyEvent, ProxyOptions } from '../proxy/index.js';
import type { FaultSpec, HttpFaultSpec } from '../proxy/index.js';

/** ProxyOptions without its functions, which cannot cross to a thread. */
export interface StartOptions extends Omit<ProxyOptions, 'onEvent' | 'lookup'> {
  /** Send the proxy's events back (the caller gave onEvent). */
  events: boolean;
  /** Resolve remote names with targetLookup(targets) (target-policy.ts); else as startProxy does. */
  targets?: TargetAllowance;
}

export type ToProxyThread =
  | { type: 'start'; id: number; options: StartOptions }
  | { type: 'setFaults'; id: number; proxy: number; faults: readonly FaultSpec[] }
  | { type: 'setHttpFaults'; id: number; proxy: number; faults: readonly HttpFaultSpec[] }
  | { type: 'counters'; id: number; proxy: number }
  | { type: 'inject'; id: number; proxy: number; target: string; config: unknown }
  | { type: 'clear'; id: number; proxy: number; fault: string }
  | { type: 'clearAll'; id: number; proxy: number }
  | { type: 'stop'; id: number; proxy: number }
  | { type: 'resources'; id: number };

/** What a `start` answers: the running proxy's facts, and the thread's load gauge. */
export interface Started {
  mappings: Mapping[];
  ports: number[];
  seed: number | string;
  http: boolean;
  load: Float64Array;
}

/** What an `inject` answers: the fault's id, and the counters as it went on (read on the thread, at once). */
export interface Injected {
  id: string;
  counters: ProxyCounters;
}

/** A reply's value: what `start`, `counters`, `inject`, `clear` and `resources` answer; nothing for the others. */
export type ReplyValue = Started | ProxyCounters | Injected | string[] | boolean | undefined;

export type FromProxyThread =
  | { type: 'reply'; id: number; value?: ReplyValue; error?: ErrorOnTheWire }
  | { type: 'event'; proxy: number; event: ProxyEvent };
