/**
 * The TCP path of one accepted client: a connection to the mapping's remote (TLS when the mapping
 * says so) and two links, upstream (client → target) and downstream (target → client), each
 * carrying the stages of the network faults that apply to it.
 *
 *   client ──upstream link: [stages]──▶ target
 *   client ◀─downstream link: [stages]── target
 *
 * The client stays paused until the target is up. While a fault holds new connections (a
 * blackhole: a dropped SYN) the target is not dialled: the client is read a little (HELD_READ_BYTES)
 * so that its leaving is seen; one that leaves is closed and what it sent dropped, the remote never
 * having seen it. When the fault ends, a client still there gets its target, which gets what the
 * client sent first. An unreachable target (or a failed TLS handshake) closes the client and is
 * counted as a connect failure. A clean close of one socket ends the other only once its own
 * direction has delivered everything (a delayed response still arrives); an abrupt one ends both at once.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Fault, LinkControl, LinkDirection } from './faults/fault.js';
import {
  HELD_READ_BYTES,
  Link,
  type AttachedStage,
  type ConnectionFlow,
  type LinkSink,
  type LinkSource,
} from './link.js';
import { formatAddress, type Mapping } from './mapping.js';

/** The client side of a TCP path: the accepted socket, or a ClientEnd a protocol stage drives. */
export type ClientSide = LinkSource &
  LinkSink & {
    on(event: 'error', listener: (error: Error) => void): unknown;
    once(event: 'close', listener: (hadError: boolean) => void): unknown;
    destroy(): unknown;
    readonly remoteAddress?: string | undefined;
    readonly remotePort?: number | undefined;
  };

/** Per-mapping counters the TCP path keeps (see MappingCounters in proxy.ts). */
export interface TcpMappingCounters {
  connections: number;
  activeConnections: number;
  connectFailures: number;
  bytesUpstream: number;
  bytesDownstream: number;
  /** Bytes written to targets (client → target) and to clients (target → client). */
  bytesSentUpstream?: number;
  bytesSentDownstream?: number;
}

/** What happened to a connection, for the proxy's onEvent. */
export type ConnectionEvent =
  | { type: 'open' }
  | { type: 'connect_failed'; error: string }
  | {
      type: 'close';
      bytesUpstream: number;
      bytesDownstream: number;
      durationMs: number;
      error?: string;
      /** The remote was never dialled: a fault held the connection until the client left. */
      neverDialled?: true;
    };

/** What a connection needs from its proxy. */
export interface ConnectionContext {
  clock(): number;
  /** How remote names are resolved (the target policy's lookup), if not the system's. */
  lookup: net.LookupFunction | undefined;
  tls: { rejectUnauthorized: boolean; ca?: string | Buffer | Array<string | Buffer> | undefined };
  /** Gives the links their fault stages (again on every fault change). */
  attachFaults(connection: ProxiedConnection): void;
  /** What keeps a connection not yet dialled from dialling (NetworkFaultList.connectHolds); empty: dial. */
  connectHolds(connection: ProxiedConnection, current: readonly AttachedStage[]): AttachedStage[];
  /** Reports an event of `connection` (with the mapping and client it concerns). */
  emit(connection: ProxiedConnection, event: ConnectionEvent): void;
  /** The connection closed for good (both sockets). */
  closed(connection: ProxiedConnection): void;
}

export class ProxiedConnection {
  /** The connection to the remote, once dialled. */
  target: net.Socket | undefined;
  readonly openedAt: number;
  links: Record<LinkDirection, Link> | undefined;
  /** Faults already counted as attached to this connection. */
  readonly countedFaults = new Set<Fault>();
  /** Per fault with a chance below 1: whether this connection drew it (drawn once, at first attach). */
  readonly faultDraws = new Map<Fault, boolean>();
  bytesUpstream = 0;
  bytesDownstream = 0;
  private error: string | undefined;
  private openSockets = 1;
  /** Faults keeping the remote from being dialled, and what the client sent meanwhile. */
  private dialHolds: AttachedStage[] = [];
  private early: Buffer[] = [];
  private earlyBytes = 0;
  private readingEarly = false;

  constructor(
    private readonly context: ConnectionContext,
    readonly id: number,
    readonly mappingIndex: number,
    readonly mapping: Mapping,
    private readonly counters: TcpMappingCounters,
    readonly client: ClientSide,
    /** The client's address as host:port. */
    readonly clientAddress: string,
  ) {
    this.openedAt = context.clock();
    counters.connections++;
    counters.activeConnections++;
    client.on('error', this.destroyBoth);
    client.once('close', this.onSocketClose(client));
    this.faultsChanged();
  }

