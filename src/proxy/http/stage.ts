/**
 * The HTTP-aware stage of a mapping: it reads HTTP/1.1 on the client side, runs each
 * exchange through the mapping's HTTP faults, and forwards what is left through the proxy's TCP
 * path (so TLS origination and the network faults apply to the upstream leg as on any mapping).
 *
 *   client ══▶ sniff ─┬─ HTTP/1.1 ─▶ node:http server ─▶ faults ─▶ client-side agent ─▶ pipe ─▶ TCP path ─▶ target
 *                     └─ anything else (TLS, a database, HTTP/2) ─────────────────────────────▶ TCP path ─▶ target
 *
 * Each client connection gets its own upstream connection (an agent with one socket), opened on
 * its first forwarded request: a fault that answers by itself never touches the upstream. Framing
 * is node:http's on both sides, so keep-alive, chunked bodies and content-length stay right after
 * any change (a changed body is sent with its new content-length).
 */
import http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type { ClientEnd, ClientEndSink } from '../client-end.js';
import type { Mapping } from '../mapping.js';
import { RequestFaultList, type RequestFaultEntry, type TrafficKind } from '../requests/fault-list.js';
import { TcpSession } from '../requests/tcp-session.js';
import { RespSession } from '../resp/session.js';
import type { BufferedResponse, HttpFaultCounters } from './fault.js';
import { classify, flat, pairs, requestHeaders, responseHeaders, sendWhole } from './framing.js';

/** A client that has said nothing after this long is passed through as TCP (server-speaks-first protocols). */
export const SNIFF_TIMEOUT_MS = 1000;
/** Bodies a fault must read whole are read up to this size; a larger one goes through unchanged. */
export const MAX_BUFFERED_BODY = 16 * 1024 * 1024;

export interface HttpStageOptions {
  mappings: readonly Mapping[];
  seed: number | string;
  /** The bound port of each mapping (known once listening). */
  ports(): readonly number[];
  /** Opens an upstream connection for mapping `index` through the TCP path; `client` names the client in events. */
  connectUpstream(index: number, client: net.Socket): Duplex;
  /** Opens mapping `index`'s TCP path with a protocol session's `sink` as its client side. */
  openUpstream(index: number, client: net.Socket, sink: ClientEndSink): ClientEnd | undefined;
  clock(): number;
}

/** Remote ports whose protocol is well known, for a mapping whose scheme does not say. */
const WELL_KNOWN_PORTS: ReadonlyMap<number, TrafficKind> = new Map([
  [6379, 'resp'],
  [6380, 'resp'],
  [26379, 'resp'],
]);

export interface HttpMappingCounters {
  /** Client connections that spoke HTTP/1.1. */
  httpConnections: number;
  /** HTTP requests received. */
  httpExchanges: number;
  /** Client connections that spoke Redis (RESP). */
  respConnections: number;
  /** Redis commands received. */
  respCommands: number;
}

interface ClientConnection {
  socket: net.Socket;
  index: number;
  agent: http.Agent;
  timers: Set<NodeJS.Timeout>;
  closed: boolean;
}

export class HttpStage {
  private readonly server: http.Server;
  private readonly clients = new Map<net.Socket, ClientConnection>();
  private readonly pending = new Set<net.Socket>();
  /** Connections served by a RESP or TCP session. */
  private readonly sessions = new Set<net.Socket>();
  private readonly faults: RequestFaultList;
  /** What each mapping's connections were seen to speak. */
  private readonly seen: Array<Set<TrafficKind>>;
  private readonly mappingCounters: HttpMappingCounters[];
  private closing = false;

