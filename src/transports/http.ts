/**
 * Streamable HTTP transport (MCP 2025-03-26+), one session per client, on a node:http server.
 *
 * Every request passes three gates before the SDK sees it:
 * 1. the path is `/mcp` (404 otherwise);
 * 2. DNS-rebinding protection: the Host header names this server (a loopback name, or the address
 *    it was bound to, with its port), and an Origin header, when present, names a loopback host
 *    or that address with the same port (403 otherwise) — a web page on another origin cannot
 *    drive the tools;
 * 3. with a token configured, `Authorization: Bearer <token>` (401 otherwise, compared in
 *    constant time).
 *
 * Sessions end on DELETE, after SESSION_IDLE_MS without a request, or when a new client needs
 * the room. At most `maxSessions` (default MAX_SESSIONS) are open; when they are, an `initialize`
 * closes the least recently used *inactive* session (SDK clients do not send DELETE on close, so
 * without this a server fills up with abandoned sessions and locks everyone out), and when every
 * session is active it is answered 503 with Retry-After: one client can never evict another's
 * active session. A session is active while it has a request in flight, while it holds resources
 * (held proxies: then it is never closed for idleness either), and for SESSION_ACTIVE_MS after
 * its last request, unless its client has gone: the SDK client's close() sends no DELETE but
 * drops its GET stream, so a session whose stream closed with no request since is inactive at
 * once. An open GET stream alone is not activity, so held streams cannot lock new clients out for
 * longer than the window.
 * A request id already in flight in the session is refused (409, -32600).
 *
 * A DELETE is answered before the session's GET stream ends, and that stream is left for the
 * client to drop (for at most TERMINATED_STREAM_GRACE_MS). The SDK client takes a GET stream that
 * ends as a cue to reconnect it (after a second): ended by the server, a client on a busy machine
 * could reconnect before it read the answer to its DELETE, with the session id it had just
 * terminated, and be told "session not found".
 *
 * There is no event store, so a response stream that breaks can never be resumed: when a client
 * goes away before its POST is answered, the requests in it are cancelled (as if the client had
 * sent notifications/cancelled), instead of running on — a scenario would keep loading the
 * user's endpoint for nobody.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { messageOf } from '../kernel/errors.js';
import { requireBearer, UNAUTHORIZED_MESSAGE } from '../jsonrpc/bearer.js';
import { readJsonBody } from '../jsonrpc/http-body.js';
import { listenHttp } from '../jsonrpc/listen.js';
import type { Logger } from '../log.js';
import { MAX_SESSIONS, SESSION_ACTIVE_MS, SESSION_IDLE_MS } from './limits.js';

export const MCP_PATH = '/mcp';
const MAX_BODY_BYTES = 8 * 1024 * 1024;
export { MAX_SESSIONS, SESSION_ACTIVE_MS, SESSION_IDLE_MS };
/** Retry-After when every session is busy (a call in flight or resources held) rather than merely recent. */
const BUSY_RETRY_AFTER_S = 10;

export interface HttpServeOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  token?: string | undefined;
  /** Builds the MCP server for a new session, with what tells whether it holds resources (held proxies). */
  newSession: () => McpServer | SessionServer;
  log: Logger;
  /** Most sessions open at once (default MAX_SESSIONS). */
  maxSessions?: number | undefined;
  /** How long after its last request a session stays active (default SESSION_ACTIVE_MS). */
  activeMs?: number | undefined;
  /** The clock (default Date.now); tests move it. */
  now?: () => number;
}

export interface SessionServer {
  mcp: McpServer;
  /** True while the session holds something that must not be dropped under it (held proxies). */
  holdsResources?: () => boolean;
}

export interface RunningHttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  holdsResources: () => boolean;
  lastSeen: number;
  /**
   * POSTs being served now. A GET stream is not counted: a client holding only an idle stream
   * keeps no call running, and its session must stay evictable or 64 held streams lock out
   * every new client.
   */
  inFlight: number;
  /** Ids of the JSON-RPC requests being answered now: a duplicate would take over the first's stream and cancellation.
   * */
  requestIds: Set<string | number>;
  /** GET streams open now. */
  streams: number;
  /** Its last GET stream closed and no request came since: the client went away. */
  left: boolean;
  /** Called when its last GET stream closes. */
  onStreamsClosed?: (() => void) | undefined;
}