  /** Bytes read but not yet written, both ways (before the dial: what the client sent meanwhile). */
  get queuedBytes(): number {
    return this.links ? this.links.upstream.queuedBytes + this.links.downstream.queuedBytes : this.earlyBytes;
  }

  /** The faults changed (or the connection is new): dial once nothing holds the dial, else re-attach the links. */
  faultsChanged(): void {
    if (this.links) return this.context.attachFaults(this);
    if (this.target || this.client.destroyed) return;
    this.dialHolds = this.context.connectHolds(this, this.dialHolds);
    if (this.dialHolds.length > 0) return this.readEarly();
    this.stopReadingEarly();
    this.dial();
  }

  destroy(): void {
    this.client.destroy();
    this.target?.destroy();
  }

  /** Closes both sockets with a TCP RST (Toxiproxy's reset_peer), where the socket is a plain TCP one. */
  reset(): void {
    for (const socket of [this.client, this.target]) {
      if (!socket) continue;
      const tcp = socket as Partial<net.Socket>;
      if (
        socket instanceof net.Socket &&
        !(socket instanceof tls.TLSSocket) &&
        !socket.destroyed &&
        tcp.resetAndDestroy
      ) {
        try {
          socket.resetAndDestroy();
          continue;
        } catch {
          // not connected yet: a plain destroy below
        }
      }
      socket.destroy();
    }
  }

  /** What the fault stages on `direction`'s link may do to this connection. */
  control(direction: LinkDirection): LinkControl {
    return {
      finish: () => this.links?.[direction].finish(),
      close: () => this.destroy(),
      reset: () => this.reset(),
    };
  }

  private dial(): void {
    const target = this.connectTarget();
    this.target = target;
    this.openSockets++;
    target.once(this.mapping.tls ? 'secureConnect' : 'connect', this.onConnected);
    target.on('error', (error: Error) => {
      if (!this.links) {
        // The target never came up (refused, DNS, TLS handshake): count it and close the client.
        this.counters.connectFailures++;
        this.context.emit(this, { type: 'connect_failed', error: describeError(error) });
      }
      this.destroyBoth(error);
    });
    target.once('close', this.onSocketClose(target));
  }

  /** Reads the client while the dial is held, a little (then back-pressure), to see it leave. */
  private readEarly(): void {
    if (this.readingEarly) return;
    this.readingEarly = true;
    this.client.on('data', this.onEarlyData);
    this.client.on('end', this.onEarlyEnd);
    if (this.earlyBytes < HELD_READ_BYTES) this.client.resume();
  }

  private stopReadingEarly(): void {
    if (!this.readingEarly) return;
    this.readingEarly = false;
    this.client.off('data', this.onEarlyData);
    this.client.off('end', this.onEarlyEnd);
    this.client.pause();
  }

  private readonly onEarlyData = (data: Buffer): void => {
    this.early.push(data);
    this.earlyBytes += data.length;
    if (this.earlyBytes >= HELD_READ_BYTES) this.client.pause();
  };

  /** The client left before its remote was dialled: what it sent is dropped, the remote never sees it. */
  private readonly onEarlyEnd = (): void => {
    this.stopReadingEarly();
    this.early = [];
    this.earlyBytes = 0;
    this.client.destroy();
  };

  private connectTarget(): net.Socket {
    const { mapping, context } = this;
    const lookup = context.lookup ? { lookup: context.lookup } : {};
    if (!mapping.tls)
      return net.connect({
        host: mapping.remoteHost,
        port: mapping.remotePort,
        allowHalfOpen: true,
        noDelay: true,
        ...lookup,
      });
    // allowHalfOpen is honoured by tls.connect (it builds the socket with it) but missing from its types.
    const options: tls.ConnectionOptions & { allowHalfOpen: boolean } = {
      host: mapping.remoteHost,
      port: mapping.remotePort,
      servername: mapping.servername,
      rejectUnauthorized: context.tls.rejectUnauthorized,
      ca: context.tls.ca,
      allowHalfOpen: true,
      ...lookup,
    };
    return tls.connect(options);
  }

