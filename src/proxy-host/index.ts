/**
 * A fault proxy hosted on a thread of its own (thread.ts): what a scenario runs its proxy on, so
 * the proxy and the load generator (on its own thread too) share no event loop. The same proxy
 * as startProxy's, through the same public API; what crosses the thread is asynchronous.
 *
 *   const proxy = await startHostedProxy({
 *     mappings: ['0=tcp://127.0.0.1:8080'],
 *     faults: [],                                   // validated on the thread, refusals as thrown there
 *     targets: { allowTargets: ['10.0.0.0/8'] },     // names checked at every connect (targetLookup)
 *     onEvent: (event) => …,                        // open / connect_failed / close, on this thread
 *   });
 *   proxy.ports[0];
 *   await proxy.setFaults([{ type: 'latency', latencyMs: 200 }]);   // live, once it resolves
 *   await proxy.counters();
 *   const { id } = await proxy.inject('#api', { type: 'latency', latencyMs: 200 });   // one by one, as the
 *   await proxy.clear(id);                                                         // admin API keeps them
 *   runOpenLoop({ …, watchLoadOf: proxy.load });   // growth holds back while the proxy's thread is saturated
 *   await proxy.stop();                            // every socket closed; bounded (STOP_BOUND_MS)
 */
import { InputError } from '../kernel/errors.js';
import type { ThreadLoadGauge } from '../load/index.js';
import type { FaultSpec, HttpFaultSpec, Mapping, ProxyCounters, ProxyEvent, ProxyOptions } from '../proxy/index.js';
import type { TargetAllowance } from '../target-policy.js';
import type { Injected } from './messages.js';
import { proxyThread } from './thread.js';

export { proxyThreadResources, STOP_BOUND_MS } from './thread.js';
export type { Injected } from './messages.js';

export interface HostedProxyOptions extends Omit<ProxyOptions, 'lookup'> {
  /**
   * What the mappings' remote names may resolve to, checked at every connect with the target
   * policy's lookup (src/target-policy.ts): plain data rather than a lookup function, which cannot
   * be sent to the thread. Unset: the policy's lookup when `policy` is given, else the system's.
   */
  targets?: TargetAllowance;
}

/** A running proxy on the proxy thread: RunningProxy's facts, with its calls made asynchronous. */
export interface HostedProxy {
  readonly mappings: readonly Mapping[];
  readonly ports: readonly number[];
  readonly seed: number | string;
  readonly http: boolean;
  /** The proxy thread's load gauge, for runOpenLoop's watchLoadOf. */
  readonly load: ThreadLoadGauge;
  /** Replaces the fault list on live connections; rejects (changing nothing) on an invalid spec. */
  setFaults(faults: readonly FaultSpec[]): Promise<void>;
  /** Replaces the HTTP fault list; rejects on an invalid spec or when `http` is off. */
  setHttpFaults(faults: readonly HttpFaultSpec[]): Promise<void>;
  counters(): Promise<ProxyCounters>;
  /**
   * Adds one fault on a mapping (its #name or bound port), kept by a FaultRegistry on the proxy's
   * thread (proxy/control/registry.ts): its id, and the counters as it went on. From the first inject
   * the registry owns the fault lists (setFaults/setHttpFaults and inject are not mixed on one proxy).
   */
  inject(target: string, config: unknown): Promise<Injected>;
  /** Removes an injected fault (its counters stay, retired); false when it is not on. */
  clear(id: string): Promise<boolean>;
  /** Removes every injected fault. */
  clearAll(): Promise<void>;
  /** Closes the listeners and every connection; resolves when they are closed. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startHostedProxy(options: HostedProxyOptions): Promise<HostedProxy> {
  if (options === null || typeof options !== 'object') throw new InputError('proxy options must be an object');
  const { onEvent, targets, ...rest } = options;
  if (onEvent !== undefined && typeof onEvent !== 'function') throw new InputError('onEvent must be a function');
  if (targets !== undefined && (targets === null || typeof targets !== 'object'))
    throw new InputError('targets must be an object');
  const thread = proxyThread();
  const { id, started } = await thread.start(
    { ...rest, events: onEvent !== undefined, ...(targets !== undefined ? { targets } : {}) },
    onEvent && ((event: ProxyEvent) => onEvent(event)),
  );
  let stopping: Promise<void> | undefined;
  return {
    mappings: started.mappings,
    ports: started.ports,
    seed: started.seed,
    http: started.http,
    load: started.load,
    setFaults: async (faults) => void (await thread.call({ type: 'setFaults', proxy: id, faults })),
    setHttpFaults: async (faults) => void (await thread.call({ type: 'setHttpFaults', proxy: id, faults })),
    counters: async () => (await thread.call({ type: 'counters', proxy: id })) as ProxyCounters,
    inject: async (target, config) => (await thread.call({ type: 'inject', proxy: id, target, config })) as Injected,
    clear: async (fault) => (await thread.call({ type: 'clear', proxy: id, fault })) as boolean,
    clearAll: async () => void (await thread.call({ type: 'clearAll', proxy: id })),
    stop: () => (stopping ??= thread.stop(id)),
  };
}
