/**
 * The network and HTTP planes as the runner sees them: faults set and cleared, live, on the
 * runner's own proxies (one proxy with every mapping, on the proxy thread as a scenario's, its faults
 * kept there by the control plane's registry, exactly as the admin API keeps them) or through a
 * control plane that already runs (`faultline proxy --admin`, or an app with mcp-chaos-monkey's
 * admin endpoint: the same routes).
 *
 * A fault sent to a control plane carries durationMs, the step's length: were this process killed
 * outright, the plane still clears it when the step would have ended.
 */
import { plural } from '../../kernel/plural.js';
import { adminRequest } from '../../proxy/control/client.js';
import type { FaultConfig } from '../../proxy/control/fault-config.js';
import type { Mapping, ProxyCounters } from '../../proxy/index.js';
import { startHostedProxy, type HostedProxy } from '../../proxy-host/index.js';
import type { ThreadLoadGauge } from '../../load/index.js';
import type { TargetPolicy } from '../../target-policy.js';
import { httpFaultActed, networkFaultActed, requestsMet } from '../../proxy/run-record.js';
import { OperationalError, InputError, messageOf } from '../../kernel/errors.js';
import type { SafetyPolicy } from './policy.js';
import type { ControlPlane } from '../model.js';
import type { LookupFunction } from 'node:net';

/** Control-plane calls are bounded: a switch waits for them, and the load waits for the switch. */
const CONTROL_TIMEOUT_MS = 3000;
/**
 * How much longer than its step a fault lives on a control plane. The plane's expiry is only the safety net for a
 * runner killed outright: the runner clears the fault itself at the step's end, after reading its count, and a plane
 * that expired it first (a late timer on a loaded machine) would leave whether it acted unknown.
 */
const PLANE_EXPIRY_GRACE_MS = 15_000;

export interface ProxyPlaneOptions {
  mappings: readonly Mapping[];
  /** Parse HTTP on the mappings (needed for HTTP faults; other traffic passes as TCP). */
  http: boolean;
  seed: number | undefined;
  insecureTls: boolean;
  policy: SafetyPolicy;
  /** A connect to a mapping's remote failed: why (ECONNREFUSED…) and the mapping's index. */
  onConnectFailure?: (reason: string, mappingIndex: number) => void;
}

export interface ProxyPlane {
  readonly ports: readonly number[];
  readonly seed: number | string;
  /** The proxy thread's load gauge: the load generator holds its growth back while that thread is saturated. */
  readonly load: ThreadLoadGauge;
  inject(target: string, config: FaultConfig): Promise<string>;
  clear(id: string): Promise<void>;
  clearAll(): Promise<void>;
  /** Whether the fault with this id acted on any traffic (from the proxy's own counters). */
  acted(id: string): Promise<{ acted: boolean; detail: string }>;
  /** The counters as last read (at most a second old while the plane runs): for /metrics, read synchronously. */
  lastCounters(): ProxyCounters | undefined;
  stop(): Promise<void>;
}

/** How often the plane refreshes lastCounters() for /metrics. */
const COUNTERS_REFRESH_MS = 1000;

/**
 * The runner's proxy, on the proxy thread (src/proxy-host/) as a scenario's is, so the load generator, the proxy and
 * this thread's timers share no event loop; its faults are kept by a FaultRegistry on that thread.
 */
