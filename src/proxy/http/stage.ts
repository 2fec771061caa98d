/**
 * The HTTP-aware stage of a mapping: it reads HTTP/1.1 on the client side, runs each
 * exchange through the mapping's HTTP faults, and forwards what is left through the proxy's TCP
 * path (so TLS origination and the network faults apply to the upstream leg as on any mapping).
 *
 *   client ══▶ sniff ─┬─ HTTP/1.1 ─▶ node:http server ─▶ faults ─▶ request bytes ─▶ TCP path ─▶ target
 *                     ├─ Redis (RESP) ─▶ a session: faults per command ──────────▶ TCP path ─▶ target
 *                     └─ anything else (TLS, a database, HTTP/2) ─▶ faults per message ─▶ TCP path
 *
 * Each client connection gets its own upstream connection (upstream.ts), opened on its first
 * forwarded request: a fault that answers by itself never touches the upstream. Requests are
 * parsed by node:http on the client's socket and written to the TCP path as bytes (no node:http
 * client, no in-memory socket); responses are framed by response-parser.ts and written through
 * node:http's ServerResponse, so keep-alive, chunked bodies and content-length stay right after
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
import { ResponseTally } from './response-tally.js';
import { classify, flat, pairs, requestHeaders, responseHeaders, sendWhole } from './framing.js';
import type { ResponseHead } from './response-parser.js';
import { HttpUpstream, requestHead } from './upstream.js';

/** A client that has said nothing after this long is passed through as TCP (server-speaks-first protocols). */
export const SNIFF_TIMEOUT_MS = 1000;
/** Bodies a fault must read whole are read up to this size; a larger one goes through unchanged. */
export const MAX_BUFFERED_BODY = 16 * 1024 * 1024;

