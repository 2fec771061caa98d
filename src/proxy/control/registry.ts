/**
 * The live faults of a running proxy: the base faults it started with plus those injected at run
 * time, each with an id, a target mapping and an optional expiry timer. The proxy's two fault lists
 * (network and HTTP) are the base faults, then the injected ones in the order injected: the first
 * change sets them whole (from then on the registry owns them), each later one adds or removes its
 * own faults by id, so an inject's check costs the same with 1,000 faults on as with none (open connections still
 * re-attach their stages over the whole network list).
 *
 *   inject(target, config, durationMs?) → id      clear(id) → found?      clearAll()      status()
 */
import { randomBytes } from 'node:crypto';
import { InputError } from '../../kernel/errors.js';
import type { FaultSpec } from '../faults/index.js';
import type { HttpFaultSpec } from '../http/spec.js';
import type { RunningProxy } from '../proxy.js';
import { parseFaultConfig, type FaultConfig } from './fault-config.js';
import { actedCount, type UnitCount } from '../run-record.js';

/** At most this many injected faults at once (mcp-chaos-monkey's MAX_FAULTS). */
export const MAX_ACTIVE_FAULTS = 1000;
/** The longest durationMs accepted: a day. */
export const MAX_FAULT_DURATION_MS = 86_400_000;

export interface InjectedFault {
  id: string;
  target: string;
  /** The type as the caller wrote it. */
  type: string;
  config: FaultConfig;
  injectedAt: number;
  expiresAt: number | undefined;
  timer: NodeJS.Timeout | undefined;
}

export interface FaultStatus {
  id: string;
  target: string;
  type: string;
  /**
   * What the fault acted on (mcp-chaos-monkey counts a request when its fault fires), the count the experiment
   * reports (actedCount in proxy/run-record.ts): requests, or on plain TCP a network fault's own actions.
   */
  requestCount: number;
  /** What requestCount counts, singular: "HTTP request", "Redis command", "request", "delay", "held connection", … */
  unit: string;
}

/** A fault the proxy keeps no counters for yet: it met nothing. */
export const noCount: UnitCount = { count: 0, unit: 'request' };

/** A fresh injected fault's id: the target's name, the time and a random tail. */
export function faultId(target: string): string {
  return `${target}-${Date.now()}-${randomBytes(4).readUInt32BE(0).toString(36).padStart(6, '0').slice(-6)}`;
}

/** What the admin API's /chaos routes drive: a FaultRegistry, or another owner of proxies (src/toxiproxy). */
export interface FaultControl {
  inject(target: unknown, config: unknown, durationMs?: unknown): string;
  clear(id: unknown): boolean;
  clearAll(): number;
  status(): FaultStatus[];
}

/** Checks an injected fault's durationMs (undefined: no expiry). */
export function checkDurationMs(durationMs: unknown): number | undefined {
  if (
    durationMs !== undefined &&
    (typeof durationMs !== 'number' ||
      !Number.isInteger(durationMs) ||
      durationMs < 0 ||
      durationMs > MAX_FAULT_DURATION_MS)
  ) {
    throw new InputError(`durationMs: whole milliseconds in 0..${MAX_FAULT_DURATION_MS}`);
  }
  return durationMs as number | undefined;
}

/**
 * Ids for the faults of a proxy its caller owns alone (a run's, on the proxy thread): the fault's type, numbered
 * from its second. A fault's name seeds its random draws, so the same run with the same seed draws the same.
 */
export function typeIds(): (target: string, type: string) => string {
  const used = new Set<string>();
  return (_target, type) => {
    let id = type;
    for (let n = 2; used.has(id); n++) id = `${type}-${n}`;
    used.add(id);
    return id;
  };
}

export type RegistryEvent = { type: 'inject' | 'clear' | 'expire'; id: string; target: string; faultType: string };

export class FaultRegistry implements FaultControl {
  private readonly injected = new Map<string, InjectedFault>();
  /** Whether the proxy's lists are the base and injected faults (set whole once; then changed fault by fault). */
  private owned = false;

  constructor(
    private readonly proxy: RunningProxy,
    private readonly base: { network: FaultSpec[]; http: HttpFaultSpec[] } = { network: [], http: [] },
    private readonly onEvent: (event: RegistryEvent) => void = () => {},
    private readonly newId: (target: string, type: string) => string = faultId,
  ) {}

  /** The targets a fault may name: each mapping's bound port and #name. */
  targets(): string[] {
    return this.proxy.mappings.flatMap((mapping, index) => [
      String(this.proxy.ports[index]),
      ...(mapping.name ? [mapping.name] : []),
    ]);
  }

