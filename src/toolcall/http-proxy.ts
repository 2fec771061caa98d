/**
 * The streamable-HTTP proxy: one upstream MCP endpoint behind a loopback listener.
 *
 *   POST  client messages through PlaneSession.fromClient; what is forwarded goes upstream in one
 *         POST; the reply (JSON or an SSE stream, read event by event) comes back through
 *         fromServer, so mutations and delays apply per message and SSE event ids survive.
 *         Answers made here (injected errors) join the reply; notifications-only posts get 202.
 *   GET   the server's SSE stream, passed through event by event (list_changed joins it when the
 *         POST reply was plain JSON).       DELETE  forwarded; the session's state is dropped.
 *   GET /healthz, GET /metrics (the SLIs as JSON) are answered here.
 *
 * Forwarded: Mcp-Session-Id, Authorization, MCP-Protocol-Version, Last-Event-ID, Accept,
 * Content-Type (and back: Content-Type, Mcp-Session-Id, WWW-Authenticate). Sessions are keyed by
 * Mcp-Session-Id and bounded.
 */
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import type { JsonRpcMessage, PlaneSession, ToolPlane } from './session.js';

export interface HttpProxyOptions {
  plane: ToolPlane;
  upstream: string;
  host?: string;
  port?: number;
  /** Largest request body accepted (bytes, default 16 MiB). */
  maxBody?: number;
  maxSessions?: number;
  /** Resolves the upstream's name at every connect (a target policy's lookup, refusing some addresses). */
  lookup?: LookupFunction;
}

export interface HttpProxy {
  url: string;
  port: number;
  close(): Promise<void>;
}

const REQUEST_HEADERS = ['content-type', 'accept', 'mcp-session-id', 'authorization', 'mcp-protocol-version', 'last-event-id'];
const RESPONSE_HEADERS = ['content-type', 'mcp-session-id', 'www-authenticate'];

interface SessionState {
  session: PlaneSession;
  streams: Set<ServerResponse>;
}

