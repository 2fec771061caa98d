/**
 * A raw JSON-RPC peer for probing: it speaks to an MCP server over stdio (a child process it
 * spawns and always reaps) or streamable HTTP (one POST per message, JSON or SSE answers), and
 * keeps a transcript of every line sent and received, so that a finding can quote the exact
 * exchange that shows it. Raw rather than the SDK client because the probes must send what a
 * well-behaved client never would: requests before initialize, malformed JSON, bad ids.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import { groupGone, OWN_GROUP, signalGroup } from '../process-group.js';

export type { JsonRpcMessage };

export interface TranscriptLine {
  /** '>' sent by the probe, '<' received from the server, '!' an observation (exit, HTTP status). */
  dir: '>' | '<' | '!';
  text: string;
}

export interface Reply {
  message?: JsonRpcMessage;
  /** No answer within the bound. */
  timedOut: boolean;
  /** The connection or process went away before an answer. */
  closed: boolean;
  /** HTTP only: the status of the POST that carried the request. */
  status?: number;
}

export type StdioTarget = { kind: 'stdio'; command: string; args: string[]; env?: Record<string, string>; cwd?: string };
export type HttpTarget = { kind: 'http'; url: string; token?: string };
export type Target = StdioTarget | HttpTarget;

export const PROBE_PROTOCOL_VERSION = '2025-06-18';

/**
 * The run the peer belongs to was stopped (its overall bound ran out, or its caller cancelled):
 * every wait ends at once with this, rather than as a timeout a check would read as a finding.
 */
export class PeerStopped extends Error {
  constructor(readonly why: unknown) {
    super('the probe run was stopped');
  }
}

export interface PeerOptions {
  /** Aborting it ends every wait of the peer at once (PeerStopped) and cuts its HTTP requests. */
  stop?: AbortSignal;
}

/**
 * How long close() may take: until \`deadline\` (epoch ms) for the polite steps, and then at most
 * STOP_GRACE_MS for SIGTERM before SIGKILL, so a run that ends at its bound overruns it by little.
 */
export interface CloseOptions {
  deadline?: number;
}

/** After its time is up, a stdio server still gets this long between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 250;
/** Without a deadline: the polite wait after closing stdin, then after SIGTERM. */
const POLITE_GRACE_MS = 1500;
const TRANSCRIPT_TEXT_LIMIT = 2000;
const TRANSCRIPT_LINES_LIMIT = 20_000;

export interface Peer {
  readonly target: Target;
  readonly transcript: TranscriptLine[];
  /** Notifications (and server requests) received so far. */
  readonly notifications: JsonRpcMessage[];
  /** stdio: lines on stdout that were not JSON-RPC. */
  readonly pollution: string[];
  /** Sends a request with a fresh numeric id (or the given one) and waits for the answer. */
  request(method: string, params: unknown, timeoutMs: number, id?: number | string): Promise<Reply>;
  /** Sends a notification. */
  notify(method: string, params?: unknown): Promise<void>;
  /** Sends raw text as one message (stdio: one line; HTTP: one POST body) and waits for an id-less or null-id answer. */
  sendRaw(text: string, timeoutMs: number, awaitId?: number | string | null): Promise<Reply>;
  /** Waits for an answer to an already sent id (after a cancel, say). */
  waitFor(id: number | string, timeoutMs: number): Promise<Reply>;
  alive(): boolean;
  /** HTTP: the session id the server assigned, if any. */
  sessionId(): string | undefined;
  stderrTail(): string;
  /** Why the target could not be started at all (stdio: the command could not be spawned). */
  startError(): string | undefined;
  /** Ends the session and reaps what it started, within options.deadline plus a short grace. */
  close(options?: CloseOptions): Promise<void>;
}

/** initialize + notifications/initialized; returns the initialize reply. */
export async function handshake(peer: Peer, timeoutMs: number, protocolVersion = PROBE_PROTOCOL_VERSION): Promise<Reply> {
  const reply = await peer.request(
    'initialize',
    { protocolVersion, capabilities: {}, clientInfo: { name: 'faultline-probe', version: '1' } },
    timeoutMs,
  );
  if (reply.message?.result) await peer.notify('notifications/initialized');
  return reply;
}

export function openPeer(target: Target, options: PeerOptions = {}): Peer {
  return target.kind === 'stdio' ? new StdioPeer(target, options.stop) : new HttpPeer(target, options.stop);
}

/** Milliseconds until \`deadline\`, capped at \`max\` (max itself without a deadline). */
function until(deadline: number | undefined, max: number): number {
  return deadline === undefined ? max : Math.max(0, Math.min(max, deadline - Date.now()));
}