export interface HttpStageOptions {
  mappings: readonly Mapping[];
  seed: number | string;
  /** The bound port of each mapping (known once listening). */
  ports(): readonly number[];
  /** Opens mapping `index`'s TCP path with a protocol session's `sink` as its client side. */
  openUpstream(index: number, client: net.Socket, sink: ClientEndSink): ClientEnd | undefined;
  /** `client` forwarded a request (or command) onto its TCP path: the network faults there count it. */
  forwarded?(client: net.Socket, unit: 'httpExchanges' | 'respCommands'): void;
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
  upstream: HttpUpstream;
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
    this.mappingCounters = options.mappings.map(() => ({
      httpConnections: 0,
      httpExchanges: 0,
      respConnections: 0,
      respCommands: 0,
    }));
    this.seen = options.mappings.map(() => new Set());
    this.faults = new RequestFaultList({
      mappings: options.mappings,
      seed: options.seed,
      ports: options.ports,
      kindsOf: (index) => this.kindsOf(index),
    });
    // Timeouts off: the proxy must not cut what the client and the upstream allow (a `timeout`
    // fault hangs on purpose), and an idle keep-alive connection lives as long as the client wants.
    this.server = http.createServer(
      { requestTimeout: 0, keepAliveTimeout: 0, headersTimeout: 0 } as http.ServerOptions,
      (req, res) => this.onRequest(req, res),
    );
    this.server.keepAliveTimeout = 0;
    this.server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) =>
      this.tunnel(req, socket, head),
    );
    this.server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) =>
      this.tunnel(req, socket, head),
    );
    this.server.on('clientError', (_error, socket: Duplex) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      socket.destroy();
    });
  }

  /** Replaces the fault list (validated first; nothing changes on error). Applies from the next request. */
  setFaults(specs: unknown): void {
    this.faults.set(specs);
  }

  /** Puts one fault at the end of the list (only it is checked; nothing changes on error). */
  addFault(spec: unknown): void {
    this.faults.add(spec);
  }

  /** Takes the faults named `names` off the list; false when none was on it. */
  removeFaults(names: Iterable<string>): boolean {
    return this.faults.remove(names);
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
    if (this.options.mappings[index]!.protocol === 'tcp') {
      // Declared opaque (tcp://): no sniffing, so a server-speaks-first protocol (MySQL, SMTP) is
      // not held waiting for the client to speak.
      this.seen[index]!.add('tcp');
      this.serveSession(index, socket, 'tcp');
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
      while ((chunk = socket.read() as Buffer | null) !== null)
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const declared = this.options.mappings[index]!.protocol;
      const verdict = classify(buffered, declared === 'tcp' ? undefined : declared);
      if (verdict !== 'more') decide(verdict);
    };
    const onClose = (): void => {
      decided = true;
      clearTimeout(timer);
      this.pending.delete(socket);
      socket.destroy();
    };
    // After a stall of the event loop the timer can fire before the bytes that arrived meanwhile are
    // read (timers run before I/O polling): let one poll pass before calling a client silent.
    const timer = setTimeout(
      () => setImmediate(() => decide(this.options.mappings[index]!.protocol === 'resp' ? 'resp' : 'tcp')),
      SNIFF_TIMEOUT_MS,
    );
    socket.on('readable', onReadable);
    socket.once('close', onClose);
    socket.once('error', onClose);
  }

  /** Closes every client connection and timer; the TCP path closes the upstream legs. */
  async close(): Promise<void> {
    this.closing = true;
    await this.dropConnections();
  }

  /** Closes the client connections open now (a proxy taken down), taking new ones afterwards. */
  async dropConnections(): Promise<void> {
    const closed: Array<Promise<void>> = [];
    for (const socket of [...this.pending, ...this.clients.keys(), ...this.sessions]) {
      if (!socket.destroyed) closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
      socket.destroy();
    }
    for (const client of this.clients.values()) this.release(client);
    await Promise.all(closed);
  }

  private serveHttp(index: number, socket: net.Socket): void {
    // One upstream connection per client connection, through the TCP path.
    const upstream = new HttpUpstream((sink) => this.options.openUpstream(index, socket, sink));
    const client: ClientConnection = { socket, index, upstream, timers: new Set(), closed: false };
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
    new RespSession({
      ...common,
      countCommand: () => this.mappingCounters[index]!.respCommands++,
      forwarded: () => this.options.forwarded?.(socket, 'respCommands'),
    }).start();
  }

  private release(client: ClientConnection): void {
    client.closed = true;
    for (const timer of client.timers) clearTimeout(timer);
    client.timers.clear();
    client.upstream.close();
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
    const path = (req.url ?? '/').split('?')[0]!;
    this.handle(client, req, res, this.faults.draw(client.index, 'http', req.method ?? 'GET', path), []);
  }

  /**
   * Runs the exchange through the faults drawn for it, in order, then forwards what is left. Synchronous
   * until a fault delays (then it goes on after the wait): an exchange no fault touches costs no promise.
   */
  private handle(
    client: ClientConnection,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    draws: Iterator<RequestFaultEntry>,
    afterResponse: RequestFaultEntry[],
  ): void {
    try {
      for (let drawn = draws.next(); !drawn.done; drawn = draws.next()) {
        const entry = drawn.value;
        const action = entry.behaviour.request();
        switch (action.kind) {
          case 'delay':
            this.wait(client, action.ms)
              .then(() => {
                if (!client.closed) this.handle(client, req, res, draws, afterResponse);
                else new ResponseTally(afterResponse).rest(); // the client left: drawn, changed nothing
              })
              .catch(() => res.destroy());
            return;
          case 'answer':
            new ResponseTally(afterResponse).rest(); // response faults drawn before: the exchange ends without them
            sendWhole(res, req, {
              status: action.status,
              statusMessage: '',
              headers: action.headers,
              body: action.body,
            });
            return;
          case 'hang':
            new ResponseTally(afterResponse).rest();
            if (action.ms !== undefined) void this.wait(client, action.ms).then(() => client.socket.destroy());
            return;
          case 'reset':
            new ResponseTally(afterResponse).rest();
            client.socket.resetAndDestroy();
            return;
          case 'after_response':
            // Counted when the exchange settles (ResponseTally), not at this draw: taken off at once, in the same
            // turn as the draw counted it, so no reader sees it counted and then uncounted.
            entry.counters.applications--;
            afterResponse.push(entry);
            break;
        }
      }
      this.forward(client, req, res, afterResponse);
    } catch {
      res.destroy();
    }
  }

  private forward(
    client: ClientConnection,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    after: RequestFaultEntry[],
  ): void {
    const mapping = this.options.mappings[client.index]!;
    const headers = requestHeaders(
      req,
      mapping,
      after.some((entry) => entry.behaviour.readsBody),
    );
    const forwardedAt = performance.now();
    // A time-based cut (mcp-chaos-monkey's afterMs) closes that long after forwarding, also when
    // the upstream has not answered by then; an answer that came first is cut in transform().
    const cutMs =
      after.length === 0
        ? undefined
        : after
            .map((entry) => (entry.spec.type === 'connection_drop' ? entry.spec.after_ms : undefined))
            .find((ms) => ms !== undefined);
    const tally = new ResponseTally(after);
    const cutBy = after.find((entry) => entry.spec.type === 'connection_drop' && entry.spec.after_ms !== undefined);
    const clearCut = cutMs === undefined ? () => {} : this.cutAfter(client, cutMs, () => tally.applied(cutBy!));
    const framing =
      headers['transfer-encoding'] === 'chunked' ? 'chunked' : headers['content-length'] !== undefined ? 'raw' : 'none';
    let answer: Answer | undefined;
    res.on('drain', () => client.upstream.drained());
    client.upstream.request(
      req.method ?? 'GET',
      requestHead(req.method ?? 'GET', req.url ?? '/', headers),
      req,
      framing,
      {
        head: (head) => {
          clearCut();
          answer = { head, chunks: [], size: 0 };
          if (after.length === 0)
            res.writeHead(head.status, head.statusMessage, responseHeaders(head.rawHeaders, true));
        },
        body: (chunk) => {
          if (after.length === 0 || answer!.size > MAX_BUFFERED_BODY) return res.write(chunk);
          answer!.chunks.push(chunk);
          answer!.size += chunk.length;
          return answer!.size > MAX_BUFFERED_BODY ? this.oversized(res, answer!, tally) : true;
        },
        end: () => {
          if (after.length === 0 || answer!.size > MAX_BUFFERED_BODY) res.end();
          else
            this.transform(client, req, res, answer!, tally, forwardedAt).catch(() => {
              tally.rest();
              res.destroy();
            });
        },
        fail: () => {
          clearCut();
          // The upstream failed (or the client left): the response faults did not act on this exchange.
          tally.rest();
          // Once the head came, the client must see the cut, not a made-up 502.
          if (answer || res.headersSent || client.closed) return void res.destroy();
          sendWhole(res, req, {
            status: 502,
            statusMessage: 'Bad Gateway',
            headers: [
              ['content-type', 'text/plain; charset=utf-8'],
              ['connection', 'close'],
            ],
            body: Buffer.from(
              `faultline: the upstream ${mapping.remoteHost}:${mapping.remotePort} ` +
                `could not be reached or closed the connection\n`,
            ),
          });
        },
      },
    );
    this.options.forwarded?.(client.socket, 'httpExchanges');
  }

  /** Closes the client's connection `ms` from now (calling `cut` when it does); returns what cancels it. */
  private cutAfter(client: ClientConnection, ms: number, cut: () => void): () => void {
    const timer = setTimeout(() => {
      client.timers.delete(timer);
      if (!client.closed) cut();
      client.socket.destroy();
    }, ms);
    client.timers.add(timer);
    return () => {
      clearTimeout(timer);
      client.timers.delete(timer);
    };
  }

  /** Too large to rewrite: what was read, then the rest, unchanged; the faults did not act on this exchange. */
  private oversized(res: http.ServerResponse, answer: Answer, tally: ResponseTally<RequestFaultEntry>): boolean {
    tally.oversized();
    res.writeHead(answer.head.status, answer.head.statusMessage, responseHeaders(answer.head.rawHeaders, true));
    let flowing = true;
    for (const chunk of answer.chunks) flowing = res.write(chunk);
    answer.chunks = [];
    return flowing;
  }

  /** The upstream's whole body in hand: runs the response faults in order, sends or cuts. */
  private async transform(
    client: ClientConnection,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    answer: Answer,
    tally: ResponseTally<RequestFaultEntry>,
    forwardedAt: number,
  ): Promise<void> {
    if (client.closed) return tally.rest();
    let response: BufferedResponse = {
      status: answer.head.status,
      statusMessage: answer.head.statusMessage,
      headers: pairs(responseHeaders(answer.head.rawHeaders, false)),
      body: Buffer.concat(answer.chunks, answer.size),
    };
    for (const entry of tally.entries) {
      const action = entry.behaviour.response!(response);
      if (action.kind === 'replace') {
        // The same status and body (schema_mismatch on a body without its fields, error answering what the
        // upstream did): the fault met this exchange and changed nothing the client reads.
        if (sameAnswer(action.response, response)) tally.unchanged(entry);
        else tally.applied(entry);
        response = action.response;
        continue;
      }
      if (action.kind === 'cut_after_ms') {
        const left = action.ms - (performance.now() - forwardedAt);
        if (left > 0) await this.wait(client, left);
        if (!client.closed) tally.applied(entry);
        tally.rest();
        client.socket.destroy();
        return;
      }
      // cut: the head announces the whole body; exactly afterBytes of it follow, then the close.
      // A cut at or past the body's end would cut nothing: the exchange goes on as it was (the
      // connection kept, the faults after this one applied) and counts unchanged, not applied.
      if (action.afterBytes >= response.body.length) {
        tally.unchanged(entry);
        continue;
      }
      tally.applied(entry);
      tally.rest();
      const body = response.body.subarray(0, action.afterBytes);
      const headers: Array<[string, string]> = [...response.headers, ['content-length', String(response.body.length)]];
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
    if (!client) return void socket.destroy();
    const mapping = this.options.mappings[client.index]!;
    const upstream = this.options.openUpstream(client.index, socket, {
      write: (data) => socket.write(data),
      end: () => socket.end(),
      closed: () => socket.destroy(),
    });
    if (!upstream) return void socket.destroy();
    upstream.push(requestHead(req.method ?? 'GET', req.url ?? '/', requestHeaders(req, mapping, false, true)));
    if (head.length > 0) upstream.push(head);
    socket.on('data', (data: Buffer) => {
      if (!upstream.push(data)) socket.pause();
    });
    upstream.on('flowing', () => socket.resume());
    socket.on('drain', () => upstream.drained());
    socket.on('end', () => upstream.pushEnd());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    socket.resume();
  }
}

/** Whether a response fault's answer is the one it was given, as the client reads it: status and body. */
function sameAnswer(next: BufferedResponse, given: BufferedResponse): boolean {
  return next === given || (next.status === given.status && next.body.equals(given.body));
}

/** An upstream response being read whole for the response faults. */
interface Answer {
  head: ResponseHead;
  chunks: Buffer[];
  size: number;
}
