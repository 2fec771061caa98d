/**
 * The streamable-HTTP proxy: one upstream MCP endpoint behind a loopback listener.
 *
 *   POST  the client's messages through the plane, the reply (JSON or SSE) back through it
 *         (http-post.ts); answers made here (injected errors) join the reply; notifications-only
 *         posts get 202.
 *   GET   the server's SSE stream, passed through event by event (list_changed joins it when the
 *         POST reply was plain JSON).       DELETE  forwarded; the session's state is dropped.
 *   GET /healthz, GET /metrics (the SLIs as JSON) are answered here.
 *
 * Forwarded: Mcp-Session-Id, Authorization, MCP-Protocol-Version, Last-Event-ID, Accept,
 * Content-Type (and back: Content-Type, Mcp-Session-Id, WWW-Authenticate). Sessions are keyed by
 * Mcp-Session-Id and bounded. Everything read from the upstream is bounded per message and, across
 * the replies held at once, by one byte budget (http-upstream.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { LookupFunction } from 'node:net';
import { listenHttp, type Listening } from '../jsonrpc/listen.js';
import { readSseStream, toSseResponse } from './http-sse.js';
import { ByteBudget, Upstream } from './http-upstream.js';
import { PostExchange, type ProxyContext, type SessionLookup, type SessionState } from './http-post.js';
import { copyHead, isSse, jsonError, pipeTo, sendJson } from './http-reply.js';
import type { ToolPlane } from './session.js';
import { refuseInProduction } from '../production.js';

export interface HttpProxyOptions {
  /** Start even where the environment says production (--allow-production; src/production.ts). */
  allowProduction?: boolean;
  plane: ToolPlane;
  upstream: string;
  host?: string;
  port?: number;
  /** Largest request body accepted (bytes, default 16 MiB). */
  maxBody?: number;
  maxSessions?: number;
  /** Bytes of upstream replies held at once, across all requests (default: 8 of the largest messages). */
  maxHeldBytes?: number;
  /**
   * Resolves the upstream's name at every connect: the target policy's lookup (targetLookup), which
   * refuses a name that resolves somewhere not allowed by then (DNS rebinding). Required, so no
   * caller can open a path past the policy.
   */
  lookup: LookupFunction;
}

export interface HttpProxy {
  url: string;
  port: number;
  close(): Promise<void>;
}

const REQUEST_HEADERS = [
  'content-type',
  'accept',
  'mcp-session-id',
  'authorization',
  'mcp-protocol-version',
  'last-event-id',
];

export async function startHttpProxy(options: HttpProxyOptions): Promise<HttpProxy> {
  // The production guard where tool-call faults are injected, before anything listens.
  refuseInProduction('start a tool-call fault proxy', options.allowProduction === true);
  const proxy = new HttpToolProxy(options);
  return proxy.listen(options.host ?? '127.0.0.1', options.port ?? 0);
}

/** The client sessions, keyed by Mcp-Session-Id ('' before one is known); the oldest is dropped past the cap. */
class SessionTable implements SessionLookup {
  private readonly states = new Map<string, SessionState>();

  constructor(
    private readonly plane: ToolPlane,
    private readonly max: number,
  ) {}

  get(id: string | undefined): SessionState {
    const key = id ?? '';
    let state = this.states.get(key);
    if (!state) {
      if (this.states.size >= this.max) {
        const [oldKey, old] = this.states.entries().next().value as [string, SessionState];
        old.session.close();
        this.states.delete(oldKey);
      }
      state = { session: this.plane.session(), streams: new Set() };
      this.states.set(key, state);
    }
    return state;
  }

  adopt(id: string): SessionState {
    // The initialize reply named the session: later requests carry that id.
    return this.get(id);
  }

  drop(id: string): void {
    this.states.get(id)?.session.close();
    this.states.delete(id);
  }

  closeAll(): void {
    for (const state of this.states.values()) {
      state.session.close();
      for (const stream of state.streams) stream.end();
    }
    this.states.clear();
  }
}

class HttpToolProxy {
  private readonly ctx: ProxyContext;
  private readonly sessions: SessionTable;
  private readonly server: Server;
  private readonly inflight = new Set<AbortController>();

  constructor(options: HttpProxyOptions) {
    const { plane } = options;
    this.sessions = new SessionTable(plane, options.maxSessions ?? 1000);
    this.ctx = {
      plane,
      upstream: new Upstream(options.upstream, plane, options.lookup),
      sessions: this.sessions,
      budget: new ByteBudget(options.maxHeldBytes ?? 8 * plane.limits.maxChars),
      maxBody: options.maxBody ?? 16 * 1024 * 1024,
    };
    this.server = createServer((req, res) => this.serve(req, res));
  }

  async listen(host: string, port: number): Promise<HttpProxy> {
    const listening = await listenHttp(this.server, { host, port });
    return { url: `${listening.url}/mcp`, port: listening.port, close: () => this.close(listening) };
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    this.route(req, res).catch((error: unknown) => {
      const { plane, upstream } = this.ctx;
      const upstreamDown = upstream.failed(error);
      if (upstreamDown) plane.upstreamUnreachable((error as Error).message);
      else plane.internalErrors += 1;
      if (!res.headersSent)
        jsonError(
          res,
          502,
          `faultline toolcall: ${upstreamDown ? `the upstream ${upstream.url.href} could not be reached: ` : ''}${(error as Error).message}`,
        );
      else res.end();
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (req.method === 'GET' && path === '/metrics') return sendJson(res, 200, this.ctx.plane.slis());
    const signal = this.abortOnClose(res);
    const headers = forwardHeaders(req);
    const sessionId = header(req, 'mcp-session-id');
    if (req.method === 'POST') return new PostExchange(this.ctx, res, signal, headers, sessionId).run(req);
    if (req.method === 'GET') return this.relayStream(res, signal, headers, sessionId);
    const reply = await this.ctx.upstream.send(req.method ?? 'GET', headers, undefined, signal);
    if (req.method === 'DELETE' && sessionId !== undefined) this.sessions.drop(sessionId);
    copyHead(reply, res);
    return pipeTo(reply, res);
  }

  /** An abort signal for the upstream request, fired when the client's connection closes (or the proxy does). */
  private abortOnClose(res: ServerResponse): AbortSignal {
    const abort = new AbortController();
    this.inflight.add(abort);
    res.on('close', () => {
      abort.abort();
      this.inflight.delete(abort);
    });
    return abort.signal;
  }

  /** GET: the server's own SSE stream, event by event through the session (a server→client request or notification). */
  private async relayStream(
    res: ServerResponse,
    signal: AbortSignal,
    headers: Record<string, string>,
    sessionId: string | undefined,
  ): Promise<void> {
    const reply = await this.ctx.upstream.send('GET', headers, undefined, signal);
    const state = this.sessions.get(sessionId);
    copyHead(reply, res);
    if (!isSse(reply)) return pipeTo(reply, res);
    state.streams.add(res);
    res.on('close', () => state.streams.delete(res));
    // An event past the bounds ends the stream (counted); the client reconnects.
    await readSseStream(reply, state.session, this.ctx.budget, toSseResponse(res, state.session));
    res.end();
  }

  private async close(listening: Listening): Promise<void> {
    for (const abort of this.inflight) abort.abort();
    this.sessions.closeAll();
    this.ctx.upstream.destroy();
    await listening.close();
  }
}

function forwardHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REQUEST_HEADERS) {
    const value = header(req, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