abstract class BasePeer {
  readonly transcript: TranscriptLine[] = [];
  readonly notifications: JsonRpcMessage[] = [];
  readonly pollution: string[] = [];
  protected nextId = 1;
  private readonly waiting = new Map<string, (message: JsonRpcMessage) => void>();
  private readonly unclaimed = new Map<string, JsonRpcMessage>();
  private readonly closeListeners = new Set<() => void>();

  constructor(protected readonly stop: AbortSignal | undefined) {}

  /** Throws PeerStopped when the run was stopped: nothing more is sent once it is. */
  protected throwIfStopped(): void {
    if (this.stop?.aborted) throw new PeerStopped(this.stop.reason);
  }

  protected note(dir: TranscriptLine['dir'], text: string): void {
    if (this.transcript.length >= TRANSCRIPT_LINES_LIMIT) return;
    this.transcript.push({ dir, text: text.length > TRANSCRIPT_TEXT_LIMIT ? `${text.slice(0, TRANSCRIPT_TEXT_LIMIT)}… (${text.length} chars)` : text });
  }

  /** Routes one received message: an answer to its waiter, anything else to notifications. */
  protected receive(message: JsonRpcMessage): void {
    const isAnswer = 'result' in message || 'error' in message;
    if (!isAnswer) {
      this.notifications.push(message);
      return;
    }
    const key = JSON.stringify(message.id ?? null);
    const waiter = this.waiting.get(key);
    if (waiter) {
      this.waiting.delete(key);
      waiter(message);
    } else this.unclaimed.set(key, message);
  }

  protected closedNow(): void {
    for (const listener of [...this.closeListeners]) listener();
  }

  abstract alive(): boolean;

  waitFor(id: number | string | null, timeoutMs: number, status?: () => number | undefined): Promise<Reply> {
    const key = JSON.stringify(id);
    const ready = this.unclaimed.get(key);
    if (ready) {
      this.unclaimed.delete(key);
      return Promise.resolve({ message: ready, timedOut: false, closed: false, status: status?.() });
    }
    if (this.stop?.aborted) return Promise.reject(new PeerStopped(this.stop.reason));
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer);
        this.waiting.delete(key);
        this.closeListeners.delete(onClose);
        this.stop?.removeEventListener('abort', onStop);
      };
      const finish = (reply: Reply): void => {
        settle();
        resolve({ ...reply, status: status?.() });
      };
      const onClose = (): void => finish({ timedOut: false, closed: true });
      // Stopped runs end their waits now: a timeout here would read as the server's hang.
      const onStop = (): void => {
        settle();
        reject(new PeerStopped(this.stop?.reason));
      };
      const timer = setTimeout(() => finish({ timedOut: true, closed: false }), timeoutMs);
      this.waiting.set(key, (message) => finish({ message, timedOut: false, closed: false }));
      this.closeListeners.add(onClose);
      this.stop?.addEventListener('abort', onStop, { once: true });
      if (!this.alive()) onClose();
    });
  }
}

class StdioPeer extends BasePeer implements Peer {
  private readonly child: ChildProcessWithoutNullStreams;
  private exited = false;
  private stderr = '';
  private partial = '';
  private spawnError: string | undefined;
  private readonly exitedPromise: Promise<void>;

