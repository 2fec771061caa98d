/**
 * startProxy: the proxy's public face. It wires three parts together, as Toxiproxy splits proxy,
 * link and toxic:
 *
 *   listeners.ts   one TCP listener per mapping
 *   connection.ts  each accepted client's TCP path: the target connection and its two links
 *   fault-list.ts  the network faults set, and which stages each link carries
 *   http/          on an HTTP proxy, the stage in front of the TCP path that reads HTTP/1.1
 *
 *   client ══▶ listener ──upstream link: [faults on requests]──▶ target
 *   client ◀══ listener ◀─downstream link: [faults on responses]── target
 *
 * Connection-level failures (an unreachable target, a failed TLS handshake) never reject: they
 * are counted and reported through onEvent, and the proxy keeps running.
 */
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { InputError } from '../kernel/errors.js';
import { checkMappings, targetLookup, type TargetPolicy } from '../target-policy.js';
import { ClientEnd } from './client-end.js';
import { ConnectionTable, type ConnectionEvent, type ProxiedConnection } from './connection.js';
import { NetworkFaultList } from './fault-list.js';
import type { FaultCounters } from './faults/fault.js';
import type { FaultSpec } from './faults/index.js';
import type { HttpFaultCounters } from './http/fault.js';
import type { HttpFaultSpec } from './http/spec.js';
import { HttpStage } from './http/stage.js';
import { refuseInProduction } from '../production.js';
import { listen, type Listeners } from './listeners.js';
import { parseMapping, targetNamesMapping, unknownTargetError, type Mapping } from './mapping.js';

export interface ProxyTlsOptions {
  /** Verify the target's certificate (default true). */
  rejectUnauthorized?: boolean;
  /** Extra trusted CA certificates (PEM) for the target. */
  ca?: string | Buffer | Array<string | Buffer>;
}

export interface ProxyOptions {
  /** Mapping objects or mapping strings (parsed with parseMapping). */
  mappings: ReadonlyArray<Mapping | string>;
  /** Initial faults (default none). */
  faults?: readonly FaultSpec[];
  /** Seed for every random fault decision (default: drawn at start, see RunningProxy.seed). */
  seed?: number | string;
  /** How TLS towards targets is verified. */
  tls?: ProxyTlsOptions;
  /** Called once per connection event; must not throw (a throw is ignored). */
  onEvent?: (event: ProxyEvent) => void;
  /** How remote host names are resolved (e.g. one that refuses non-local addresses). */
  lookup?: net.LookupFunction;
  /**
   * Parse HTTP/1.1 on the client side of every mapping so HTTP faults can act (default false;
   * connections that do not speak HTTP/1.1 still pass through as TCP). See http/stage.ts.
   */
  http?: boolean;
  /** Initial HTTP faults (needs `http`). */
  httpFaults?: readonly HttpFaultSpec[];
  /**
   * The target policy (src/target-policy.ts): checked on the mappings before anything binds, and
   * on every connect (through `lookup`, which defaults to the policy's). `argument` names the
   * mappings in errors (default `proxies`).
   */
  policy?: TargetPolicy & { argument?: string };
  /**
   * Start even where the environment says production (src/production.ts): the person running
   * faultline said so (--allow-production), or the proxy never takes a fault (the warm-up's).
   */
  allowProduction?: boolean;
}

interface EventBase {
  /** Index of the mapping in ProxyOptions.mappings, and its text. */
  mappingIndex: number;
  mapping: string;
  connectionId: number;
  /** The client's address as host:port. */
  client: string;
}

/** A connection's event (connection.ts), with where it happened. */
export type ProxyEvent = EventBase & ConnectionEvent;

export interface MappingCounters {
  mapping: string;
  /** The bound port. */
  port: number;
  /**
   * Connections through the TCP path, each with its own connection to the target: on a plain
   * mapping every client connection accepted; on an HTTP mapping one per client connection that
   * forwarded a request (an HTTP fault that answers itself opens none; see httpConnections).
   */
  connections: number;
  /** Client connections open now. */
  activeConnections: number;
  /** Connections whose target could not be reached (refused, DNS, TLS handshake); one a blackhole kept from
   * dialling until its client left is in `connections` only. */
  connectFailures: number;
  /** Bytes read from clients. */
  bytesUpstream: number;
  /** Bytes read from targets. */
  bytesDownstream: number;
  /** Bytes written to targets (fewer than read when a fault cut or reset the stream). */
  bytesSentUpstream?: number;
  /** Bytes written to clients. */
  bytesSentDownstream?: number;
  /** Bytes read but not yet written, now (held, delayed or paced). */
  bytesQueued: number;
  /** HTTP mappings only: client connections that spoke HTTP/1.1 (each opens its own upstream connection, counted in
   * `connections`). */
  httpConnections?: number;
  /** HTTP mappings only: requests received. */
  httpExchanges?: number;
  /** Protocol-aware proxies only: client connections that spoke Redis (RESP). */
  respConnections?: number;
  /** Protocol-aware proxies only: Redis commands received. */
  respCommands?: number;
}

