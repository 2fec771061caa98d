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
import { targetNamesMapping, unknownTargetError, type Mapping } from '../mapping.js';
import { createRandom, type Random } from '../random.js';
import { pruneRetired } from '../retired.js';
import { requestMatcher, type BufferedResponse, type HttpFaultBehaviour, type HttpFaultCounters } from './fault.js';
import { classify, flat, pairs, requestHeaders, responseHeaders, sendWhole } from './framing.js';
import { httpBehaviour, validateHttpFaults, type ResolvedHttpFault } from './spec.js';

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
  /** Hands a connection that is not HTTP/1.1 to the TCP path. */
  passThrough(index: number, socket: net.Socket): void;
}

export interface HttpMappingCounters {
  /** Client connections that spoke HTTP/1.1. */
  httpConnections: number;
  /** HTTP requests received. */
  httpExchanges: number;
}

interface FaultEntry {
  spec: ResolvedHttpFault;
  key: string;
  behaviour: HttpFaultBehaviour;
  counters: HttpFaultCounters;
  matches: (method: string, path: string) => boolean;
  randoms: Map<number, Random>;
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
  private readonly byName = new Map<string, FaultEntry>();
  private active: FaultEntry[] = [];
  private readonly mappingCounters: HttpMappingCounters[];
  private closing = false;

  constructor(private readonly options: HttpStageOptions) {
    this.mappingCounters = options.mappings.map(() => ({ httpConnections: 0, httpExchanges: 0 }));
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
    const resolved = validateHttpFaults(specs);
    resolved.forEach((spec, index) => this.checkTarget(spec.target, resolved.length > 1 ? `faults[${index}]: ` : ''));
    const next: FaultEntry[] = [];
    for (const spec of resolved) {
      const key = JSON.stringify(spec);
      const previous = this.byName.get(spec.name);
      if (previous && previous.key === key) {
        next.push(previous);
        continue;
      }
      const counters: HttpFaultCounters = { name: spec.name, type: spec.type, target: spec.target ?? null, active: true, requests: 0, applications: 0, passes: 0, oversized: 0 };
      if (previous && previous.spec.type === spec.type) Object.assign(counters, previous.counters, { target: spec.target ?? null });
      const entry: FaultEntry = { spec, key, behaviour: httpBehaviour(spec), counters, matches: requestMatcher(spec), randoms: new Map() };
      this.byName.set(spec.name, entry);
      next.push(entry);
    }
    this.active = next;
    for (const entry of this.byName.values()) entry.counters.active = next.includes(entry);
    pruneRetired(this.byName, (entry) => entry.counters.active);
  }

  counters(): HttpFaultCounters[] {
    return [...this.byName.values()].map((entry) => ({ ...entry.counters }));
  }

  mappingCountersOf(index: number): HttpMappingCounters {
    return { ...this.mappingCounters[index]! };
  }

  /** Refuses a target that names no mapping (a typo would otherwise make the fault silently idle). */
  checkTarget(target: string | undefined, where = ''): void {
    if (target === undefined || this.options.mappings.some((_, index) => this.targets(target, index))) return;
    throw unknownTargetError(target, this.options.mappings, (index) => this.options.ports()[index], where);
  }

  /** Whether a fault's `target` names mapping `index` (see targetNamesMapping). */
  targets(target: string | undefined, index: number): boolean {
    return target === undefined || targetNamesMapping(target, this.options.mappings[index]!, this.options.ports()[index]);
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
    const decide = (isHttp: boolean): void => {
      if (decided) return;
      decided = true;
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('close', onClose);
      socket.off('error', onClose);
      this.pending.delete(socket);
      if (socket.destroyed) return;
      if (buffered.length > 0) socket.unshift(buffered);
      if (isHttp) this.serveHttp(index, socket);
      else this.options.passThrough(index, socket);
    };
    const onReadable = (): void => {
      let chunk: Buffer | null;
      while ((chunk = socket.read() as Buffer | null) !== null) buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const verdict = classify(buffered);
      if (verdict !== 'more') decide(verdict === 'http');
    };
    const onClose = (): void => {
      decided = true;
      clearTimeout(timer);
      this.pending.delete(socket);
      socket.destroy();
    };
    const timer = setTimeout(() => decide(false), SNIFF_TIMEOUT_MS);
    socket.on('readable', onReadable);
    socket.once('close', onClose);
    socket.once('error', onClose);
  }

  /** Closes every client connection and timer; the TCP path closes the upstream legs. */
  async close(): Promise<void> {
    this.closing = true;
    const closed: Array<Promise<void>> = [];
    for (const socket of [...this.pending, ...this.clients.keys()]) {
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
    const afterResponse: FaultEntry[] = [];
    // A snapshot: a list replaced mid-exchange applies from the next request.
    for (const entry of this.active) {
      if (!this.targets(entry.spec.target, client.index) || !entry.matches(method, path)) continue;
      entry.counters.requests++;
      if (!this.randomOf(entry, client.index).chance(entry.spec.probability)) {
        entry.counters.passes++;
        continue;
      }
      entry.counters.applications++;
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

  private randomOf(entry: FaultEntry, index: number): Random {
    let random = entry.randoms.get(index);
    if (!random) {
      random = createRandom(this.options.seed, `http/${entry.spec.name}/${index}`);
      entry.randoms.set(index, random);
    }
    return random;
  }

  private forward(client: ClientConnection, req: http.IncomingMessage, res: http.ServerResponse, after: FaultEntry[]): void {
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
  private async transform(client: ClientConnection, req: http.IncomingMessage, res: http.ServerResponse, answer: http.IncomingMessage, after: FaultEntry[], forwardedAt: number): Promise<void> {
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