  constructor(
    readonly target: StdioTarget,
    stop?: AbortSignal,
  ) {
    super(stop);
    // Its own process group, so that close() also reaps what the command spawned (npx, sh -c …).
    this.child = spawn(target.command, target.args, {
      cwd: target.cwd,
      env: { ...process.env, ...target.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: OWN_GROUP,
    });
    this.exitedPromise = new Promise((resolve) => {
      const done = (why: string): void => {
        if (this.exited) return;
        this.exited = true;
        this.note('!', why);
        // The exit listener stays until close() has reaped the rest of the group.
        this.closedNow();
        resolve();
      };
      this.child.once('exit', (code, signal) => done(`process exited (code ${String(code)}, signal ${String(signal)})`));
      this.child.once('error', (error) => {
        if (this.child.pid === undefined) this.spawnError = error.message;
        done(`process could not run: ${error.message}`);
      });
    });
    process.on('exit', this.killOnExit);
    this.child.stdin.on('error', () => undefined);
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-8000);
    });
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.partial += chunk.toString('utf8');
      const lines = this.partial.split('\n');
      this.partial = lines.pop() ?? '';
      for (const raw of lines) this.line(raw.replace(/\r$/, ''));
    });
  }

  private readonly killOnExit = (): void => {
    this.killGroup('SIGKILL');
  };

  /** Signals the command's process group (process-group.ts); false when nothing of it is left. */
  private killGroup(signal: NodeJS.Signals | 0): boolean {
    return signalGroup(this.child, signal);
  }

  /** Waits until nothing of the group runs (zombies aside), or \`ms\` passed; true when nothing runs. */
  private async groupGone(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    await within(this.exitedPromise, ms);
    return groupGone(this.child, Math.max(0, end - Date.now()));
  }

  private line(text: string): void {
    if (text.trim() === '') return;
    this.note('<', text);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.pollution.push(text);
      return;
    }
    if (!message || typeof message !== 'object' || (message as JsonRpcMessage).jsonrpc !== '2.0') {
      this.pollution.push(text);
      return;
    }
    this.receive(message as JsonRpcMessage);
  }

  private write(text: string): void {
    this.note('>', text);
    if (!this.exited) this.child.stdin.write(text + '\n');
  }

  alive(): boolean {
    return !this.exited;
  }

  sessionId(): undefined {
    return undefined;
  }

  stderrTail(): string {
    return this.stderr;
  }

  startError(): string | undefined {
    return this.spawnError;
  }

  async request(method: string, params: unknown, timeoutMs: number, id: number | string = this.nextId++): Promise<Reply> {
    this.throwIfStopped();
    this.write(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
    return this.waitFor(id, timeoutMs);
  }

  async notify(method: string, params?: unknown): Promise<void> {
    this.throwIfStopped();
    this.write(JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }));
  }

  async sendRaw(text: string, timeoutMs: number, awaitId: number | string | null = null): Promise<Reply> {
    this.throwIfStopped();
    this.write(text);
    return this.waitFor(awaitId, timeoutMs);
  }

  /**
   * End stdin (the polite way to stop a stdio server), then SIGTERM, then SIGKILL the group —
   * also when the command itself already exited, for what it started. The polite waits last
   * until options.deadline at most; SIGTERM always gets STOP_GRACE_MS.
   */
  async close(options: CloseOptions = {}): Promise<void> {
    if (this.reaped) return this.reaped;
    this.reaped = this.reap(options.deadline).finally(() => process.off('exit', this.killOnExit));
    return this.reaped;
  }

  private reaped: Promise<void> | undefined;

  private async reap(deadline: number | undefined): Promise<void> {
    if (!this.exited) this.child.stdin.end();
    if (await this.groupGone(until(deadline, POLITE_GRACE_MS))) return;
    this.killGroup('SIGTERM');
    if (await this.groupGone(Math.max(STOP_GRACE_MS, until(deadline, POLITE_GRACE_MS)))) return;
    this.killGroup('SIGKILL');
    await this.groupGone(3000);
  }
}

/** Waits for \`promise\`, or \`ms\` at most; the timer goes either way. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export interface RawHttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  messages: JsonRpcMessage[];
  body: string;
  /** The request failed on the connection (refused, reset) rather than timing out: its error code. */
  connectionError?: string;
}

/** One POST with the given headers (the probe's defaults overridable, `undefined` drops one). */
export function postRaw(
  url: string,
  body: string,
  headers: Record<string, string | undefined>,
  timeoutMs: number,
  onMessage?: (message: JsonRpcMessage) => void,
  method = 'POST',
  signal?: AbortSignal,
): Promise<RawHttpResponse> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const finalHeaders: Record<string, string> = {};
  const merged: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...headers,
  };
  for (const [name, value] of Object.entries(merged)) if (value !== undefined) finalHeaders[name] = value;
  return new Promise((resolve) => {
    const messages: JsonRpcMessage[] = [];
    let text = '';
    let settled = false;
    const finish = (status: number, responseHeaders: IncomingHttpHeaders, connectionError?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve({ status, headers: responseHeaders, messages, body: text.slice(0, 64_000), ...(connectionError ? { connectionError } : {}) });
    };
    // agent: false — a connection per request, closed with it: none is left in Node's global
    // keep-alive pool after the run (the probe's sockets end with its requests).
    const req = send(target, { method, headers: finalHeaders, agent: false }, (res) => {
      res.setEncoding('utf8');
      const sse = String(res.headers['content-type'] ?? '').includes('text/event-stream');
      let pending = '';
      const deliver = (json: string): void => {
        try {
          const parsed = JSON.parse(json) as JsonRpcMessage | JsonRpcMessage[];
          for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
            messages.push(m);
            onMessage?.(m);
          }
        } catch {
          // not JSON: kept in the body for the transcript
        }
      };
      res.on('data', (chunk: string) => {
        text += chunk;
        if (!sse) return;
        pending += chunk;
        let cut: number;
        while ((cut = pending.search(/\r?\n\r?\n/)) !== -1) {
          const event = pending.slice(0, cut);
          pending = pending.slice(cut).replace(/^\r?\n\r?\n/, '');
          const data = event
            .split(/\r?\n/)
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, ''))
            .join('\n');
          if (data) deliver(data);
        }
      });
      res.on('end', () => {
        if (!sse && text.trim()) deliver(text);
        finish(res.statusCode ?? 0, res.headers);
      });
      res.on('error', () => finish(res.statusCode ?? 0, res.headers));
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish(0, {});
    }, timeoutMs);
    // A stopped run cuts its requests at once: the socket goes with them.
    const onAbort = (): void => {
      req.destroy();
      finish(0, {}, 'stopped');
    };
    req.on('error', (error: NodeJS.ErrnoException) => finish(0, {}, error.code ?? 'error'));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    req.end(body);
  });
}

