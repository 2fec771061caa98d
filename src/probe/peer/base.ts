/**
 * What every probe peer shares, whatever carries its messages: the transcript (each line tagged
 * with the request it belongs to, so an excerpt shows one call's lines and no other's), routing of
 * answers to their waiters, waits that progress extends, and the bounded reading of what the
 * server sends (readJson: size and nesting checked before parsing).
 */
import { DEFAULT_MAX_JSON_DEPTH, isMessageObject, readJson, type JsonRpcMessage } from '../../jsonrpc/message.js';
import { PEER_BOUNDS } from '../limits.js';

export type { JsonRpcMessage };

export interface TranscriptLine {
  /** '>' sent by the probe, '<' received from the server, '!' an observation (exit, HTTP status, a bound). */
  dir: '>' | '<' | '!';
  text: string;
  /** The request the line belongs to (its id as JSON text), when known. */
  ref?: string;
}

export interface Reply {
  /** The id of the request this answers (or would have). */
  id: number | string | null;
  message?: JsonRpcMessage;
  /** No answer within the bound. */
  timedOut: boolean;
  /** The connection or process went away before an answer. */
  closed: boolean;
  /** HTTP only: the status of the POST that carried the request. */
  status?: number;
  /** An answer came but could not be read (invalid JSON, too deep, too large): why. */
  unreadable?: string;
  /** Progress notifications received for the request's progress token. */
  progress: number;
  /** From sending the request to its answer (or to giving up on it). */
  ms: number;
}

/** A message from the server that could not be read, kept for the PROTO check that reports them. */
export interface UnreadableMessage {
  problem: string;
  /** The request it answered, when that could be told. */
  ref?: string;
  /** Its first characters, as the transcript shows them. */
  excerpt: string;
  /** invalid: not JSON at all; bound: valid for all we know, but over a bound of the probe. */
  kind: 'invalid' | 'bound';
}

export type StdioTarget = {
  kind: 'stdio';
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** The argument that named command, for consent and its refusals (default `command`). */
  argument?: string;
};
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

export interface RequestOptions {
  /** The request's id (default: the next number). */
  id?: number | string;
  /** Sent as params._meta.progressToken; each progress notification on it restarts the wait. */
  progressToken?: string;
  /** The longest the wait may last however much progress arrives (default: the timeout). */
  maxMs?: number;
}

/** How close() may take: until `deadline` (epoch ms) for the polite steps, then a short grace. */
export interface CloseOptions {
  deadline?: number;
}

export interface Peer {
  readonly target: Target;
  readonly transcript: readonly TranscriptLine[];
  /** Notifications (and server requests) received so far (the first PEER_BOUNDS.notifications of them). */
  readonly notifications: readonly JsonRpcMessage[];
  /** stdio: lines on stdout that were not JSON-RPC (the first few), and how many there were. */
  readonly pollution: readonly string[];
  pollutionCount(): number;
  /** Messages that could not be read (the first few). */
  readonly unreadable: readonly UnreadableMessage[];
  /** Sends a request and waits for its answer. */
  request(method: string, params: unknown, timeoutMs: number, options?: RequestOptions): Promise<Reply>;
  /** Sends a notification. */
  notify(method: string, params?: unknown): Promise<void>;
  /** Sends raw text as one message (stdio: one line; HTTP: one POST body) and waits for the answer with `awaitId`. */
  sendRaw(text: string, timeoutMs: number, awaitId?: number | string | null): Promise<Reply>;
  /** Waits for an answer to an already sent id (after a cancel, say): progress restarts the wait, up to maxMs. */
  waitFor(id: number | string | null, timeoutMs: number, options?: { maxMs?: number }): Promise<Reply>;
  /** Gives up on request `id` for good (HTTP: cuts the POST that carries its answer). */
  abandon(id: number | string | null): void;
  /** The transcript lines since `from` that belong to request `id` (and the observations among them). */
  excerpt(from: number, id: number | string | null): TranscriptLine[];
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
export async function handshake(
  peer: Peer,
  timeoutMs: number,
  protocolVersion = PROBE_PROTOCOL_VERSION,
): Promise<Reply> {
  const reply = await peer.request(
    'initialize',
    { protocolVersion, capabilities: {}, clientInfo: { name: 'faultline-probe', version: '1' } },
    timeoutMs,
  );
  if (reply.message?.result) await peer.notify('notifications/initialized');
  return reply;
}

export const refOf = (id: unknown): string => JSON.stringify(id ?? null);

const ID_IN_TEXT = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})/;

interface Waiter {
  deliver(reply: Partial<Reply>): void;
  progress(): void;
}