export async function startHttpProxy(options: HttpProxyOptions): Promise<HttpProxy> {
  const { plane } = options;
  const upstream = new URL(options.upstream);
  const maxBody = options.maxBody ?? 16 * 1024 * 1024;
  const maxSessions = options.maxSessions ?? 1000;
  const sessions = new Map<string, SessionState>();
  const inflight = new Set<AbortController>();
  const agent = upstream.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, maxSockets: 256 }) : new HttpAgent({ keepAlive: true, maxSockets: 256 });
  /** Upstream requests whose connection failed: the upstream's failure, not the proxy's own. */
  const upstreamErrors = new WeakSet<object>();
  /**
   * One request upstream. An answer (any status) says the upstream is there — it ends an outage,
   * and the `toolCalls` tool calls it carried reached it; a connection failure is the upstream's.
   */
  const send = (url: URL, method: string, headers: Record<string, string>, body: string | Buffer | undefined, signal: AbortSignal, toolCalls = 0): Promise<IncomingMessage> =>
    sendWith(agent, url, method, headers, body, signal, options.lookup).then(
      (reply) => {
        plane.upstreamReached(toolCalls);
        return reply;
      },
      (error: unknown) => {
        if (typeof error === 'object' && error !== null && !signal.aborted) upstreamErrors.add(error);
        throw error;
      },
    );

  const stateFor = (id: string | undefined): SessionState => {
    const key = id ?? '';
    let state = sessions.get(key);
    if (!state) {
      if (sessions.size >= maxSessions) {
        const [oldKey, old] = sessions.entries().next().value as [string, SessionState];
        old.session.close();
        sessions.delete(oldKey);
      }
      state = { session: plane.session(), streams: new Set() };
      sessions.set(key, state);
    }
    return state;
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const upstreamDown = typeof error === 'object' && error !== null && upstreamErrors.has(error);
      if (upstreamDown) plane.upstreamUnreachable((error as Error).message);
      else plane.internalErrors += 1;
      if (!res.headersSent) jsonError(res, 502, `faultline toolcall: ${upstreamDown ? `the upstream ${upstream.href} could not be reached: ` : ''}${(error as Error).message}`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (req.method === 'GET' && path === '/metrics') return sendJson(res, 200, plane.slis());
    const abort = new AbortController();
    inflight.add(abort);
    res.on('close', () => {
      abort.abort();
      inflight.delete(abort);
    });
    const headers = forwardHeaders(req);
    const sessionId = header(req, 'mcp-session-id');
    if (req.method === 'GET') {
      const reply = await send(upstream, 'GET', headers, undefined, abort.signal);
      const state = stateFor(sessionId);
      copyHead(reply, res);
      if (!isSse(reply)) return void res.end(await readAll(reply));
      state.streams.add(res);
      res.on('close', () => state.streams.delete(res));
      await relaySse(reply, res, state.session);
      return void res.end();
    }
    if (req.method === 'DELETE') {
      const reply = await send(upstream, 'DELETE', headers, undefined, abort.signal);
      if (sessionId !== undefined) {
        sessions.get(sessionId)?.session.close();
        sessions.delete(sessionId);
      }
      copyHead(reply, res);
      return void res.end(await readAll(reply));
    }
    if (req.method !== 'POST') {
      const reply = await send(upstream, req.method ?? 'GET', headers, undefined, abort.signal);
      copyHead(reply, res);
      return void res.end(await readAll(reply));
    }
    const body = await readBody(req, maxBody);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const messages = Array.isArray(parsed) ? (parsed as JsonRpcMessage[]) : typeof parsed === 'object' && parsed !== null ? [parsed as JsonRpcMessage] : undefined;
    if (!messages) {
      // Not JSON-RPC we understand: the upstream decides (fail-safe).
      const reply = await send(upstream, 'POST', headers, body, abort.signal);
      copyHead(reply, res);
      return void res.end(await readAll(reply));
    }
    const state = stateFor(sessionId);
    // A client that hangs up before its answers arrive (a client-side timeout, a killed agent)
    // has its calls recorded unanswered now; after a finished reply nothing is pending any more.
    res.on('close', () => {
      if (!res.writableFinished) state.session.clientGone(messages);
    });
    const forwarded: JsonRpcMessage[] = [];
    // Until the reply's form is known, answers made here wait in `early`.
    const early: JsonRpcMessage[] = [];
    let write: ((message: JsonRpcMessage) => void) | undefined;
    const toClient = (message: JsonRpcMessage): void => {
      if (write) write(message);
      else early.push(message);
    };
    const local = messages.map((m) => state.session.fromClient(m, (out) => forwarded.push(out), toClient));
    const localDone = Promise.all(local);

    if (forwarded.length === 0) {
      await localDone;
      return replyLocal(res, early, state);
    }
    let reply: IncomingMessage;
    try {
      const toolCalls = forwarded.filter((m) => m.method === 'tools/call' && m.id !== undefined && m.id !== null).length;
      reply = await send(upstream, 'POST', headers, JSON.stringify(Array.isArray(parsed) ? forwarded : forwarded[0]), abort.signal, toolCalls);
    } catch (error) {
      if (abort.signal.aborted) throw error; // the client went away: not the upstream's failure
      // The upstream is down (refused, reset): its failure, not the proxy's. The calls sent
      // are recorded unanswered at once and the client gets a 502 naming the cause.
      const reason = (error as Error).message;
      plane.upstreamUnreachable(reason);
      state.session.upstreamFailed(forwarded);
      await localDone;
      return jsonError(res, 502, `faultline toolcall: the upstream ${upstream.href} could not be reached: ${reason}`);
    }
    const upstreamSessionId = headerOf(reply, 'mcp-session-id');
    const target = upstreamSessionId && !sessionId ? adopt(upstreamSessionId, state) : state;
    // The upstream dropped the connection in the middle of its answer (it died, or reset): its
    // failure, as a refused connection is; the calls still waiting will never be answered.
    const dropped = (error: unknown): void => {
      plane.upstreamUnreachable(`the connection dropped mid-answer: ${(error as Error)?.message ?? String(error)}`);
      state.session.upstreamFailed(forwarded);
    };
    if (isSse(reply)) {
      copyHead(reply, res);
      write = (message) => writeEvent(res, message);
      early.splice(0).forEach(write);
      const failure = await relaySse(reply, res, target.session);
      if (failure !== undefined && !abort.signal.aborted) dropped(failure);
      await localDone;
      return void res.end();
    }
    let text: string;
    try {
      text = (await readAll(reply)).toString('utf8');
    } catch (error) {
      if (abort.signal.aborted) throw error; // the client went away: not the upstream's failure
      dropped(error);
      await localDone;
      return jsonError(res, 502, `faultline toolcall: the upstream ${upstream.href} dropped the connection mid-answer: ${(error as Error).message}`);
    }
    const ok = reply.statusCode !== undefined && reply.statusCode >= 200 && reply.statusCode < 300;
    let upstreamMessages: JsonRpcMessage[] = [];
    try {
      const value = text ? (JSON.parse(text) as unknown) : undefined;
      upstreamMessages = Array.isArray(value) ? (value as JsonRpcMessage[]) : value ? [value as JsonRpcMessage] : [];
    } catch {
      copyHead(reply, res);
      return void res.end(text);
    }
    if (reply.statusCode === 202 || !ok) {
      await localDone;
      if (early.length === 0 || !ok) {
        copyHead(reply, res);
        return void res.end(text);
      }
    }
    const answers: JsonRpcMessage[] = [];
    await Promise.all(upstreamMessages.map((m) => target.session.fromServer(m, (out) => answers.push(out))));
    await localDone;
    const all = [...early, ...answers];
    const responses = all.filter((m) => m.method === undefined);
    for (const note of all.filter((m) => m.method !== undefined)) for (const stream of target.streams) writeEvent(stream, note);
    copyHead(reply, res);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(Array.isArray(parsed) ? responses : responses[0] ?? null));
  }

  function adopt(id: string, state: SessionState): SessionState {
    // The initialize reply named the session: later requests carry that id.
    if (!sessions.has(id)) sessions.set(id, { session: plane.session(), streams: new Set() });
    void state;
    return sessions.get(id)!;
  }

  function replyLocal(res: ServerResponse, answers: JsonRpcMessage[], state: SessionState): void {
    const responses = answers.filter((m) => m.method === undefined);
    for (const note of answers.filter((m) => m.method !== undefined)) for (const stream of state.streams) writeEvent(stream, note);
    if (responses.length === 0) {
      res.writeHead(202).end();
      return;
    }
    sendJson(res, 200, responses.length === 1 ? responses[0] : responses);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/mcp`,
    port: address.port,
    async close() {
      for (const abort of inflight) abort.abort();
      for (const state of sessions.values()) {
        state.session.close();
        for (const stream of state.streams) stream.end();
      }
      sessions.clear();
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Reads an SSE body event by event; JSON-RPC data goes through the session, the rest verbatim.
 * Returns the error that ended the source early (the connection dropped), if one did.
 */
async function relaySse(source: AsyncIterable<Uint8Array | string>, res: ServerResponse, session: PlaneSession): Promise<unknown> {
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of source) {
      buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      let boundary: RegExpExecArray | null;
      while ((boundary = /\r?\n\r?\n/.exec(buffer))) {
        const raw = buffer.slice(0, boundary.index);
        buffer = buffer.slice(boundary.index + boundary[0].length);
        await relayEvent(raw, res, session);
      }
    }
  } catch (error) {
    // The client or the upstream went away: the stream simply ends; the caller tells which.
    return error ?? new Error('the stream failed');
  }
  return undefined;
}

/**
 * One request to the upstream with node:http(s) over keep-alive connections. Not fetch: fetch
 * cuts a body idle for 5 minutes (a GET stream may idle far longer) and costs more per call.
 */
function sendWith(
  agent: HttpAgent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  signal: AbortSignal,
  lookup: LookupFunction | undefined,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers, signal, agent, ...(lookup ? { lookup } : {}) }, resolve);
    request.once('error', reject);
    request.end(body);
  });
}


async function readAll(reply: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of reply) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function relayEvent(raw: string, res: ServerResponse, session: PlaneSession): Promise<void> {
  let id: string | undefined;
  let event: string | undefined;
  const data: string[] = [];
  for (const line of raw.split(/\r?\n/)) {
    if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    else if (line.startsWith('id:')) id = line.slice(3).trim();
    else if (line.startsWith('event:')) event = line.slice(6).trim();
  }
  let message: JsonRpcMessage | undefined;
  try {
    message = data.length > 0 ? (JSON.parse(data.join('\n')) as JsonRpcMessage) : undefined;
  } catch {
    message = undefined;
  }
  if (!message || typeof message !== 'object') {
    if (!res.writableEnded) res.write(raw + '\n\n');
    return;
  }
  await session.fromServer(message, (out) => writeEvent(res, out, out === message || out.id === message!.id ? id : undefined, event));
}

function writeEvent(res: ServerResponse, message: JsonRpcMessage, id?: string, event = 'message'): void {
  if (res.writableEnded) return;
  res.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(message)}\n\n`);
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

function copyHead(reply: IncomingMessage, res: ServerResponse): void {
  if (res.headersSent) return;
  for (const name of RESPONSE_HEADERS) {
    const value = reply.headers[name];
    if (value !== undefined) res.setHeader(name, value);
  }
  res.statusCode = reply.statusCode ?? 502;
  if (isSse(reply)) {
    res.setHeader('cache-control', 'no-cache');
    res.flushHeaders(); // the client sees the stream open before the first event
  }
}

function isSse(reply: IncomingMessage): boolean {
  return headerOf(reply, 'content-type').includes('text/event-stream');
}

function headerOf(reply: IncomingMessage, name: string): string {
  const value = reply.headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

function jsonError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', id: null, error: { code: -32603, message } });
}

async function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new Error(`request body larger than ${max} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