export interface ProxyCounters {
  mappings: MappingCounters[];
  /** The faults set, by name: the current list and the last MAX_RETIRED_FAULTS retired ones (`active` tells which). */
  faults: FaultCounters[];
  /** The HTTP faults set, the same way (HTTP proxies only). */
  httpFaults?: HttpFaultCounters[];
}

export interface RunningProxy {
  readonly mappings: readonly Mapping[];
  /** The bound port of each mapping, in order. */
  readonly ports: readonly number[];
  /** The seed in use (give it back to reproduce the same fault decisions). */
  readonly seed: number | string;
  /**
   * Replaces the fault list, on live connections too; throws (changing nothing) on an invalid spec.
   * A spec may carry `target` (a mapping's port or #name) to act on that mapping only.
   */
  setFaults(faults: readonly FaultSpec[]): void;
  /** Replaces the HTTP fault list (from the next request on); throws on an invalid spec or when `http` is off. */
  setHttpFaults(faults: readonly HttpFaultSpec[]): void;
  /**
   * Puts one fault at the end of the list, on live connections too; throws (changing nothing) on an invalid spec
   * or a name already on the list. Only this spec is validated, so the cost does not grow with the list.
   */
  addFault(fault: FaultSpec): void;
  /** Takes the faults named `names` off the list (their counters stay, retired); names not on it are ignored. */
  removeFaults(names: Iterable<string>): void;
  /** addFault for the HTTP fault list (from the next request on); throws when `http` is off. */
  addHttpFault(fault: HttpFaultSpec): void;
  /** removeFaults for the HTTP fault list. */
  removeHttpFaults(names: Iterable<string>): void;
  /** Whether the proxy parses HTTP (ProxyOptions.http). */
  readonly http: boolean;
  counters(): ProxyCounters;
  /** Whether the listeners are open (setEnabled). */
  readonly enabled: boolean;
  /**
   * false closes the listeners (new connections are refused) and every open connection; true
   * listens again on the same addresses and ports. Faults and counters live on.
   */
  setEnabled(enabled: boolean): Promise<void>;
  /** Closes the listeners and every connection; resolves when every socket is closed. */
  stop(): Promise<void>;
}

