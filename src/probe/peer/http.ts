/**
 * A probe peer over streamable HTTP (one POST per message, answered with JSON or an SSE stream),
 * and postRaw, the one bounded POST the HTTP checks also use directly. Every answer is read within
 * PEER_BOUNDS: a body or SSE event over the message bound, or an answer over the response bound,
 * is cut off there (the request is destroyed) and reported, never held whole. Connections go
 * through the caller's lookup, which applies the target policy to every address a name resolves to.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { readJson, DEFAULT_MAX_JSON_DEPTH, isMessageObject, type JsonRpcMessage } from '../../jsonrpc/message.js';
import { createSseReader } from '../../jsonrpc/sse.js';
import { PEER_BOUNDS, sizeText } from '../limits.js';
import {
  BasePeer,
  refOf,
  until,
  within,
  type CloseOptions,
  type HttpTarget,
  type Peer,
  type Reply,
  type RequestOptions,
} from './base.js';

/** After its time is up, a session still gets this long for its DELETE. */
const STOP_GRACE_MS = 250;
/** Characters of a body kept for the transcript and for messages about it. */
const BODY_KEPT_CHARS = 4000;
/** Messages kept from one answer by postRaw when nothing routes them. */
const MESSAGES_KEPT = 100;

export interface RawHttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The JSON-RPC messages of the answer (when no onText took them), the first MESSAGES_KEPT. */
  messages: JsonRpcMessage[];
  /** The first characters of the body. */
  body: string;
  /** The request failed on the connection (refused, reset, refused by the target policy): its error code. */
  connectionError?: string;
  /** The connection error's message (the policy's refusal says why). */
  connectionMessage?: string;
  /** The answer passed a bound and was cut off there: why. */
  cut?: string;
  /** Bytes of body read. */
  bytes: number;
}

export interface PostOptions {
  headers?: Record<string, string | undefined>;
  timeoutMs: number;
  method?: 'POST' | 'DELETE';
  /** Each message's text as it arrives (an SSE event's data, or the whole JSON body); messages is then left empty. */
  onText?: (text: string) => void;
  signal?: AbortSignal | undefined;
  lookup?: LookupFunction | undefined;
}

/** One request with the given headers (the probe's defaults overridable, `undefined` drops one), read within the
 * bounds. */
export function postRaw(url: string, body: string, options: PostOptions): Promise<RawHttpResponse> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const finalHeaders: Record<string, string> = {};
  const merged: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...options.headers,
  };
  for (const [name, value] of Object.entries(merged)) if (value !== undefined) finalHeaders[name] = value;
  return new Promise((resolve) => {
    const messages: JsonRpcMessage[] = [];
    let kept = '';
    let settled = false;
    let cut: string | undefined;
    let total = 0;
    const deliver = (text: string): void => {
      if (options.onText) return options.onText(text);
      const reading = readJson(text, { maxChars: PEER_BOUNDS.messageBytes, maxDepth: DEFAULT_MAX_JSON_DEPTH });
      if (!reading.ok) return;
      for (const m of Array.isArray(reading.value) ? reading.value : [reading.value])
        if (isMessageObject(m) && messages.length < MESSAGES_KEPT) messages.push(m);
    };
    const finish = (
      status: number,
      headers: IncomingHttpHeaders,
      error?: NodeJS.ErrnoException | { code: string; message: string },
    ): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        status,
        headers,
        messages,
        body: kept,
        bytes: total,
        ...(error ? { connectionError: error.code ?? 'error', connectionMessage: error.message } : {}),
        ...(cut ? { cut } : {}),
      });
    };
    // agent: false — a connection per request, closed with it: none is left in Node's global
    // keep-alive pool after the run (the probe's sockets end with its requests).
    const req = send(
      target,
      {
        method: options.method ?? 'POST',
        headers: finalHeaders,
        agent: false,
        ...(options.lookup ? { lookup: options.lookup } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const stop = (why: string): void => {
          cut ??= why;
          req.destroy();
          finish(status, res.headers);
        };
        const sse = String(res.headers['content-type'] ?? '').includes('text/event-stream');
        const reader = sse
          ? createSseReader({
              maxEventChars: PEER_BOUNDS.messageBytes,
              onEvent: (event) => event.data !== '' && deliver(event.data),
              onOversize: () =>
                stop(
                  `an SSE event of more than ${sizeText(PEER_BOUNDS.messageBytes)}, ` +
                    `the probe's bound per message (it was cut there)`,
                ),
            })
          : undefined;
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          total += chunk.length;
          if (kept.length < BODY_KEPT_CHARS)
            kept += chunk.toString('utf8', 0, Math.min(chunk.length, BODY_KEPT_CHARS - kept.length));
          if (total > PEER_BOUNDS.responseBytes)
            return stop(
              `an answer of more than ${sizeText(PEER_BOUNDS.responseBytes)}, ` +
                `the probe's bound per answer (it was cut there)`,
            );
          if (reader) return reader.feed(chunk);
          if (total > PEER_BOUNDS.messageBytes)
            return stop(
              `a body of more than ${sizeText(PEER_BOUNDS.messageBytes)}, the ` +
                `probe's bound per message (it was cut there)`,
            );
          parts.push(chunk);
        });
        // A refusal in plain text or HTML (a 401, a proxy's 502) is an HTTP answer, not a JSON-RPC
        // message that failed to parse: only a success or a body that says it is JSON is read as one.
        const jsonRpc = (status >= 200 && status < 300) || String(res.headers['content-type'] ?? '').includes('json');
        res.on('end', () => {
          if (reader) reader.end();
          else if (parts.length > 0 && jsonRpc) {
            const text = Buffer.concat(parts).toString('utf8');
            if (text.trim() !== '') deliver(text);
          }
          finish(status, res.headers);
        });
        res.on('error', () => finish(status, res.headers));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish(0, {});
    }, options.timeoutMs);
    // A stopped run cuts its requests at once: the socket goes with them.
    const onAbort = (): void => {
      req.destroy();
      finish(0, {}, { code: 'stopped', message: 'the run was stopped' });
    };
    req.on('error', (error: NodeJS.ErrnoException) => finish(0, {}, error));
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    req.end(body);
  });
}