  private readonly onConnected = (): void => {
    const { client, counters, context } = this;
    const target = this.target!;
    target.setNoDelay(true);
    const flow: ConnectionFlow = {};
    const upstream = new Link(
      'upstream',
      client,
      target,
      flow,
      (n) => {
        this.bytesUpstream += n;
        counters.bytesUpstream += n;
      },
      context.clock,
    );
    const downstream = new Link(
      'downstream',
      target,
      client,
      flow,
      (n) => {
        this.bytesDownstream += n;
        counters.bytesDownstream += n;
      },
      context.clock,
    );
    this.links = { upstream, downstream };
    // A link cut by finish() (limit_data) ended its destination; once that end is flushed, the
    // source it read from closes too, and with it the connection (Toxiproxy closes both).
    upstream.countWritten = (n) => {
      counters.bytesSentUpstream = (counters.bytesSentUpstream ?? 0) + n;
    };
    downstream.countWritten = (n) => {
      counters.bytesSentDownstream = (counters.bytesSentDownstream ?? 0) + n;
    };
    upstream.onFinished = () => this.afterEnd(target, client);
    downstream.onFinished = () => this.afterEnd(client, target);
    // The client left while its requests were held: they are dropped, and the remote sees the
    // connection close when the hold ends (nothing crosses while it is on).
    upstream.onLeftWhileHeld = () => this.destroy();
    context.attachFaults(this);
    const early = this.early;
    this.early = [];
    this.earlyBytes = 0;
    upstream.start(early);
    downstream.start();
    context.emit(this, { type: 'open' });
  };

  private afterEnd(ended: ClientSide, source: ClientSide): void {
    const socket = ended as Partial<net.Socket>;
    if (socket.writableFinished === false && typeof socket.once === 'function')
      socket.once('finish', () => source.destroy());
    else source.destroy();
  }

  private readonly destroyBoth = (error: Error): void => {
    this.error ??= describeError(error);
    this.destroy();
  };

  private onSocketClose(socket: ClientSide): (hadError: boolean) => void {
    return (hadError) => {
      const other = socket === this.client ? this.target : this.client;
      const links = this.links;
      const from = links && (socket === this.client ? links.upstream : links.downstream);
      const to = links && (socket === this.client ? links.downstream : links.upstream);
      // A clean close means this socket's end was read and ours was sent; the other direction may
      // still be delivering (e.g. a delayed response), so only an abrupt close ends the other side.
      if (hadError || !from?.sourceDone || !to?.finished) other?.destroy();
      if (--this.openSockets > 0) return;
      links?.upstream.close();
      links?.downstream.close();
      this.stopReadingEarly();
      const neverDialled = this.target === undefined;
      const now = this.context.clock();
      for (const hold of this.dialHolds) hold.stage.detach(now);
      this.dialHolds = [];
      this.counters.activeConnections--;
      this.context.emit(this, {
        type: 'close',
        bytesUpstream: this.bytesUpstream,
        bytesDownstream: this.bytesDownstream,
        durationMs: this.context.clock() - this.openedAt,
        ...(this.error ? { error: this.error } : {}),
        ...(neverDialled ? { neverDialled: true as const } : {}),
      });
      this.context.closed(this);
    };
  }
}

export function describeError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

/**
 * The live connections of a proxy: opens one per accepted client (refusing them once stopping),
 * and on stop destroys them all and waits until every socket has closed.
 */
export class ConnectionTable implements Iterable<ProxiedConnection> {
  private readonly open = new Set<ProxiedConnection>();
  private nextId = 1;
  private stopping = false;
  private allClosed: (() => void) | undefined;
  private readonly context: ConnectionContext;

  constructor(context: Omit<ConnectionContext, 'closed'>) {
    this.context = {
      ...context,
      closed: (connection) => {
        this.open.delete(connection);
        if (this.open.size === 0) this.allClosed?.();
      },
    };
  }

  [Symbol.iterator](): Iterator<ProxiedConnection> {
    return this.open[Symbol.iterator]();
  }

  /** The TCP path for a client of mapping `mappingIndex` (destroyed at once when stopping). */
  accept(
    mappingIndex: number,
    mapping: Mapping,
    counters: TcpMappingCounters,
    client: ClientSide,
  ): ProxiedConnection | undefined {
    const clientAddress = formatAddress(client.remoteAddress, client.remotePort);
    if (this.stopping) {
      client.destroy();
      return undefined;
    }
    const connection = new ProxiedConnection(
      this.context,
      this.nextId++,
      mappingIndex,
      mapping,
      counters,
      client,
      clientAddress,
    );
    this.open.add(connection);
    return connection;
  }

  /** Destroys every connection; resolves once all have closed. */
  stop(): Promise<void> {
    this.stopping = true;
    const closed =
      this.open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.allClosed = resolve));
    for (const connection of this.open) connection.destroy();
    return closed;
  }
}