/** Milliseconds until `deadline`, capped at `max` (max itself without a deadline). */
export function until(deadline: number | undefined, max: number): number {
  return deadline === undefined ? max : Math.max(0, Math.min(max, deadline - Date.now()));
}

/** Waits for `promise`, or `ms` at most; the timer goes either way. */
export async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export abstract class BasePeer {
  readonly transcript: TranscriptLine[] = [];
  readonly notifications: JsonRpcMessage[] = [];
  readonly pollution: string[] = [];
  readonly unreadable: UnreadableMessage[] = [];
  private pollutionSeen = 0;
  protected nextId = 1;
  private readonly waiting = new Map<string, Waiter>();
  private readonly unclaimed = new Map<string, Partial<Reply>>();
  /** Progress token → the ref of the request that carried it. */
  private readonly tokens = new Map<string, string>();
  private readonly progressSeen = new Map<string, number>();
  private readonly closeListeners = new Set<() => void>();

  constructor(protected readonly stop: AbortSignal | undefined) {}

  abstract alive(): boolean;
  /** Sends one message's text (used to answer the server's own requests). */
  protected abstract sendText(text: string, ref?: string): void;

  /** Throws PeerStopped when the run was stopped: nothing more is sent once it is. */
  protected throwIfStopped(): void {
    if (this.stop?.aborted) throw new PeerStopped(this.stop.reason);
  }

  pollutionCount(): number {
    return this.pollutionSeen;
  }

  protected note(dir: TranscriptLine['dir'], text: string, ref?: string): void {
    if (this.transcript.length >= PEER_BOUNDS.transcriptLines) return;
    const limit = PEER_BOUNDS.transcriptChars;
    this.transcript.push({
      dir,
      text: text.length > limit ? `${text.slice(0, limit)}… (${text.length} chars)` : text,
      ...(ref !== undefined ? { ref } : {}),
    });
  }

  abandon(_id: number | string | null): void {
    // Over stdio nothing carries an answer but the one stream: nothing to cut.
  }

  excerpt(from: number, id: number | string | null): TranscriptLine[] {
    const ref = refOf(id);
    return this.transcript
      .slice(from)
      .filter((line) => line.ref === ref || (line.ref === undefined && line.dir === '!'));
  }

  protected polluted(text: string): void {
    this.pollutionSeen++;
    if (this.pollution.length < PEER_BOUNDS.keptProblems)
      this.pollution.push(
        text.length > PEER_BOUNDS.transcriptChars ? `${text.slice(0, PEER_BOUNDS.transcriptChars)}…` : text,
      );
  }

  /** The ref of the only request waiting, when exactly one is: an unreadable answer is most likely its. */
  private onlyWaiting(): string | undefined {
    return this.waiting.size === 1 ? [...this.waiting.keys()][0] : undefined;
  }

  /**
   * An answer that could not be read: noted, kept for the report, and handed to the request it
   * answered (named by an id found in its text, else the only request waiting) so that the check
   * sees "unreadable", not a hang.
   */
  protected unreadableMessage(problem: string, kind: UnreadableMessage['kind'], text: string, ref?: string): void {
    const found = ID_IN_TEXT.exec(text.slice(0, 400))?.[1] ?? ID_IN_TEXT.exec(text.slice(-400))?.[1];
    const owner = ref ?? (found !== undefined && this.waiting.has(found) ? found : this.onlyWaiting());
    this.note('!', `unreadable message from the server: ${problem}`, owner);
    if (this.unreadable.length < PEER_BOUNDS.keptProblems) {
      this.unreadable.push({
        problem,
        kind,
        excerpt: text.slice(0, 300),
        ...(owner !== undefined ? { ref: owner } : {}),
      });
    }
    if (owner !== undefined) this.settle(owner, { unreadable: problem });
  }

  /** Reads one message's text (a line, an HTTP body, an SSE event's data) within the bounds and routes it. */
  protected receiveText(text: string, ref?: string): void {
    const reading = readJson(text, { maxChars: PEER_BOUNDS.messageBytes, maxDepth: DEFAULT_MAX_JSON_DEPTH });
    if (!reading.ok) {
      this.note('<', text, ref);
      this.unreadableMessage(
        reading.problem,
        reading.problem.startsWith('invalid JSON') ? 'invalid' : 'bound',
        text,
        ref,
      );
      return;
    }
    const messages = Array.isArray(reading.value) ? reading.value : [reading.value];
    for (const message of messages) {
      if (!isMessageObject(message) || message.jsonrpc !== '2.0') {
        this.foreign(text, ref);
        continue;
      }
      this.receive(message, messages.length === 1 ? text : JSON.stringify(message));
    }
  }

  /** JSON that is not a JSON-RPC 2.0 message. */
  protected foreign(text: string, ref?: string): void {
    this.note('<', text, ref);
    this.unreadableMessage('not a JSON-RPC 2.0 message', 'invalid', text, ref);
  }

  /** Routes one received message: an answer to its waiter, anything else to notifications. */
  private receive(message: JsonRpcMessage, text: string): void {
    const isAnswer = 'result' in message || 'error' in message;
    if (isAnswer) {
      const ref = refOf(message.id);
      this.note('<', text, ref);
      this.settle(ref, { message });
      return;
    }
    const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken;
    const owner =
      message.method === 'notifications/progress' && token !== undefined ? this.tokens.get(String(token)) : undefined;
    this.note('<', text, owner);
    if (owner !== undefined) {
      this.progressSeen.set(owner, (this.progressSeen.get(owner) ?? 0) + 1);
      this.waiting.get(owner)?.progress();
    }
    if (this.notifications.length < PEER_BOUNDS.notifications) this.notifications.push(message);
    if (message.id !== undefined && message.id !== null && typeof message.method === 'string')
      this.answerServerRequest(message);
  }

  /** A request from the server: ping is answered, as any client must; anything else is declined. */
  private answerServerRequest(message: JsonRpcMessage): void {
    const answer =
      message.method === 'ping'
        ? { jsonrpc: '2.0', id: message.id, result: {} }
        : {
            jsonrpc: '2.0',
            id: message.id,
            error: { code: -32601, message: `the probe does not offer ${String(message.method)}` },
          };
    this.sendText(JSON.stringify(answer));
  }

  private settle(ref: string, reply: Partial<Reply>): void {
    const waiter = this.waiting.get(ref);
    if (waiter) waiter.deliver(reply);
    else if (this.unclaimed.size < PEER_BOUNDS.notifications) this.unclaimed.set(ref, reply);
  }

  protected closedNow(): void {
    for (const listener of [...this.closeListeners]) listener();
  }

  /**
   * The id and text of a request, its progress token (if any) in `_meta`; remembers which request
   * the token belongs to before the request is sent.
   */
  protected requestText(
    method: string,
    params: unknown,
    options: RequestOptions,
  ): { id: number | string; text: string } {
    const id = options.id ?? this.nextId++;
    const token = options.progressToken;
    if (token !== undefined) this.tokens.set(token, refOf(id));
    const withToken = token === undefined ? params : { ...(params as object), _meta: { progressToken: token } };
    return {
      id,
      text: JSON.stringify({ jsonrpc: '2.0', id, method, ...(withToken === undefined ? {} : { params: withToken }) }),
    };
  }

  /**
   * Waits for the answer to `id`: until `timeoutMs` passed without an answer — restarted by each
   * progress notification for the request — and never past `maxMs` from now.
   */
  waitFor(
    id: number | string | null,
    timeoutMs: number,
    options: { maxMs?: number; status?: () => number | undefined } = {},
  ): Promise<Reply> {
    const ref = refOf(id);
    const started = Date.now();
    const progress = (): number => this.progressSeen.get(ref) ?? 0;
    const ready = this.unclaimed.get(ref);
    if (ready) {
      this.unclaimed.delete(ref);
      return Promise.resolve({
        id,
        timedOut: false,
        closed: false,
        ...ready,
        progress: progress(),
        ms: 0,
        status: options.status?.(),
      });
    }
    if (this.stop?.aborted) return Promise.reject(new PeerStopped(this.stop.reason));
    const end = started + Math.max(timeoutMs, options.maxMs ?? timeoutMs);
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer);
        this.waiting.delete(ref);
        this.closeListeners.delete(onClose);
        this.stop?.removeEventListener('abort', onStop);
      };
      const finish = (reply: Partial<Reply>): void => {
        settle();
        resolve({
          id,
          timedOut: false,
          closed: false,
          ...reply,
          progress: progress(),
          ms: Date.now() - started,
          status: options.status?.(),
        });
      };
      const onClose = (): void => finish({ closed: true });
      // Stopped runs end their waits now: a timeout here would read as the server's hang.
      const onStop = (): void => {
        settle();
        reject(new PeerStopped(this.stop?.reason));
      };
      const arm = (): NodeJS.Timeout =>
        setTimeout(() => finish({ timedOut: true }), Math.max(0, Math.min(timeoutMs, end - Date.now())));
      let timer = arm();
      this.waiting.set(ref, {
        deliver: finish,
        progress: () => {
          clearTimeout(timer);
          timer = arm();
        },
      });
      this.closeListeners.add(onClose);
      this.stop?.addEventListener('abort', onStop, { once: true });
      if (!this.alive()) onClose();
    });
  }
}