export class HttpPeer extends BasePeer implements Peer {
  private session: string | undefined;
  private protocolVersion: string | undefined;
  private bytesRead = 0;
  private lastStatus: number | undefined;
  private closed = false;
  private readonly inflight = new Set<Promise<unknown>>();
  /** The POSTs that carry requests, by ref: abandon() cuts one. */
  private readonly carrying = new Map<string, AbortController>();

  constructor(
    readonly target: HttpTarget,
    stop: AbortSignal | undefined,
    private readonly lookup: LookupFunction | undefined,
  ) {
    super(stop);
  }

  alive(): boolean {
    return !this.closed;
  }

  sessionId(): string | undefined {
    return this.session;
  }

  stderrTail(): string {
    return '';
  }

  startError(): undefined {
    return undefined;
  }

  private headers(): Record<string, string | undefined> {
    const headers: Record<string, string | undefined> = {};
    if (this.target.token) headers.authorization = `Bearer ${this.target.token}`;
    if (this.session) headers['mcp-session-id'] = this.session;
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  /**
   * POSTs one message; answers are routed as they stream in (an unreadable one is `ref`'s, the
   * request the POST carried). Aborting `cancel` cuts the POST (a wait that gave up on it).
   */
  private post(text: string, timeoutMs: number, ref?: string, cancel?: AbortSignal): Promise<RawHttpResponse> {
    this.note('>', text, ref);
    const signals = [this.stop, cancel].filter((s): s is AbortSignal => s !== undefined);
    const sent = postRaw(this.target.url, text, {
      headers: this.headers(),
      timeoutMs,
      onText: (message) => this.receiveText(message, ref),
      signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
      lookup: this.lookup,
    }).then((response) => {
      this.bytesRead += response.bytes;
      if (this.bytesRead > PEER_BOUNDS.peerBytes && !this.closed) {
        // More than a server may send in one session: the probe reads no more of it.
        this.unreadableMessage(
          `more than ${sizeText(PEER_BOUNDS.peerBytes)} of answers in one session, the probe's bound per session`,
          'bound',
          '',
          ref,
        );
        void this.close({ deadline: Date.now() });
      }
      const session = response.headers['mcp-session-id'];
      if (typeof session === 'string' && !this.session) this.session = session;
      this.lastStatus = response.status;
      if (response.cut) this.unreadableMessage(response.cut, 'bound', response.body, ref);
      else if (response.connectionError === 'stopped')
        this.note('!', 'the probe cut the request (its wait was over)', ref);
      else if (response.connectionError)
        this.note(
          '!',
          `HTTP request failed: ${response.connectionError}${response.connectionError === 'ENOTLOCAL' ? ` (${response.connectionMessage})` : ''}`,
          ref,
        );
      else if (response.status === 0) this.note('!', 'HTTP request timed out', ref);
      else if (response.status >= 300)
        this.note('!', `HTTP ${response.status}${response.body ? ` ${response.body.slice(0, 300)}` : ''}`, ref);
      return response;
    });
    this.inflight.add(sent);
    void sent.finally(() => this.inflight.delete(sent));
    return sent;
  }

  protected sendText(text: string): void {
    void this.post(text, 5000);
  }

  /** Remembers the protocol version the server chose: later requests carry it in their header. */
  private learnVersion(reply: Reply): Reply {
    const version = (reply.message?.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    if (typeof version === 'string' && !this.protocolVersion) this.protocolVersion = version;
    return reply;
  }

  async request(method: string, params: unknown, timeoutMs: number, options: RequestOptions = {}): Promise<Reply> {
    this.throwIfStopped();
    const { id, text } = this.requestText(method, params, options);
    const answered = this.waitFor(id, timeoutMs, { maxMs: options.maxMs, status: () => this.lastStatus });
    answered.catch(() => undefined); // a stop rejects it; the race below or the return reports that
    // The POST lives as long as the wait may (progress extends both): after a timeout its answer
    // may still come (a cancellation check waits for just that), until abandon() cuts it.
    const ref = refOf(id);
    const cancel = new AbortController();
    this.carrying.set(ref, cancel);
    const sent = this.post(text, Math.max(timeoutMs, options.maxMs ?? 0), ref, cancel.signal);
    void sent.finally(() => this.carrying.get(ref) === cancel && this.carrying.delete(ref));
    const response = await Promise.race([sent, answered.then(() => undefined)]);
    this.throwIfStopped();
    if (response === undefined) return this.learnVersion(await answered);
    // The connection failed (refused, reset: the server went away) is not the same as no answer in time.
    if (response.connectionError) return { id, timedOut: false, closed: true, status: 0, progress: 0, ms: 0 };
    if (response.status === 0) return { id, timedOut: true, closed: false, status: 0, progress: 0, ms: timeoutMs };
    // The POST ended without our answer (an HTTP error with a body that is not ours, say): a moment for a late route,
    // then closed.
    const late = new Promise<Reply>((resolve) =>
      setTimeout(
        () => resolve({ id, timedOut: false, closed: true, status: response.status, progress: 0, ms: 0 }),
        50,
      ).unref(),
    );
    return this.learnVersion(await Promise.race([answered, late]));
  }

  override abandon(id: number | string | null): void {
    const ref = refOf(id);
    this.carrying.get(ref)?.abort();
    this.carrying.delete(ref);
  }

  async notify(method: string, params?: unknown): Promise<void> {
    this.throwIfStopped();
    const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
    await this.post(
      JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }),
      5000,
      requestId === undefined ? undefined : refOf(requestId),
    );
    this.throwIfStopped();
  }