export async function startProxyPlane(options: ProxyPlaneOptions): Promise<ProxyPlane> {
  const proxy: HostedProxy = await startHostedProxy({
    mappings: [...options.mappings],
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    http: options.http,
    tls: { rejectUnauthorized: !options.insecureTls },
    // Plain data (it crosses to the thread): the proxy checks the mappings and looks every name up by it.
    policy: { ...targetPolicyOf(options.policy), argument: 'proxies' },
    allowProduction: options.policy.allowProduction,
    onEvent: (event) => {
      if (event.type === 'connect_failed')
        options.onConnectFailure?.(/\bE[A-Z_]{3,}\b/.exec(event.error)?.[0] ?? event.error, event.mappingIndex);
    },
  }).catch((error: unknown) => {
    // A port in use is the machine's state, not the file's mistake: exit 1, as documented.
    if (error instanceof InputError && /cannot listen on/.test(error.message))
      throw new OperationalError(error.message);
    throw error;
  });
  // Each fault's mapping and its request counters when it went on: what went through while it was on.
  const placed = new Map<string, { index: number; at: Traffic }>();
  let last: ProxyCounters | undefined;
  const read = async (): Promise<ProxyCounters> => (last = await proxy.counters());
  const refresh = setInterval(() => void read().catch(() => {}), COUNTERS_REFRESH_MS);
  refresh.unref();
  return {
    ports: proxy.ports,
    seed: proxy.seed,
    load: proxy.load,
    async inject(target, config) {
      const { id, counters } = await proxy.inject(target, config.spec);
      last = counters;
      const index = options.mappings.findIndex(
        (mapping) => mapping.name === target.replace(/^#/, '') || String(mapping.listenPort) === target,
      );
      if (index !== -1) placed.set(id, { index, at: trafficOf(counters, index) });
      return id;
    },
    clear: async (id) => void (await proxy.clear(id)),
    clearAll: () => proxy.clearAll(),
    acted: async (id) => actedOf(id, await read(), placed.get(id)),
    lastCounters: () => last,
    async stop() {
      clearInterval(refresh);
      await read().catch(() => {});
      await proxy.stop();
    },
  };
}

/** Whether the fault acted, and what it did, from the proxy's counters (`where`: its mapping's traffic when set). */
function actedOf(
  id: string,
  counters: ProxyCounters,
  where: { index: number; at: Traffic } | undefined,
): { acted: boolean; detail: string } {
  const through = where ? since(where.at, trafficOf(counters, where.index)) : undefined;
  const network = counters.faults.find((fault) => fault.name === id);
  if (network) return networkDetail(network, through);
  const http = counters.httpFaults?.find((fault) => fault.name === id);
  if (http) return httpDetail(http, through);
  return { acted: false, detail: 'its counters are gone' };
}

/**
 * What an HTTP fault did, as the network side says it: the requests it changed (`applications`), and those that drew
 * it and went through as they were (`unchanged`: a delay of 0 ms, a cut past the body's end; `oversized`), which are
 * "met", not "acted on".
 */
function httpDetail(
  http: NonNullable<ProxyCounters['httpFaults']>[number],
  through: Traffic | undefined,
): { acted: boolean; detail: string } {
  const acted = httpFaultActed(http);
  // A request fault on a Redis mapping acts per command: named so.
  const unit = through?.unit === 'Redis command' ? 'Redis command' : 'request';
  // Drew it (won its chance) and went through unchanged; every request that reached it counts in `requests`.
  const drewUnchanged = http.unchanged + http.oversized;
  const unchanged = drewUnchanged > 0 ? `; ${drewUnchanged} drew it and went through unchanged` : '';
  return {
    acted,
    detail: acted
      ? `acted on ${http.applications} of ${plural(http.requests, unit)}${unchanged}`
      : http.requests === 0
        ? `no ${unit} went through its mapping while it was set`
        : drewUnchanged > 0
          ? `changed nothing (${drewUnchanged} of ${plural(http.requests, unit)} drew it)`
          : `${plural(http.requests, unit)} reached it, none drew it`,
  };
}

/** The target policy's own fields (no production or token settings). */
function targetPolicyOf(policy: SafetyPolicy): TargetPolicy {
  return {
    allowRemoteTargets: policy.allowRemoteTargets,
    allowTargets: policy.allowTargets,
    allowNonLoopbackBind: policy.allowNonLoopbackBind,
  };
}

/** What a mapping carried, in its own unit: Redis commands, HTTP requests, or connections for plain TCP. */
interface Traffic {
  count: number;
  unit: 'Redis command' | 'HTTP request' | 'connection';
}

function trafficOf(counters: ProxyCounters, index: number): Traffic {
  const mapping = counters.mappings[index];
  if (!mapping) return { count: 0, unit: 'connection' };
  if ((mapping.respConnections ?? 0) > 0 && (mapping.httpConnections ?? 0) === 0)
    return { count: mapping.respCommands ?? 0, unit: 'Redis command' };
  if ((mapping.httpConnections ?? 0) > 0) return { count: mapping.httpExchanges ?? 0, unit: 'HTTP request' };
  return { count: mapping.connections, unit: 'connection' };
}

/** The traffic between two readings, in the later one's unit (a mapping's protocol shows with its first connection). */
function since(before: Traffic, after: Traffic): Traffic {
  return { count: after.count - (before.unit === after.unit ? before.count : 0), unit: after.unit };
}

/**
 * What a network fault did, in the unit it acted on: on a protocol-aware mapping, the requests it met (a Redis
 * blackhole "held 291 Redis commands", the connections after); else what its `applications` counted.
 */
function networkDetail(network: ProxyCounters['faults'][number], through: Traffic | undefined) {
  const acted = networkFaultActed(network);
  const met = requestsMet(network);
  const connections = plural(network.connections, 'connection');
  if (!acted)
    return {
      acted,
      detail:
        network.connections === 0
          ? 'no connection went through its mapping while it was set'
          : `was on ${connections} but changed nothing` + (met ? ` (${met} met it)` : ''),
    };
  if (met === undefined) {
    const requests = through && through.count > 0 ? `; ${plural(through.count, through.unit)} while it was on` : '';
    return { acted, detail: `${networkActions(network)} on ${connections}${requests}` };
  }
  if (network.type === 'blackhole')
    return {
      acted,
      detail: `held ${met} (${plural(network.applications, 'connection')}, ${(network.timeHeldMs / 1000).toFixed(1)} s in all)`,
    };
  return { acted, detail: `met ${met}: ${networkActions(network)} on ${connections}` };
}

/** What a network fault's `applications` counted, in its own unit. */
function networkActions(fault: ProxyCounters['faults'][number]): string {
  switch (fault.type) {
    case 'latency':
    case 'jitter':
      return `added ${plural(fault.applications, 'delay')} (${Math.round(fault.delayAddedMs)} ms in all)`;
    case 'packet_loss':
      return (
        `lost ${fault.segmentsLost} of ${plural(fault.segments, 'segment')} ` +
        `(${plural(fault.applications, 'stall')})`
      );
    case 'bandwidth':
      return `paced ${fault.bytesPaced} bytes in ${plural(fault.applications, 'piece')}`;
    case 'blackhole':
      return `held ${plural(fault.applications, 'connection')} for ${(fault.timeHeldMs / 1000).toFixed(1)} s in all`;
    default:
      return `acted ${plural(fault.applications, 'time')}`;
  }
}

/** A control plane that already runs, driven over its admin API. */
export class ControlClient {
  private readonly faults = new Set<string>();

  constructor(
    readonly plane: ControlPlane,
    private readonly token: string,
    /** The target policy's lookup: the plane's name is checked again at every connect. */
    private readonly lookup: LookupFunction,
  ) {}

  /** Fails unless the plane answers its status with this token: checked before the run starts. */
  async check(): Promise<void> {
    try {
      await adminRequest(this.options(), 'GET', '/chaos/status');
    } catch (error) {
      throw new OperationalError(`control plane ${this.plane.name} (${this.plane.url}): ${messageOf(error)}`);
    }
  }

  async inject(target: string, config: Record<string, unknown>, durationMs: number): Promise<string> {
    const { target: _own, ...body } = config;
    const answer = await adminRequest(this.options(), 'POST', '/chaos/inject', {
      target,
      config: body,
      durationMs: Math.ceil(durationMs) + PLANE_EXPIRY_GRACE_MS,
    });
    const id = answer['faultId'] ?? answer['fault_id'];
    if (typeof id !== 'string')
      throw new OperationalError(`control plane ${this.plane.name}: /chaos/inject answered no faultId`);
    this.faults.add(id);
    return id;
  }

  /**
   * The plane's requestCount for the fault and its unit, read before it is cleared, or why there is none (the plane no
   * longer lists it, or its status could not be read).
   */
  async requestCount(id: string): Promise<{ count: number; unit: string } | string> {
    let answer: Record<string, unknown>;
    try {
      answer = await adminRequest(this.options(), 'GET', '/chaos/status');
    } catch (error) {
      return `its status could not be read (${messageOf(error)}), so whether it acted is unknown`;
    }
    const faults = Array.isArray(answer['faults']) ? (answer['faults'] as Array<Record<string, unknown>>) : [];
    const fault = faults.find((entry) => entry['id'] === id);
    if (fault === undefined)
      return 'the plane no longer lists it (it was cleared there), so whether it acted is unknown';
    const count = fault['requestCount'] ?? fault['request_count'];
    if (typeof count !== 'number') return 'the plane gives no requestCount for it, so whether it acted is unknown';
    // Ours names what it counted (an HTTP request, a delay on plain TCP); mcp-chaos-monkey's counts requests.
    return { count, unit: typeof fault['unit'] === 'string' ? fault['unit'] : 'request' };
  }

  async clear(id: string): Promise<void> {
    if (!this.faults.delete(id)) return;
    // 404: it expired on the plane (its durationMs ran out first), which is what was asked.
    await adminRequest(this.options(), 'POST', '/chaos/clear', { faultId: id }).catch((error: unknown) => {
      if ((error as { status?: number }).status !== 404) throw error;
    });
  }

  /** Clears every fault this run set on the plane (never the others'): on abort, exit and Ctrl-C. */
  async clearOwn(): Promise<void> {
    const pending = [...this.faults];
    const failures: string[] = [];
    await Promise.all(
      pending.map((id) => this.clear(id).catch((error: unknown) => void failures.push(`${id}: ${messageOf(error)}`))),
    );
    if (failures.length > 0)
      throw new OperationalError(
        `control plane ${this.plane.name}: could not clear ${failures.join('; ')} ` +
          `(each expires on its own after its step's length)`,
      );
  }

  private options() {
    return { url: this.plane.url, token: this.token, timeoutMs: CONTROL_TIMEOUT_MS, lookup: this.lookup };
  }
}