/** How long a terminated session's GET stream is left for its client to drop before it is ended. */
const TERMINATED_STREAM_GRACE_MS = 10_000;

/** How long a full server waits for disconnects under way to land before it answers 503. */
const FULL_GRACE_MS = 20;

export async function serveHttp(options: HttpServeOptions): Promise<RunningHttpServer> {
  const now = options.now ?? Date.now;
  const maxSessions = options.maxSessions ?? MAX_SESSIONS;
  const sessions = new SessionTable(options.log, now, options.activeMs ?? SESSION_ACTIVE_MS);
  let port = options.port;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!passesGates(req, res, options, port)) {
      req.resume();
      return;
    }
    const sessionId = headerValue(req.headers['mcp-session-id']);
    let body: unknown;
    if (req.method === 'POST') {
      const parsed = await readJsonBody(req, res, { maxBytes: MAX_BODY_BYTES });
      if (!parsed.ok) {
        const tooLarge = parsed.status === 413;
        sendJsonRpcError(
          res,
          parsed.status,
          tooLarge ? -32600 : -32700,
          (tooLarge ? '' : 'Parse error: ') + parsed.problem,
        );
        return;
      }
      body = parsed.value;
    }
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (!session) {
        sendJsonRpcError(res, 404, -32001, 'Session not found: start a new session with initialize');
        return;
      }
      if (req.method === 'DELETE' && protocolVersionSupported(req)) {
        sessions.terminate(sessionId, session, res);
        return;
      }
      await serveInSession(session, req, res, body, now);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      sendJsonRpcError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header; the first request must be initialize');
      return;
    }
    if (!(await sessions.makeRoom(maxSessions))) {
      const retryAfter = sessions.secondsUntilRoom();
      options.log.warn('HTTP: initialize refused, %d active sessions (retry after %d s)', sessions.size, retryAfter);
      sendJsonRpcError(
        res,
        503,
        -32000,
        `Too many active sessions (${maxSessions}); retry after ${retryAfter} s, or close one with DELETE ${MCP_PATH}`,
        {
          'retry-after': String(retryAfter),
        },
      );
      return;
    }
    const session = await openSession(options.newSession(), sessions, now);
    await serveInSession(session, req, res, body, now);
  };

  const server: Server = createHttpServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.log.error('HTTP request failed: %s', messageOf(error));
      if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
      else res.end();
    });
  });
  // An MCP client keeps its connections for the session's next requests. Node closes one idle for
  // 5 s; a client that picks it at that moment (its own idle timer late on a busy machine, or a
  // longer one) has its request cut ("other side closed") before the server read it. Clients
  // drop idle connections a little before the time this advertises (Keep-Alive: timeout=65).
  server.keepAliveTimeout = 65_000;
  const listening = await listenHttp(server, { host: options.host, port: options.port, detachErrorListener: true });
  port = listening.port;
  const sweeper = setInterval(() => sessions.closeIdle(SESSION_IDLE_MS), 60_000);
  sweeper.unref();
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;

  return {
    url: `http://${hostForUrl}:${port}${MCP_PATH}`,
    port,
    async close() {
      clearInterval(sweeper);
      await sessions.closeAll();
      await listening.close();
    },
  };
}

/**
 * The three gates in front of the SDK (path, Host/Origin, token); false when one answered the
 * request with its error.
 */
