/**
 * startProxy: one TCP listener per mapping; each accepted client gets a connection to the mapping's
 * remote (TLS when the mapping says so) and two links, upstream (client → target) and downstream
 * (target → client), each carrying the stages of the faults that apply to it.
 *
 *   client ══▶ listener ──upstream link: [faults on requests]──▶ target
 *   client ◀══ listener ◀─downstream link: [faults on responses]── target
 *
 * The client socket stays paused until the target connection is up. An unreachable target (or a
 * failed TLS handshake) closes that client connection and is counted; the proxy keeps running.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { ToolInputError } from '../errors.js';
import { linksOf, type Fault, type FaultCounters, type LinkDirection } from './faults/fault.js';
import { createFault, validateFaults, type FaultSpec, type ResolvedFault } from './faults/index.js';
import { Link, type AttachedStage, type ConnectionFlow } from './link.js';
import { parseMapping, targetNamesMapping, unknownTargetError, type Mapping } from './mapping.js';
import type { HttpFaultCounters } from './http/fault.js';
import { pipePair } from './http/pipe.js';
import type { HttpFaultSpec } from './http/spec.js';
import { HttpStage } from './http/stage.js';
import { pruneRetired } from './retired.js';
import { checkMappings, targetLookup, type TargetPolicy } from '../target-policy.js';

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
}

interface EventBase {
  /** Index of the mapping in ProxyOptions.mappings, and its text. */
  mappingIndex: number;
  mapping: string;
  connectionId: number;
  /** The client's address as host:port. */
  client: string;
}

export type ProxyEvent =
  | (EventBase & { type: 'open' })
  | (EventBase & { type: 'connect_failed'; error: string })
  | (EventBase & { type: 'close'; bytesUpstream: number; bytesDownstream: number; durationMs: number; error?: string });

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
  /** Connections whose target could not be reached (refused, DNS, TLS handshake). */
  connectFailures: number;
  /** Bytes read from clients. */
  bytesUpstream: number;
  /** Bytes read from targets. */
  bytesDownstream: number;
  /** Bytes read but not yet written, now (held, delayed or paced). */
  bytesQueued: number;
  /** HTTP mappings only: client connections that spoke HTTP/1.1 (each opens its own upstream connection, counted in `connections`). */
  httpConnections?: number;
  /** HTTP mappings only: requests received. */
  httpExchanges?: number;
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
  /** Whether the proxy parses HTTP (ProxyOptions.http). */
  readonly http: boolean;
  counters(): ProxyCounters;
  /** Closes the listeners and every connection; resolves when every socket is closed. */
  stop(): Promise<void>;
}

interface FaultEntry {
  spec: ResolvedFault;
  key: string;
  fault: Fault;
  /** The mapping it is limited to (a port or #name), or every mapping. */
  target: string | undefined;
}

interface Connection {
  id: number;
  mappingIndex: number;
  client: net.Socket;
  target: net.Socket;
  clientAddress: string;
  openedAt: number;
  links?: Record<LinkDirection, Link>;
  /** Faults already counted as attached to this connection. */
  countedFaults: Set<Fault>;
  bytesUpstream: number;
  bytesDownstream: number;
  error?: string;
  openSockets: number;
}