class HttpPeer extends BasePeer implements Peer {
  private session: string | undefined;
  private protocolVersion: string | undefined;
  private lastStatus: number | undefined;
  private closed = false;
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    readonly target: HttpTarget,
    stop?: AbortSignal,
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

  /** POSTs one message; answers are routed as they stream in. */
  private post(text: string, timeoutMs: number): Promise<RawHttpResponse> {
    this.note('>', text);
    const headers: Record<string, string | undefined> = {};
    if (this.target.token) headers.authorization = `Bearer ${this.target.token}`;
    if (this.session) headers['mcp-session-id'] = this.session;
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    const sent = postRaw(this.target.url, text, headers, timeoutMs, (message) => {
      this.note('<', JSON.stringify(message));
      if (message.id !== undefined && (message.result as { protocolVersion?: unknown } | undefined)?.protocolVersion) {
        this.protocolVersion = String((message.result as { protocolVersion: unknown }).protocolVersion);
      }
      this.receive(message);
    }, 'POST', this.stop).then((response) => {
      const session = response.headers['mcp-session-id'];
      if (typeof session === 'string' && !this.session) this.session = session;
      this.lastStatus = response.status;
      if (response.connectionError) this.note('!', `HTTP request failed: ${response.connectionError}`);
      else if (response.status === 0) this.note('!', 'HTTP request timed out');
      else if (response.status >= 300 || response.messages.length === 0) {
        this.note('!', `HTTP ${response.status}${response.messages.length === 0 && response.body ? ` ${response.body.slice(0, 300)}` : ''}`);
      }
      return response;
    });
    this.inflight.add(sent);
    void sent.finally(() => this.inflight.delete(sent));
    return sent;
  }

  async request(method: string, params: unknown, timeoutMs: number, id: number | string = this.nextId++): Promise<Reply> {
    this.throwIfStopped();
    const text = JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    const answered = this.waitFor(id, timeoutMs, () => this.lastStatus);
    answered.catch(() => undefined); // a stop rejects it; the race below or the return reports that
    const response = await Promise.race([this.post(text, timeoutMs), answered.then(() => undefined)]);
    this.throwIfStopped();
    // The connection failed (refused, reset: the server went away) is not the same as no answer in time.
    if (response?.connectionError) return { timedOut: false, closed: true, status: 0 };
    if (response && response.status === 0) return { timedOut: true, closed: false, status: 0 };
    if (response && response.messages.every((m) => JSON.stringify(m.id) !== JSON.stringify(id))) {
      // The POST ended without our answer (an HTTP error with a body that is not ours, say).
      return Promise.race([answered, new Promise<Reply>((r) => setTimeout(() => r({ timedOut: false, closed: true, status: response.status }), 50).unref())]);
    }
    return answered;
  }

  async notify(method: string, params?: unknown): Promise<void> {
    this.throwIfStopped();
    await this.post(JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }), 5000);
    this.throwIfStopped();
  }

  async sendRaw(text: string, timeoutMs: number, awaitId: number | string | null = null): Promise<Reply> {
    this.throwIfStopped();
    const response = await this.post(text, timeoutMs);
    this.throwIfStopped();
    const message = response.messages.find((m) => JSON.stringify(m.id ?? null) === JSON.stringify(awaitId));
    return { message, timedOut: response.status === 0 && !response.connectionError, closed: response.connectionError !== undefined, status: response.status };
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
      await postRaw(this.target.url, '', headers, grace(), undefined, 'DELETE');
    }
    this.closedNow();
    await within(Promise.allSettled([...this.inflight]), grace());
  }
}