function passesGates(req: IncomingMessage, res: ServerResponse, options: HttpServeOptions, port: number): boolean {
  const url = new URL(req.url ?? '/', 'http://placeholder');
  if (url.pathname !== MCP_PATH) {
    sendJsonRpcError(res, 404, -32601, `Not found: the MCP endpoint is ${MCP_PATH}`);
    return false;
  }
  if (!hostAllowed(req.headers.host, options.host, port)) {
    sendJsonRpcError(res, 403, -32000, 'Forbidden: Host header does not name this server');
    return false;
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(origin, options.host, port)) {
    sendJsonRpcError(res, 403, -32000, 'Forbidden: Origin not allowed');
    return false;
  }
  const unauthorized = { jsonrpc: '2.0', id: null, error: { code: -32001, message: UNAUTHORIZED_MESSAGE } };
  return options.token === undefined || requireBearer(req, res, options.token, unauthorized);
}

/** A new session on its own transport; the table holds it once the SDK has given it an id. */
async function openSession(
  created: McpServer | SessionServer,
  sessions: SessionTable,
  now: () => number,
): Promise<Session> {
  const mcp = 'mcp' in created ? created.mcp : created;
  const holdsResources = 'mcp' in created && created.holdsResources ? created.holdsResources : () => false;
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.add(id, session),
  });
  const session: Session = {
    transport,
    server: mcp,
    holdsResources,
    lastSeen: now(),
    inFlight: 0,
    requestIds: new Set(),
    streams: 0,
    left: false,
  };
  transport.onclose = () => {
    const id = transport.sessionId;
    if (id !== undefined) sessions.forget(id);
  };
  await mcp.connect(transport);
  return session;
}

/**
 * Hands a request to its session, keeping the bookkeeping that decides whether the session is
 * active: requests in flight, their ids, its GET streams, when it was last seen.
 */
async function serveInSession(
  session: Session,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  now: () => number,
): Promise<void> {
  // A GET opens a stream for the server's own messages: it is not activity of the client's.
  const stream = req.method === 'GET';
  if (stream) session.streams++;
  else session.lastSeen = now();
  session.left = false;
  const requestIds = requestIdsIn(body);
  const duplicate = requestIds.find((id, index) => session.requestIds.has(id) || requestIds.indexOf(id) !== index);
  if (duplicate !== undefined) {
    sendJsonRpcError(
      res,
      409,
      -32600,
      `Invalid Request: id ${JSON.stringify(duplicate)} is already used by a request in flight; use a new id`,
    );
    return;
  }
  const counted = req.method !== 'GET';
  if (counted) session.inFlight++;
  for (const id of requestIds) session.requestIds.add(id);
  res.once('close', () => {
    if (stream && --session.streams === 0) {
      session.left = true;
      session.onStreamsClosed?.();
    }
    if (counted) session.inFlight--;
    for (const id of requestIds) session.requestIds.delete(id);
    if (counted) session.lastSeen = now();
    if (res.writableFinished) return;
    for (const requestId of requestIds) {
      session.transport.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId, reason: 'client disconnected' },
      });
    }
  });
  await session.transport.handleRequest(req, res, body);
}

/** The open sessions, and which of them may be closed to make room or for idleness. */
class SessionTable {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number,
    /** How long after its last request a session stays active. */
    private readonly activeMs: number,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  add(id: string, session: Session): void {
    this.sessions.set(id, session);
    this.log.debug('HTTP session %s opened', id);
  }

  /** Drops a session whose transport closed (DELETE, or closed here). */
  forget(id: string): void {
    if (this.sessions.delete(id)) this.log.debug('HTTP session %s closed', id);
  }

  /**
   * Ends a session at its client's request: answers first; closes it (which ends its GET stream)
   * once its client has dropped that stream, or after the grace, or at once when a call is still
   * in flight (closing cancels it).
   */
  terminate(id: string, session: Session, res: ServerResponse): void {
    this.sessions.delete(id);
    this.log.debug('HTTP session %s closed (terminated by its client)', id);
    let grace: NodeJS.Timeout | undefined;
    const close = (): void => {
      clearTimeout(grace);
      session.onStreamsClosed = undefined;
      void session.server.close().catch(() => undefined);
    };
    res.once('close', () => {
      if (session.streams === 0 || session.inFlight > 0) return close();
      session.onStreamsClosed = close;
      grace = setTimeout(close, TERMINATED_STREAM_GRACE_MS).unref();
    });
    res.writeHead(200).end();
  }