const clock = (): number => performance.now();

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const mappings = options.mappings.map((m) => (typeof m === 'string' ? parseMapping(m) : m));
  if (mappings.length === 0) throw new ToolInputError('at least one proxy mapping is needed');
  // A fault's target names one mapping: two mappings with the same #name would make it ambiguous.
  mappings.forEach((mapping, index) => {
    const first = mappings.findIndex((other) => other.name !== undefined && other.name === mapping.name);
    if (first !== -1 && first < index) {
      const argument = options.policy?.argument ?? 'proxies';
      throw new ToolInputError(`${argument}[${index}] (${JSON.stringify(mapping.text)}): the name #${mapping.name} is already ${argument}[${first}]'s; give each mapping its own name`);
    }
  });
  if (options.policy) {
    checkMappings(mappings, options.policy, options.policy.argument ?? 'proxies');
    options = { ...options, lookup: options.lookup ?? targetLookup(options.policy) };
  }
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const mappingCounters: MappingCounters[] = mappings.map((m) => ({
    mapping: m.text,
    port: 0,
    connections: 0,
    activeConnections: 0,
    connectFailures: 0,
    bytesUpstream: 0,
    bytesDownstream: 0,
    bytesQueued: 0,
  }));
  const faultsByName = new Map<string, FaultEntry>();
  let activeFaults: FaultEntry[] = [];
  const connections = new Set<Connection>();
  let nextConnectionId = 1;
  let stopping = false;
  let allClosed: (() => void) | undefined;

  const emit = (event: ProxyEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // An observer's bug must not take connections down.
    }
  };

  const setFaults = (specs: readonly FaultSpec[]): void => {
    // `target` is the proxy's business, not the fault's: split it off before validation.
    const targets = (Array.isArray(specs) ? specs : []).map((spec, index, all) => {
      const target = (spec as { target?: unknown } | null)?.target;
      const where = all.length > 1 ? `faults[${index}]: ` : '';
      if (target !== undefined && (typeof target !== 'string' || target.trim() === '')) throw new ToolInputError(`${where}a fault's target must be a mapping's local port or #name, as a string`);
      if (target !== undefined && !mappings.some((_, index) => mappingNamed(target, index))) {
        throw unknownTargetError(target, mappings, (index) => mappingCounters[index]!.port, where);
      }
      return target as string | undefined;
    });
    const resolved = validateFaults(Array.isArray(specs) ? specs.map((spec) => withoutTarget(spec)) : specs);
    const next: FaultEntry[] = [];
    for (const [index, spec] of resolved.entries()) {
      const target = targets[index];
      const key = JSON.stringify([spec, target]);
      const previous = faultsByName.get(spec.name);
      if (previous && previous.key === key) {
        next.push(previous);
        continue;
      }
      const fault = createFault(spec, seed, clock);
      if (previous && previous.spec.type === spec.type) Object.assign(fault.counters, previous.fault.counters);
      const entry = { spec, key, fault, target };
      faultsByName.set(spec.name, entry);
      next.push(entry);
    }
    activeFaults = next;
    for (const entry of faultsByName.values()) entry.fault.counters.active = next.includes(entry);
    pruneRetired(faultsByName, (entry) => entry.fault.counters.active);
    for (const connection of connections) attachFaults(connection);
  };

  const attachFaults = (connection: Connection): void => {
    if (!connection.links) return;
    for (const link of Object.values(connection.links)) {
      const current = link.attached;
      const stages: AttachedStage[] = [];
      for (const { spec, fault, target } of activeFaults) {
        if (!linksOf(spec.side, spec.direction).includes(link.direction)) continue;
        if (target !== undefined && !mappingNamed(target, connection.mappingIndex)) continue;
        const existing = current.find((s) => s.fault === fault);
        stages.push(existing ?? { fault, stage: fault.attach({ connectionId: connection.id, direction: link.direction }) });
        if (!connection.countedFaults.has(fault)) {
          connection.countedFaults.add(fault);
          fault.counters.connections++;
        }
      }
      link.setStages(stages);
    }
  };

  const tlsOptions = (mapping: Mapping): tls.ConnectionOptions => {
    // allowHalfOpen is honoured by tls.connect (it builds the socket with it) but missing from its types.
    const connectOptions: tls.ConnectionOptions & { allowHalfOpen: boolean } = {
      host: mapping.remoteHost,
      port: mapping.remotePort,
      servername: mapping.servername,
      rejectUnauthorized: options.tls?.rejectUnauthorized ?? true,
      ca: options.tls?.ca,
      allowHalfOpen: true,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    };
    return connectOptions;
  };

  const onClient = (mappingIndex: number, client: net.Socket): void => {
    const mapping = mappings[mappingIndex]!;
    const counters = mappingCounters[mappingIndex]!;
    const clientAddress = formatAddress(client.remoteAddress, client.remotePort);
    if (stopping) {
      client.destroy();
      return;
    }
    counters.connections++;
    counters.activeConnections++;
    const target = mapping.tls ? tls.connect(tlsOptions(mapping)) : net.connect({
          host: mapping.remoteHost,
          port: mapping.remotePort,
          allowHalfOpen: true,
          noDelay: true,
          ...(options.lookup ? { lookup: options.lookup } : {}),
        });
    const connection: Connection = {
      id: nextConnectionId++,
      mappingIndex,
      client,
      target,
      clientAddress,
      openedAt: clock(),
      countedFaults: new Set(),
      bytesUpstream: 0,
      bytesDownstream: 0,
      openSockets: 2,
    };
    connections.add(connection);
    const base = { mappingIndex, mapping: mapping.text, connectionId: connection.id, client: clientAddress };

    const onConnected = (): void => {
      target.setNoDelay(true);
      const flow: ConnectionFlow = {};
      const upstream = new Link('upstream', client, target, flow, (n) => {
        connection.bytesUpstream += n;
        counters.bytesUpstream += n;
      }, clock);
      const downstream = new Link('downstream', target, client, flow, (n) => {
        connection.bytesDownstream += n;
        counters.bytesDownstream += n;
      }, clock);
      connection.links = { upstream, downstream };
      attachFaults(connection);
      upstream.start();
      downstream.start();
      emit({ type: 'open', ...base });
    };
    target.once(mapping.tls ? 'secureConnect' : 'connect', onConnected);

    const destroyBoth = (error: Error): void => {
      connection.error ??= describeError(error);
      client.destroy();
      target.destroy();
    };
    client.on('error', destroyBoth);
    target.on('error', (error: Error) => {
      if (!connection.links) {
        // The target never came up (refused, DNS, TLS handshake): count it and close the client.
        counters.connectFailures++;
        emit({ type: 'connect_failed', ...base, error: describeError(error) });
      }
      destroyBoth(error);
    });

    const onSocketClose = (socket: net.Socket, other: net.Socket) => (hadError: boolean) => {
      const links = connection.links;
      const from = links && (socket === client ? links.upstream : links.downstream);
      const to = links && (socket === client ? links.downstream : links.upstream);
      // A clean close means this socket's end was read and ours was sent; the other direction may
      // still be delivering (e.g. a delayed response), so only an abrupt close ends the other side.
      if (hadError || !from?.sourceDone || !to?.finished) other.destroy();
      if (--connection.openSockets > 0) return;
      links?.upstream.close();
      links?.downstream.close();
      connections.delete(connection);
      counters.activeConnections--;
      emit({
        type: 'close',
        ...base,
        bytesUpstream: connection.bytesUpstream,
        bytesDownstream: connection.bytesDownstream,
        durationMs: clock() - connection.openedAt,
        ...(connection.error ? { error: connection.error } : {}),
      });
      if (connections.size === 0) allClosed?.();
    };
    client.once('close', onSocketClose(client, target));
    target.once('close', onSocketClose(target, client));
  };

  const mappingNamed = (target: string, index: number): boolean => targetNamesMapping(target, mappings[index]!, mappingCounters[index]!.port);

  // HTTP mappings: a stage in front of the TCP path; its upstream legs enter the TCP path through
  // an in-memory pipe, as if they were clients.
  const stage = options.http
    ? new HttpStage({
        mappings,
        seed,
        ports: () => mappingCounters.map((c) => c.port),
        connectUpstream: (index, client) => {
          const [ours, theirs] = pipePair();
          theirs.remoteAddress = client.remoteAddress;
          theirs.remotePort = client.remotePort;
          onClient(index, theirs as unknown as net.Socket);
          return ours;
        },
        passThrough: (index, socket) => onClient(index, socket),
      })
    : undefined;
  if (!stage && options.httpFaults?.length) throw new ToolInputError('HTTP faults need an HTTP proxy (http: true)');

  const servers: net.Server[] = [];
  const closeServers = (): Promise<void> =>
    Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(() => undefined);

  try {
    setFaults(options.faults ?? []);
    stage?.setFaults(options.httpFaults ?? []);
    for (const [index, mapping] of mappings.entries()) {
      const server = net.createServer({ pauseOnConnect: true, allowHalfOpen: true, noDelay: true }, (socket) =>
        stage ? stage.accept(index, socket) : onClient(index, socket),
      );
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) => {
          const reason = error.code === 'EADDRINUSE' ? 'the address is already in use' : error.message;
          // Named as the caller wrote the mapping (proxies[1], --proxy[0]) when the caller said how.
          const where = options.policy?.argument ? `${options.policy.argument}[${index}]: ` : '';
          reject(new ToolInputError(`${where}cannot listen on ${formatAddress(mapping.listenHost, mapping.listenPort)} for proxy mapping ${JSON.stringify(mapping.text)}: ${reason}${error.code ? ` (${error.code})` : ''}`));
        });
        server.listen({ host: mapping.listenHost, port: mapping.listenPort }, () => resolve());
      });
      server.on('error', () => {
        // After listening, a server error (e.g. EMFILE on accept) only costs that accept.
      });
      servers.push(server);
      mappingCounters[index]!.port = (server.address() as net.AddressInfo).port;
    }
  } catch (error) {
    await closeServers();
    throw error;
  }

  return {
    mappings,
    ports: mappingCounters.map((c) => c.port),
    seed,
    setFaults,
    http: stage !== undefined,
    setHttpFaults(faults: readonly HttpFaultSpec[]): void {
      if (!stage) throw new ToolInputError('this proxy does not parse HTTP: start it with http enabled to use HTTP faults');
      stage.setFaults(faults);
    },
    counters(): ProxyCounters {
      const now = clock();
      const snapshot: MappingCounters[] = mappingCounters.map((c, index) => ({ ...c, bytesQueued: 0, ...(stage ? stage.mappingCountersOf(index) : {}) }));
      for (const connection of connections) {
        const links = connection.links;
        if (links) snapshot[connection.mappingIndex]!.bytesQueued += links.upstream.queuedBytes + links.downstream.queuedBytes;
      }
      return {
        mappings: snapshot,
        faults: [...faultsByName.values()].map((entry) => entry.fault.snapshot(now)),
        ...(stage ? { httpFaults: stage.counters() } : {}),
      };
    },
    async stop(): Promise<void> {
      stopping = true;
      const stageClosed = stage?.close();
      const closed = connections.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allClosed = resolve));
      const listenersClosed = closeServers();
      for (const connection of connections) {
        connection.client.destroy();
        connection.target.destroy();
      }
      await Promise.all([closed, listenersClosed, stageClosed]);
    },
  };
}

function withoutTarget(spec: FaultSpec): FaultSpec {
  if (typeof spec !== 'object' || spec === null || !('target' in spec)) return spec;
  const { target: _target, ...rest } = spec as FaultSpec & { target?: unknown };
  return rest as FaultSpec;
}

function describeError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

function formatAddress(host: string | undefined, port: number | undefined): string {
  const h = host ?? '?';
  return `${h.includes(':') ? `[${h}]` : h}:${port ?? '?'}`;
}