  /** The index of the mapping a target (bound port, or name with or without #) names; -1 for none. */
  private mappingOf(target: string): number {
    const name = target.trim().replace(/^#/, '');
    return this.proxy.mappings.findIndex(
      (mapping, index) => mapping.name === name || String(this.proxy.ports[index]) === name,
    );
  }

  inject(target: unknown, config: unknown, durationMs?: unknown): string {
    if (typeof target !== 'string' || target.trim() === '')
      throw new InputError("target: a non-empty string, a mapping's local port or #name");
    const name = target.trim().replace(/^#/, '');
    if (!this.targets().includes(name))
      throw new InputError(
        `target: "${target}" names no mapping of this proxy; accepted: ${this.targets().join(', ')}`,
      );
    checkDurationMs(durationMs);
    if (this.injected.size >= MAX_ACTIVE_FAULTS)
      throw new InputError(`at most ${MAX_ACTIVE_FAULTS} faults may be active; clear some first`);
    const parsed = parseFaultConfig(config);
    // The body's target says where the fault goes. A config that names a mapping of its own (a
    // config copied from --http-fault or a tool's faults) must agree, or the caller would get a
    // fault on another mapping than the one written in the config, silently.
    const own = (parsed.spec as { target?: unknown }).target;
    if (own !== undefined && (typeof own !== 'string' || this.mappingOf(own) !== this.mappingOf(name))) {
      throw new InputError(
        `config.target: ${JSON.stringify(own)} conflicts with target ` +
          `"${target}"; the fault goes on the mapping target names, ` +
          'so drop config.target or make it name the same mapping',
      );
    }
    const id = this.newId(name, (parsed.spec as { type: string }).type);
    const fault: InjectedFault = {
      id,
      target: name,
      type: parsed.type,
      config: parsed,
      injectedAt: Date.now(),
      expiresAt: undefined,
      timer: undefined,
    };
    this.injected.set(id, fault);
    try {
      this.add(fault);
    } catch (error) {
      this.injected.delete(id);
      // The proxy checks the new fault (the first time, its whole list): the one that can be wrong is the caller's.
      if (error instanceof InputError) throw new InputError(`config: ${error.message.replace(/^faults\[\d+\]: /, '')}`);
      throw error;
    }
    if (durationMs !== undefined) {
      fault.expiresAt = Date.now() + (durationMs as number);
      fault.timer = setTimeout(() => {
        if (!this.injected.delete(id)) return;
        this.remove([fault]);
        this.onEvent({ type: 'expire', id, target: fault.target, faultType: fault.type });
      }, durationMs as number);
      fault.timer.unref();
    }
    this.onEvent({ type: 'inject', id, target: name, faultType: parsed.type });
    return id;
  }

  clear(id: unknown): boolean {
    if (typeof id !== 'string') return false;
    const fault = this.injected.get(id);
    if (!fault) return false;
    clearTimeout(fault.timer);
    this.injected.delete(id);
    this.remove([fault]);
    this.onEvent({ type: 'clear', id, target: fault.target, faultType: fault.type });
    return true;
  }

  clearAll(): number {
    const count = this.injected.size;
    const faults = [...this.injected.values()];
    for (const fault of faults) clearTimeout(fault.timer);
    this.injected.clear();
    this.remove(faults);
    if (count > 0) this.onEvent({ type: 'clear', id: '*', target: '*', faultType: 'all' });
    return count;
  }

  status(): FaultStatus[] {
    const counters = this.proxy.counters();
    return [...this.injected.values()].map((fault) => {
      const { count, unit } = actedCount(counters, fault.id, this.mappingOf(fault.target)) ?? noCount;
      return { id: fault.id, target: fault.target, type: fault.type, requestCount: count, unit };
    });
  }

  /** Stops every expiry timer (the proxy itself is stopped by its owner). */
  dispose(): void {
    for (const fault of this.injected.values()) clearTimeout(fault.timer);
    this.injected.clear();
  }

  /** Puts `fault` (already in `injected`) on the proxy's list; throws (changing nothing) when the proxy refuses it. */
  private add(fault: InjectedFault): void {
    if (!this.owned) return this.apply();
    if (fault.config.kind === 'network') return this.proxy.addFault(specOf(fault) as FaultSpec);
    if (!this.proxy.http) throw new InputError(NOT_HTTP);
    this.proxy.addHttpFault(specOf(fault));
  }

  /** Takes `faults` (no longer in `injected`) off the proxy's lists. */
  private remove(faults: readonly InjectedFault[]): void {
    if (!this.owned) return this.apply();
    const network = faults.filter((fault) => fault.config.kind === 'network').map((fault) => fault.id);
    const http = faults.filter((fault) => fault.config.kind === 'http').map((fault) => fault.id);
    if (network.length > 0) this.proxy.removeFaults(network);
    if (http.length > 0 && this.proxy.http) this.proxy.removeHttpFaults(http);
  }

  /** Sets the proxy's lists whole: the base faults, then the injected ones in order. Owned once it succeeds. */
  private apply(): void {
    const network: FaultSpec[] = [...this.base.network];
    const http: HttpFaultSpec[] = [...this.base.http];
    for (const fault of this.injected.values()) {
      if (fault.config.kind === 'network') network.push(specOf(fault) as FaultSpec);
      else http.push(specOf(fault));
    }
    this.proxy.setFaults(network);
    if (this.proxy.http) this.proxy.setHttpFaults(http);
    else if (http.length > 0) throw new InputError(NOT_HTTP);
    this.owned = true;
  }
}

const NOT_HTTP = 'this proxy does not parse HTTP, so it cannot take HTTP faults';

/** What the proxy's list holds for an injected fault: its config, named by its id, on its mapping. */
function specOf(fault: InjectedFault): HttpFaultSpec {
  return { ...fault.config.spec, name: fault.id, target: fault.target } as HttpFaultSpec;
}