  close(id: string, why: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    this.log.debug('HTTP session %s closed (%s)', id, why);
    void session.server.close().catch(() => undefined);
  }

  /** Room for one more session: true at once below `max`, else after closing an inactive one (a grace for disconnects
   * under way). */
  async makeRoom(max: number): Promise<boolean> {
    if (this.sessions.size < max || this.evictLeastRecentlyUsed()) return true;
    await new Promise((resolve) => setTimeout(resolve, FULL_GRACE_MS));
    return this.evictLeastRecentlyUsed();
  }

  /** Seconds until a session can be closed for room: the first merely recent one turns inactive. */
  secondsUntilRoom(): number {
    let soonest = Infinity;
    for (const session of this.sessions.values())
      if (!this.busy(session)) soonest = Math.min(soonest, session.lastSeen + this.activeMs - this.now());
    return Number.isFinite(soonest) ? Math.max(1, Math.ceil(soonest / 1000)) : BUSY_RETRY_AFTER_S;
  }

  closeIdle(idleMs: number): void {
    const at = this.now();
    for (const [id, session] of this.sessions) {
      if (!this.busy(session) && at - session.lastSeen > idleMs) this.close(id, 'idle');
    }
  }

  async closeAll(): Promise<void> {
    const closing = [...this.sessions.values()].map((session) => session.server.close().catch(() => undefined));
    this.sessions.clear();
    await Promise.all(closing);
  }

  /** A request in flight or resources held: never closed under its client. */
  private busy(session: Session): boolean {
    return session.inFlight > 0 || session.holdsResources();
  }

  /** Closes the inactive session seen longest ago; false when every session is active. */
  private evictLeastRecentlyUsed(): boolean {
    const threshold = this.now() - this.activeMs;
    let oldest: [string, Session] | undefined;
    for (const entry of this.sessions) {
      const session = entry[1];
      if (this.busy(session) || (session.lastSeen > threshold && !session.left)) continue;
      if (!oldest || session.lastSeen < oldest[1].lastSeen) oldest = entry;
    }
    if (!oldest) return false;
    this.close(oldest[0], 'inactive, closed to make room');
    return true;
  }
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function hostAllowed(hostHeader: string | undefined, boundHost: string, port: number): boolean {
  if (!hostHeader) return false;
  let parsed: URL;
  try {
    parsed = new URL(`http://${hostHeader}`);
  } catch {
    return false;
  }
  const headerPort = parsed.port === '' ? 80 : Number(parsed.port);
  return headerPort === port && nameAllowed(parsed.hostname, boundHost);
}

/**
 * An Origin names this server: a loopback name or the bound address, and this port. The port
 * counts: `http://localhost:3000` is another site (a dev server's page) than the server on 8808.
 */
function originAllowed(origin: string, boundHost: string, port: number): boolean {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  const originPort = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return originPort === port && nameAllowed(parsed.hostname, boundHost);
}

function nameAllowed(hostname: string, boundHost: string): boolean {
  const name = hostname.toLowerCase();
  if (LOOPBACK_NAMES.has(name)) return true;
  const bound = boundHost.toLowerCase();
  // A wildcard bind accepts any name only when the user explicitly chose it; the check then
  // cannot tell rebinding from a real remote name, so it is left to the token.
  if (bound === '0.0.0.0' || bound === '::') return true;
  return name === bound || name === `[${bound}]`;
}

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
function requestIdsIn(body: unknown): Array<string | number> {
  const messages = Array.isArray(body) ? body : [body];
  const ids: Array<string | number> = [];
  for (const message of messages) {
    if (message && typeof message === 'object' && 'method' in message && 'id' in message) {
      const id = (message as { id: unknown }).id;
      if (typeof id === 'string' || typeof id === 'number') ids.push(id);
    }
  }
  return ids;
}

/** An Mcp-Protocol-Version header, when sent, names a version the SDK speaks (else the SDK answers 400). */
function protocolVersionSupported(req: IncomingMessage): boolean {
  const version = headerValue(req.headers['mcp-protocol-version']);
  return version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}