const clock = (): number => performance.now();

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  // The production guard where faults are injected: every fault a proxy takes goes through a start.
  refuseInProduction('start a fault proxy', options.allowProduction === true);
  const mappings = options.mappings.map((m) => (typeof m === 'string' ? parseMapping(m) : m));
  if (mappings.length === 0) throw new InputError('at least one proxy mapping is needed');
  checkDistinctNames(mappings, options.policy?.argument ?? 'proxies');
  if (options.policy) checkMappings(mappings, options.policy, options.policy.argument ?? 'proxies');
  const lookup = options.lookup ?? (options.policy ? targetLookup(options.policy) : undefined);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const mappingCounters = mappings.map(emptyMappingCounters);
  const mappingNamed = (target: string, index: number): boolean =>
    targetNamesMapping(target, mappings[index]!, mappingCounters[index]!.port);
  const faults = new NetworkFaultList({
    seed,
    clock,
    mappingCount: mappings.length,
    targets: mappingNamed,
    unknownTarget: (target, where) =>
      unknownTargetError(target, mappings, (index) => mappingCounters[index]!.port, where),
  });
  const connections = new ConnectionTable({
    clock,
    lookup,
    tls: { rejectUnauthorized: options.tls?.rejectUnauthorized ?? true, ca: options.tls?.ca },
    attachFaults: (connection) => faults.attach(connection),
    connectHolds: (connection, current) => faults.connectHolds(connection, current),
    emit(connection, event) {
      try {
        const { type, ...details } = event;
        options.onEvent?.({
          type,
          mappingIndex: connection.mappingIndex,
          mapping: connection.mapping.text,
          connectionId: connection.id,
          client: connection.clientAddress,
          ...details,
        } as ProxyEvent);
      } catch {
        // An observer's bug must not take connections down.
      }
    },
  });
  const onClient = (index: number, client: net.Socket): void =>
    void connections.accept(index, mappings[index]!, mappingCounters[index]!, client);

  // A connection a blackhole kept from dialling dials now if none holds it any more.
  const faultsChanged = (): void => {
    for (const connection of connections) connection.faultsChanged();
  };
  const setFaults = (specs: readonly FaultSpec[]): void => {
    faults.set(specs);
    faultsChanged();
  };

  // Protocol-aware mappings: a stage in front of the TCP path, which drives it through a ClientEnd
  // in place of the client's socket. Each client socket's current TCP path, for the requests it forwards.
  const pathOf = new WeakMap<net.Socket, ProxiedConnection>();
  const stage = options.http
    ? new HttpStage({
        mappings,
        seed,
        ports: () => mappingCounters.map((c) => c.port),
        openUpstream: (index, client, sink) => {
          const end = new ClientEnd(sink, client.remoteAddress, client.remotePort);
          const connection = connections.accept(index, mappings[index]!, mappingCounters[index]!, end);
          if (connection) pathOf.set(client, connection);
          return connection && end;
        },
        forwarded: (client, unit) => {
          const connection = pathOf.get(client);
          if (connection) faults.countRequest(connection, unit);
        },
        clock,
      })
    : undefined;
  if (!stage && options.httpFaults?.length) throw new InputError('HTTP faults need an HTTP proxy (http: true)');

  setFaults(options.faults ?? []);
  stage?.setFaults(options.httpFaults ?? []);
  const httpStage = (): HttpStage => {
    if (!stage) throw new InputError('this proxy does not parse HTTP: start it with http enabled to use HTTP faults');
    return stage;
  };
  const accept = (index: number, socket: net.Socket): void =>
    stage ? stage.accept(index, socket) : onClient(index, socket);
  let listeners: Listeners | undefined = await listen(mappings, accept, options.policy?.argument, (index, port) => {
    mappingCounters[index]!.port = port;
  });
  const ports = [...listeners.ports];
  let switching = Promise.resolve();

  const setEnabled = async (enabled: boolean): Promise<void> => {
    if (enabled === (listeners !== undefined)) return;
    if (!enabled) {
      const closing = listeners!;
      listeners = undefined;
      for (const connection of connections) connection.destroy();
      await Promise.all([closing.close(), stage?.dropConnections()]);
      return;
    }
    // The same ports as before: a client (or a Toxiproxy test) keeps the address it was given.
    const again = mappings.map((mapping, index) => ({ ...mapping, listenPort: ports[index]! }));
    listeners = await listen(again, accept, options.policy?.argument);
  };

  return {
    mappings,
    ports,
    seed,
    setFaults,
    http: stage !== undefined,
    setHttpFaults(faults: readonly HttpFaultSpec[]): void {
      httpStage().setFaults(faults);
    },
    addFault(fault: FaultSpec): void {
      faults.add(fault);
      faultsChanged();
    },
    removeFaults(names: Iterable<string>): void {
      if (faults.remove(names)) faultsChanged();
    },
    addHttpFault(fault: HttpFaultSpec): void {
      httpStage().addFault(fault);
    },
    removeHttpFaults(names: Iterable<string>): void {
      httpStage().removeFaults(names);
    },
    counters(): ProxyCounters {
      const snapshot: MappingCounters[] = mappingCounters.map((c, index) => ({
        ...c,
        bytesQueued: 0,
        ...(stage ? stage.mappingCountersOf(index) : {}),
      }));
      for (const connection of connections) snapshot[connection.mappingIndex]!.bytesQueued += connection.queuedBytes;
      return {
        mappings: snapshot,
        faults: faults.counters(clock()),
        ...(stage ? { httpFaults: stage.counters() } : {}),
      };
    },
    get enabled(): boolean {
      return listeners !== undefined;
    },
    setEnabled(enabled: boolean): Promise<void> {
      // One switch at a time, in the order asked.
      switching = switching.catch(() => {}).then(() => setEnabled(enabled));
      return switching;
    },
    async stop(): Promise<void> {
      await switching.catch(() => {});
      await Promise.all([stage?.close(), connections.stop(), listeners?.close()]);
      listeners = undefined;
    },
  };
}

/** A fault's target names one mapping: two mappings with the same #name would make it ambiguous. */
function checkDistinctNames(mappings: readonly Mapping[], argument: string): void {
  mappings.forEach((mapping, index) => {
    const first = mappings.findIndex((other) => other.name !== undefined && other.name === mapping.name);
    if (first !== -1 && first < index) {
      throw new InputError(
        `${argument}[${index}] (${JSON.stringify(mapping.text)}): the ` +
          `name #${mapping.name} is already ${argument}[${first}]'s; give ` +
          `each mapping its own name`,
      );
    }
  });
}

function emptyMappingCounters(mapping: Mapping): MappingCounters {
  return {
    mapping: mapping.text,
    port: 0,
    connections: 0,
    activeConnections: 0,
    connectFailures: 0,
    bytesUpstream: 0,
    bytesDownstream: 0,
    bytesSentUpstream: 0,
    bytesSentDownstream: 0,
    bytesQueued: 0,
  };
}
