/**
 * A fault proxy and its live control, assembled in one place for every door: the proxy on its
 * mappings with the given faults and fault configs (JSON texts, any spelling, each checked against
 * the mappings and named as the door spells it), and when asked the registry that keeps live faults
 * and the admin API (mcp-chaos-monkey's /chaos routes and GET /metrics) serving it. `faultline proxy`
 * and the proxies an MCP agent holds (held.ts) start theirs here, and log connection events as
 * `describeEvent` writes them; it knows nothing of flags or tools.
 */
import { InputError } from '../../kernel/errors.js';
import type { FaultSpec } from '../faults/index.js';
import type { HttpFaultSpec } from '../http/spec.js';
import { parseMapping, type Mapping } from '../mapping.js';
import { startProxy, type ProxyEvent, type ProxyOptions, type RunningProxy } from '../proxy.js';
import type { AdminServer } from './admin.js';
import { checkFaultTargets, parseFaultJson } from './fault-config.js';
import { FaultRegistry, type RegistryEvent } from './registry.js';

export interface AssemblyOptions extends Omit<ProxyOptions, 'mappings' | 'faults' | 'httpFaults'> {
  mappings: readonly (string | Mapping)[];
  /** How an error names mapping #index (`proxies[0]`); without it the mapping's own text says which. */
  mappingLabel?: (index: number) => string;
  /** Network faults already checked (e.g. from flags), set before the configs'. */
  faults?: readonly FaultSpec[];
  /** Fault configs as JSON texts: network or HTTP faults, any spelling, in order. */
  configs?: readonly string[];
  /** How an error names config #index: `--http-fault #2`, `faults[1]`. */
  configLabel?: (index: number) => string;
  /** Keep the faults in a registry so they can be injected and cleared live; each change is reported here. */
  registry?: boolean | ((event: RegistryEvent) => void);
  /** Serve the admin API (and GET /metrics) on the registry, which it implies; the bind was checked by the door. */
  admin?: { host: string; port: number; token: string; log?: (line: string) => void };
}

export interface AssembledProxy {
  readonly proxy: RunningProxy;
  /** The faults it started with: the given ones and the configs', network and HTTP. */
  readonly faults: SplitFaults;
  readonly registry: FaultRegistry | undefined;
  readonly admin: AdminServer | undefined;
  /** Closes the admin API, drops the registry's expiry timers and stops the proxy. */
  stop(): Promise<void>;
}

export interface SplitFaults {
  network: FaultSpec[];
  http: HttpFaultSpec[];
}

/**
 * Parses fault configs, refuses one whose `target` names none of `mappings` (`boundPort` resolves a
 * port-0 mapping once bound) and splits them by kind.
 */
export function faultConfigs(
  texts: readonly string[],
  mappings: readonly Mapping[],
  label: (index: number) => string,
  boundPort?: (index: number) => number | undefined,
): SplitFaults {
  const configs = texts.map((text, index) => parseFaultJson(text, label(index)));
  checkFaultTargets(configs, mappings, label, boundPort);
  return {
    network: configs.flatMap((config) => (config.kind === 'network' ? [config.spec] : [])),
    http: configs.flatMap((config) => (config.kind === 'http' ? [config.spec] : [])),
  };
}

/** Mapping texts parsed, an error naming its mapping by `label` when given. */
export function parseMappings(mappings: readonly (string | Mapping)[], label?: (index: number) => string): Mapping[] {
  return mappings.map((mapping, index) => {
    if (typeof mapping !== 'string') return mapping;
    try {
      return parseMapping(mapping);
    } catch (error) {
      throw error instanceof InputError && label ? new InputError(`${label(index)}: ${error.message}`) : error;
    }
  });
}

export async function assembleProxy(options: AssemblyOptions): Promise<AssembledProxy> {
  const {
    mappings: given,
    mappingLabel,
    faults,
    configs,
    configLabel,
    registry: keep,
    admin,
    ...proxyOptions
  } = options;
  const mappings = parseMappings(given, mappingLabel);
  const fromConfigs = faultConfigs(configs ?? [], mappings, configLabel ?? ((index) => `faults[${index}]`));
  const started: SplitFaults = { network: [...(faults ?? []), ...fromConfigs.network], http: fromConfigs.http };
  const proxy = await startProxy({
    ...proxyOptions,
    mappings,
    faults: started.network,
    httpFaults: started.http,
    // HTTP faults and the admin API act on requests: the proxy reads them.
    http: proxyOptions.http === true || started.http.length > 0 || admin !== undefined,
  });
  let registry: FaultRegistry | undefined;
  let adminServer: AdminServer | undefined;
  try {
    if (keep || admin) registry = new FaultRegistry(proxy, started, typeof keep === 'function' ? keep : undefined);
    if (admin) adminServer = await serveAdmin(proxy, registry!, admin);
  } catch (error) {
    registry?.dispose();
    await proxy.stop();
    throw error;
  }
  return {
    proxy,
    faults: started,
    registry,
    admin: adminServer,
    async stop() {
      await adminServer?.close();
      registry?.dispose();
      await proxy.stop();
    },
  };
}

/** The admin API on `registry`, its GET /metrics reading the proxy's counters at each scrape. */
async function serveAdmin(
  proxy: RunningProxy,
  registry: FaultRegistry,
  admin: NonNullable<AssemblyOptions['admin']>,
): Promise<AdminServer> {
  // Loaded only when an admin API is asked for.
  const [{ startAdmin }, { Registry }, { registerProxyMetrics }] = await Promise.all([
    import('./admin.js'),
    import('prom-client'),
    import('../../metrics/index.js'),
  ]);
  const metrics = new Registry();
  registerProxyMetrics(metrics, () => [{ proxy: 'proxy', counters: proxy.counters() }]);
  return startAdmin({ ...admin, registry, metrics });
}

/** One connection event as a log line, the same for every door (`faultline proxy`'s stderr, a held proxy's status). */
export function describeEvent(event: ProxyEvent): string {
  const prefix = `${new Date().toISOString()} #${event.connectionId} ${event.client} → ${event.mapping}`;
  switch (event.type) {
    case 'open':
      return `${prefix} open`;
    case 'connect_failed':
      return `${prefix} target unreachable: ${event.error}`;
    case 'close':
      return (
        `${prefix} closed after ${(event.durationMs / 1000).toFixed(3)} ` +
        `s, ${event.bytesUpstream} B up, ${event.bytesDownstream} B down${event.error ? ` (${event.error})` : ''}` +
        (event.neverDialled ? ' (the remote was never dialled: held by a blackhole until the client left)' : '')
      );
  }
}