  async sendRaw(text: string, timeoutMs: number, awaitId: number | string | null = null): Promise<Reply> {
    this.throwIfStopped();
    const answered = this.waitFor(awaitId, timeoutMs, { status: () => this.lastStatus });
    answered.catch(() => undefined);
    const response = await this.post(text, timeoutMs, refOf(awaitId));
    this.throwIfStopped();
    const id = awaitId;
    if (response.connectionError) return { id, timedOut: false, closed: true, status: 0, progress: 0, ms: 0 };
    if (response.status === 0) return { id, timedOut: true, closed: false, status: 0, progress: 0, ms: timeoutMs };
    // The answer, if any, came with the POST: wait no longer than a moment for its routing.
    const none = new Promise<Reply>((resolve) =>
      setTimeout(
        () => resolve({ id, timedOut: false, closed: false, status: response.status, progress: 0, ms: 0 }),
        20,
      ).unref(),
    );
    return Promise.race([answered, none]);
  }

  /**
   * Ends the session (DELETE) and waits for every open POST: until options.deadline at most, then
   * STOP_GRACE_MS for the DELETE (a stopped run's POSTs were cut already).
   */
  async close(options: CloseOptions = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const grace = (): number => Math.max(STOP_GRACE_MS, until(options.deadline, 3000));
    if (this.session) {
      const headers: Record<string, string | undefined> = { 'mcp-session-id': this.session };
      if (this.target.token) headers.authorization = `Bearer ${this.target.token}`;
      await postRaw(this.target.url, '', { headers, timeoutMs: grace(), method: 'DELETE', lookup: this.lookup });
    }
    this.closedNow();
    await within(Promise.allSettled([...this.inflight]), grace());
  }
}