  constructor(private readonly options: HttpStageOptions) {
    this.mappingCounters = options.mappings.map(() => ({ httpConnections: 0, httpExchanges: 0, respConnections: 0, respCommands: 0 }));
    this.seen = options.mappings.map(() => new Set());
    this.faults = new RequestFaultList({ mappings: options.mappings, seed: options.seed, ports: options.ports, kindsOf: (index) => this.kindsOf(index) });
    // Timeouts off: the proxy must not cut what the client and the upstream allow (a `timeout`
    // fault hangs on purpose), and an idle keep-alive connection lives as long as the client wants.
    this.server = http.createServer({ requestTimeout: 0, keepAliveTimeout: 0, headersTimeout: 0 } as http.ServerOptions, (req, res) => this.onRequest(req, res));
    this.server.keepAliveTimeout = 0;
    this.server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => this.tunnel(req, socket, head));
    this.server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => this.tunnel(req, socket, head));
    this.server.on('clientError', (_error, socket: Duplex) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      socket.destroy();
    });
  }

  /** Replaces the fault list (validated first; nothing changes on error). Applies from the next request. */
  setFaults(specs: unknown): void {
    this.faults.set(specs);
  }

  counters(): HttpFaultCounters[] {
    return this.faults.counters();
  }

  mappingCountersOf(index: number): HttpMappingCounters {
    return { ...this.mappingCounters[index]! };
  }

  /**
   * What mapping `index` carries, as far as known: what its scheme declares; else what its
   * connections spoke so far; else what its remote port is known for; else nothing (unknown).
   */
  kindsOf(index: number): ReadonlySet<TrafficKind> {
    const mapping = this.options.mappings[index]!;
    if (mapping.protocol) return new Set([mapping.protocol]);
    if (this.seen[index]!.size > 0) return this.seen[index]!;
    const known = WELL_KNOWN_PORTS.get(mapping.remotePort);
    return new Set(known ? [known] : []);
  }

  /** A new client connection (paused): HTTP/1.1 goes to the HTTP server, anything else to the TCP path. */
  accept(index: number, socket: net.Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.pending.add(socket);
    let buffered: Buffer = Buffer.alloc(0);
    let decided = false;
    const decide = (kind: TrafficKind): void => {
      if (decided) return;
      decided = true;
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('close', onClose);
      socket.off('error', onClose);
      this.pending.delete(socket);
      if (socket.destroyed) return;
      if (buffered.length > 0) socket.unshift(buffered);
      this.seen[index]!.add(kind);
      if (kind === 'http') this.serveHttp(index, socket);
      else this.serveSession(index, socket, kind);
    };
    const onReadable = (): void => {
      let chunk: Buffer | null;
      while ((chunk = socket.read() as Buffer | null) !== null) buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const verdict = classify(buffered, this.options.mappings[index]!.protocol);
      if (verdict !== 'more') decide(verdict);
    };
    const onClose = (): void => {
      decided = true;
      clearTimeout(timer);
      this.pending.delete(socket);
      socket.destroy();
    };
    const timer = setTimeout(() => decide(this.options.mappings[index]!.protocol === 'resp' ? 'resp' : 'tcp'), SNIFF_TIMEOUT_MS);
    socket.on('readable', onReadable);
    socket.once('close', onClose);
    socket.once('error', onClose);
  }

  /** Closes every client connection and timer; the TCP path closes the upstream legs. */
  async close(): Promise<void> {
    this.closing = true;
    const closed: Array<Promise<void>> = [];
    for (const socket of [...this.pending, ...this.clients.keys(), ...this.sessions]) {
      if (!socket.destroyed) closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
      socket.destroy();
    }
    for (const client of this.clients.values()) this.release(client);
    await Promise.all(closed);
  }

  private serveHttp(index: number, socket: net.Socket): void {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // One upstream connection per client connection, through the TCP path.
    (agent as unknown as { createConnection: () => Duplex }).createConnection = () => this.options.connectUpstream(index, socket);
    const client: ClientConnection = { socket, index, agent, timers: new Set(), closed: false };
    this.clients.set(socket, client);
    this.mappingCounters[index]!.httpConnections++;
    socket.once('close', () => {
      this.clients.delete(socket);
      this.release(client);
    });
    this.server.emit('connection', socket);
    socket.resume();
  }

  /** A connection that speaks RESP or something else: a session applies the request faults to it. */
  private serveSession(index: number, socket: net.Socket, kind: 'resp' | 'tcp'): void {
    this.sessions.add(socket);
    socket.once('close', () => this.sessions.delete(socket));
    const common = {
      socket,
      index,
      faults: this.faults,
      clock: this.options.clock,
      openUpstream: (sink: ClientEndSink) => this.options.openUpstream(index, socket, sink),
    };
    if (kind === 'tcp') return new TcpSession(common).start();
    this.mappingCounters[index]!.respConnections++;
    new RespSession({ ...common, countCommand: () => this.mappingCounters[index]!.respCommands++ }).start();
  }

  private release(client: ClientConnection): void {
    client.closed = true;
    for (const timer of client.timers) clearTimeout(timer);
    client.timers.clear();
    client.agent.destroy();
  }

  private wait(client: ClientConnection, ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (client.closed) return resolve();
      const timer = setTimeout(() => {
        client.timers.delete(timer);
        client.socket.off('close', done);
        resolve();
      }, ms);
      const done = (): void => {
        clearTimeout(timer);
        client.timers.delete(timer);
        resolve();
      };
      client.timers.add(timer);
      client.socket.once('close', done);
    });
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const client = this.clients.get(req.socket as net.Socket);
    if (!client) {
      res.destroy();
      return;
    }
    this.mappingCounters[client.index]!.httpExchanges++;
    this.handle(client, req, res).catch(() => res.destroy());
  }

  private async handle(client: ClientConnection, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0]!;
    const afterResponse: RequestFaultEntry[] = [];
    for (const entry of this.faults.draw(client.index, 'http', method, path)) {
      const action = entry.behaviour.request();
      switch (action.kind) {
        case 'delay':
          await this.wait(client, action.ms);
          if (client.closed) return;
          break;
        case 'answer':
          sendWhole(res, req, { status: action.status, statusMessage: '', headers: action.headers, body: action.body });
          return;
        case 'hang':
          if (action.ms !== undefined) void this.wait(client, action.ms).then(() => client.socket.destroy());
          return;
        case 'reset':
          client.socket.resetAndDestroy();
          return;
        case 'after_response':
          afterResponse.push(entry);
          break;
      }
    }
    this.forward(client, req, res, afterResponse);
  }

  private forward(client: ClientConnection, req: http.IncomingMessage, res: http.ServerResponse, after: RequestFaultEntry[]): void {
    const mapping = this.options.mappings[client.index]!;
    const headers = requestHeaders(req, mapping, after.some((entry) => entry.behaviour.readsBody));
    const forwardedAt = performance.now();
    const upstream = http.request({ agent: client.agent, method: req.method, path: req.url, headers, setHost: false });
    const fail = (): void => {
      if (res.headersSent || client.closed) {
        res.destroy();
        return;
      }
      sendWhole(res, req, {
        status: 502,
        statusMessage: 'Bad Gateway',
        headers: [['content-type', 'text/plain; charset=utf-8'], ['connection', 'close']],
        body: Buffer.from(`faultline: the upstream ${mapping.remoteHost}:${mapping.remotePort} could not be reached or closed the connection\n`),
      });
    };
    upstream.on('error', fail);
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    // A time-based cut (mcp-chaos-monkey's afterMs) closes that long after forwarding, also when
    // the upstream has not answered by then; an answer that came first is cut in transform().
    const cutMs = after.map((entry) => (entry.spec.type === 'connection_drop' ? entry.spec.after_ms : undefined)).find((ms) => ms !== undefined);
    let cutTimer: NodeJS.Timeout | undefined;
    if (cutMs !== undefined) {
      cutTimer = setTimeout(() => {
        client.timers.delete(cutTimer!);
        client.socket.destroy();
      }, cutMs);
      client.timers.add(cutTimer);
    }
    req.pipe(upstream);
    upstream.on('response', (answer: http.IncomingMessage) => {
      if (cutTimer) {
        clearTimeout(cutTimer);
        client.timers.delete(cutTimer);
      }
      answer.on('error', () => res.destroy());
      if (after.length === 0) {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, responseHeaders(answer.rawHeaders, true));
        answer.pipe(res);
        return;
      }
      // The upstream may reset mid-body (or the client leave): never an unhandled rejection.
      this.transform(client, req, res, answer, after, forwardedAt).catch(() => res.destroy());
    });
  }

  /** Reads the upstream's body, runs the response faults in order, sends or cuts. */
  private async transform(client: ClientConnection, req: http.IncomingMessage, res: http.ServerResponse, answer: http.IncomingMessage, after: RequestFaultEntry[], forwardedAt: number): Promise<void> {
    const read = await readUpTo(answer, MAX_BUFFERED_BODY);
    if (!read.complete) {
      // Too large to rewrite: what was read, then the rest, unchanged. The faults did not act on
      // this exchange, so it leaves their applications for `oversized`.
      for (const entry of after) {
        entry.counters.applications--;
        entry.counters.oversized++;
      }
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, responseHeaders(answer.rawHeaders, true));
      for (const c of read.chunks) res.write(c);
      answer.pipe(res);
      return;
    }
    const chunks = read.chunks;
    const size = read.size;
    if (client.closed) return;
    let response: BufferedResponse = {
      status: answer.statusCode ?? 502,
      statusMessage: answer.statusMessage ?? '',
      headers: pairs(responseHeaders(answer.rawHeaders, false)),
      body: Buffer.concat(chunks, size),
    };
    for (const entry of after) {
      const action = entry.behaviour.response!(response);
      if (action.kind === 'replace') {
        response = action.response;
        continue;
      }
      if (action.kind === 'cut_after_ms') {
        const left = action.ms - (performance.now() - forwardedAt);
        if (left > 0) await this.wait(client, left);
        client.socket.destroy();
        return;
      }
      // cut: the head announces the whole body; exactly afterBytes of it follow, then the close.
      // A cut at or past the body's end delivers it whole, so the head says the connection closes
      // after it: a keep-alive client must not send its next request into the closing socket,
      // where it would fail without ever reaching the proxy (and the fault would seem to miss it).
      const whole = action.afterBytes >= response.body.length;
      const body = response.body.subarray(0, Math.min(action.afterBytes, response.body.length));
      const headers: Array<[string, string]> = [...response.headers, ['content-length', String(response.body.length)], ...(whole ? [['connection', 'close'] as [string, string]] : [])];
      res.writeHead(response.status, response.statusMessage || undefined, flat(headers));
      res.flushHeaders();
      const socket = client.socket;
      if (body.length === 0) socket.end(() => socket.destroy());
      else res.write(body, () => socket.end(() => socket.destroy()));
      return;
    }
    sendWhole(res, req, response);
  }

  /** Upgrade (WebSocket) and CONNECT requests: the head is replayed upstream, then bytes flow both ways untouched. */
  private tunnel(req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
    const client = this.clients.get(socket);
    if (!client) {
      socket.destroy();
      return;
    }
    const mapping = this.options.mappings[client.index]!;
    const headers = requestHeaders(req, mapping, false, true);
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    for (const [name, value] of Object.entries(headers)) for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
    const upstream = this.options.connectUpstream(client.index, socket);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    const destroy = (): void => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', destroy);
    upstream.on('error', destroy);
    socket.on('close', destroy);
    upstream.on('close', destroy);
    socket.pipe(upstream).pipe(socket);
  }
}

/**
 * Reads a body until it ends or passes `limit` bytes. Past the limit the stream is left paused
 * and intact (the caller pipes the rest); an async iterator would destroy it on an early exit.
 */
function readUpTo(stream: http.IncomingMessage, limit: number): Promise<{ chunks: Buffer[]; size: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        cleanup();
        stream.pause();
        resolve({ chunks, size, complete: false });
      }
    };
    const onEnd = (): void => {
      cleanup();
      resolve({ chunks, size, complete: true });
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onAborted = (): void => onError(new Error('the upstream closed mid-body'));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('aborted', onAborted);
  });
}
