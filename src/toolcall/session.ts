/**
 * The transport-agnostic relay both proxies drive: JSON-RPC messages in from the client and from
 * the server, the plan applied to tools/call and tools/list, the journal written.
 *
 *   client ─fromClient()─▶ [decide · wait for slots · delay · answer here · hang · forward] ─toServer─▶ server
 *   client ◀─toClient──── [mutate · delay · filter tools/list · record]  ◀─fromServer()─ server
 *
 * A ToolPlane is one plan against one upstream server (shared by all sessions of an HTTP proxy);
 * a PlaneSession is one client connection's pending requests, bounded by maxPending (the oldest is
 * evicted and counted). Fail-safe by default: an internal error forwards the original message and
 * is counted; strict mode answers the client with a JSON-RPC error instead (fails closed).
 *
 * Messages arrive as text (fromClientText, fromServerText) and are read within the plane's bounds
 * (size and JSON nesting) before anything parses, clones or serialises them. A message beyond
 * them is not ours to rewrite: fail-safe passes it on as it came, strict answers the request it
 * belongs to (found by its id, without parsing) with a JSON-RPC error. Either way the plane never
 * recurses into it, so no message can overflow the stack.
 */
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import {
  DEFAULT_MAX_JSON_DEPTH,
  isMessageObject,
  jsonDepthExceeds,
  readJson,
  type JsonLimits,
  type JsonRpcMessage,
} from '../jsonrpc/message.js';
import { peekId, type MessageId } from '../jsonrpc/peek-id.js';
import type { Random } from '../kernel/random.js';
import { FaultEngine, type Decision } from './faults.js';
import { applyMutations, sameMeaning, type ToolResult } from './mutate.js';
import { computeSlis, type CallRecord, type Outcome, type Slis, type UpstreamFailure } from './metrics.js';
import type { Plan } from './plan.js';
import type { SlotWait } from './slots.js';
import { UpstreamHealth } from './upstream-health.js';

export type { JsonRpcMessage };
export type Sink = (message: JsonRpcMessage) => void;
/** Passes a message on exactly as it came (text the plane would not read). */
export type RawSink = (text: string) => void;

export interface PlaneOptions {
  strict?: boolean;
  maxPending?: number;
  /** Overrides the plan's task_idle_ms. */
  taskIdleMs?: number;
  /** Largest message read from either side, in characters (default DEFAULT_MAX_MESSAGE_CHARS). */
  maxMessageChars?: number;
  /** The fault decisions' random source (default: faultline's own stream for the plan's seed). */
  random?: Random;
  /** Called with every journal record as it is written. */
  onRecord?: (record: CallRecord) => void;
  now?: () => number;
}

interface ToolInfo {
  /** Compiled from outputSchema at the first result it checks (validatorOf); null when the schema is invalid. */
  validate?: ValidateFunction | null;
  outputSchema?: Record<string, unknown>;
  unsafeRetry: boolean;
}

/** Attempts kept in memory for the SLIs; older ones are only in the journal file. */
export const MAX_RECORDS = 100_000;

/** Largest message either side may send through a proxy: above the largest fault-made result (oversized, 16 MiB). */
export const DEFAULT_MAX_MESSAGE_CHARS = 32 * 1024 * 1024;

/** Meta keys a client may use to mark which task a call belongs to. */
export const TASK_META_KEYS = ['task_id', 'faultline/task'];

export class ToolPlane {
  readonly engine: FaultEngine;
  readonly records: CallRecord[] = [];
  readonly strict: boolean;
  readonly maxPending: number;
  /** Bounds on one message read from the client or the server. */
  readonly limits: JsonLimits;
  internalErrors = 0;
  evicted = 0;
  readonly upstream = new UpstreamHealth();
  private readonly tools = new Map<string, ToolInfo>();
  /** Loaded with the first schema to compile (validatorOf). */
  private ajv: Ajv | undefined;
  private readonly taskIdleMs: number;
  private lastCallAt = -Infinity;
  private idleTask = 0;
  private seq = 0;
  private readonly lastByKey = new Map<string, CallRecord>();
  readonly now: () => number;

  constructor(
    readonly plan: Plan,
    private readonly options: PlaneOptions = {},
  ) {
    this.engine = new FaultEngine(plan, options.random ? { random: options.random } : {});
    this.strict = options.strict ?? false;
    this.maxPending = options.maxPending ?? 1024;
    this.limits = { maxChars: options.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS, maxDepth: DEFAULT_MAX_JSON_DEPTH };
    this.taskIdleMs = options.taskIdleMs ?? plan.task_idle_ms;
    this.now = options.now ?? (() => performance.now());
  }

  session(): PlaneSession {
    return new PlaneSession(this);
  }

  slis(): Slis {
    return computeSlis(this.records, {
      internal_errors: this.internalErrors,
      evicted: this.evicted,
      upstream_failure: this.upstream.failure,
    });
  }

  /** Set when the upstream server exited on its own or could not be reached (see UpstreamFailure). */
  get upstreamFailure(): UpstreamFailure | undefined {
    return this.upstream.failure;
  }

  /** The stdio server ended although nobody stopped it. */
  upstreamExited(exitCode: number | null, signal: string | null): void {
    this.upstream.exited(exitCode, signal, this.seq);
  }

  /** The HTTP upstream refused or dropped a request (see UpstreamHealth.unreachable). */
  upstreamUnreachable(error: string): void {
    this.upstream.unreachable(error, this.seq);
  }

  /** The HTTP upstream answered; `toolCalls` tool-call attempts went with the request. */
  upstreamReached(toolCalls = 0): void {
    this.upstream.reached(toolCalls);
  }

  countUnanswered(): void {
    this.upstream.countUnanswered();
  }

  /** Learns outputSchemas and annotations from a tools/list result; returns the client's view. */
  learnTools(
    tools: Array<{ name: string; outputSchema?: Record<string, unknown>; annotations?: Record<string, unknown> }>,
  ): typeof tools {
    for (const tool of tools) {
      const a = tool.annotations ?? {};
      this.tools.set(tool.name, {
        outputSchema: tool.outputSchema,
        unsafeRetry: a.destructiveHint === true || a.idempotentHint === false,
      });
    }
    return this.engine.listView(tools);
  }

  /** The tool names the server's tools/list has shown so far (before the plan hid or added any). */
  serverToolNames(): string[] {
    return [...this.tools.keys()];
  }

  unsafeRetry(tool: string): boolean {
    return this.tools.get(tool)?.unsafeRetry ?? false;
  }

  outputSchemaOf(tool: string): Record<string, unknown> | undefined {
    return this.tools.get(tool)?.outputSchema;
  }

  /** The task of a call: the client's `_meta` task id, else a new task after an idle gap. */
  taskOf(meta: Record<string, unknown> | undefined): string {
    for (const key of TASK_META_KEYS) {
      const value = meta?.[key];
      if (typeof value === 'string' || typeof value === 'number') return String(value);
    }
    const now = this.now();
    if (now - this.lastCallAt > this.taskIdleMs) this.idleTask += 1;
    this.lastCallAt = now;
    return `task-${this.idleTask}`;
  }

  deadlineOf(tool: string): number {
    return Object.hasOwn(this.plan.deadlines, tool) ? this.plan.deadlines[tool]! : this.plan.deadline_ms;
  }

  /** Numbers the attempt: a repeat of a failed call (same task, tool, arguments) is a retry. */
  attemptOf(task: string, tool: string, args: unknown): { seq: number; logical: number; attempt: number; key: string } {
    const key = `${task}\u0000${tool}\u0000${JSON.stringify(args ?? {})}`;
    const seq = ++this.seq;
    const previous = this.lastByKey.get(key);
    if (previous && !previous.success) return { seq, logical: previous.logical, attempt: previous.attempt + 1, key };
    if (this.lastByKey.size > 10_000) this.lastByKey.clear(); // bounded; losing retry links is the cheap failure
    return { seq, logical: seq, attempt: 1, key };
  }

  record(key: string, record: CallRecord): void {
    // Bounded: a long-running proxy keeps the most recent MAX_RECORDS attempts (the journal file keeps all).
    if (this.records.length >= MAX_RECORDS) this.records.splice(0, this.records.length - MAX_RECORDS + 1);
    this.records.push(record);
    this.lastByKey.set(key, record);
    this.options.onRecord?.(record);
  }

  /** Classifies an answer (or its absence) into the journal's outcome and SLI flags. */
  classify(
    tool: string,
    answer: JsonRpcMessage | undefined,
    mutated: boolean,
  ): Pick<CallRecord, 'outcome' | 'error_shape' | 'responded' | 'schema_ok' | 'correct'> {
    if (!answer) return { outcome: 'no_answer', error_shape: null, responded: false, schema_ok: true, correct: false };
    if (answer.error)
      return { outcome: 'jsonrpc_error', error_shape: 'jsonrpc', responded: false, schema_ok: true, correct: false };
    const result = (answer.result ?? {}) as ToolResult;
    if (result.isError)
      return { outcome: 'is_error', error_shape: 'is_error', responded: true, schema_ok: true, correct: false };
    const validate = this.validatorOf(tool);
    const schemaOk = validate
      ? result.structuredContent !== undefined && validate(result.structuredContent) === true
      : true;
    return { outcome: 'ok', error_shape: null, responded: true, schema_ok: schemaOk, correct: schemaOk && !mutated };
  }

  /**
   * The tool's declared outputSchema, compiled when a result first needs it: a server lists tens of tools, a session
   * calls a few, and ajv's first compile (its meta-schema, ~0.1 s) and loading (~0.1 s) were paid at every proxy
   * start, before the client's tools/list was answered. Undefined when the tool declared none, or an invalid one.
   */
  private validatorOf(tool: string): ValidateFunction | undefined {
    const info = this.tools.get(tool);
    if (!info?.outputSchema) return undefined;
    if (info.validate === undefined) {
      const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
      this.ajv ??= new Ajv({ strict: false, allErrors: false });
      try {
        info.validate = this.ajv.compile(info.outputSchema);
      } catch {
        info.validate = null; // an invalid declared schema cannot be checked against
      }
    }
    return info.validate ?? undefined;
  }

  /** A message's text beyond the bounds (too long or nested too deep): why, or undefined when it is within them. */
  beyondBounds(text: string): string | undefined {
    if (text.length > this.limits.maxChars)
      return `a message of ${text.length} characters, above the ${this.limits.maxChars} accepted`;
    if (jsonDepthExceeds(text, this.limits.maxDepth)) return `JSON nested deeper than ${this.limits.maxDepth} levels`;
    return undefined;
  }
}

interface Pending {
  id: string | number;
  kind: 'call' | 'list';
  tool: string;
  task: string;
  args: unknown;
  startedAt: number;
  /** When the call went to the server (after any wait for a slot). */
  forwardedAt?: number;
  /** Time spent waiting for head-of-line slots. */
  queuedMs: number;
  /** The head-of-line slots held (or waited for); released when the call ends. */
  slots: SlotWait[];
  decision?: Decision;
  toClient: Sink;
  cancelled: boolean;
  wake?: () => void;
  finished: boolean;
  recorded: boolean;
}

export class PlaneSession {
  private readonly pending = new Map<string, Pending>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(readonly plane: ToolPlane) {}

  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * A message from the client, as text. Read within the plane's bounds, then as fromClient; text
   * that is not a JSON-RPC message object (invalid JSON, a batch over stdio) goes on unread.
   */
  async fromClientText(text: string, toServer: Sink, toClient: Sink, toServerRaw: RawSink): Promise<void> {
    const read = readJson(text, this.plane.limits);
    if (read.ok && isMessageObject(read.value)) return this.fromClient(read.value, toServer, toClient);
    const beyond = read.ok ? undefined : this.plane.beyondBounds(text);
    if (beyond !== undefined) return this.clientUnreadable(peekId(text), beyond, () => toServerRaw(text), toClient);
    return toServerRaw(text); // not a message object (invalid JSON, a batch): not ours to judge, the server answers it
  }

  /** A message from the server, as text; the counterpart of fromClientText. */
  async fromServerText(text: string, toClient: Sink, toClientRaw: RawSink): Promise<void> {
    const read = readJson(text, this.plane.limits);
    if (read.ok && isMessageObject(read.value)) return this.fromServer(read.value, toClient);
    const beyond = read.ok ? undefined : this.plane.beyondBounds(text);
    if (beyond !== undefined) return this.serverUnreadable(peekId(text), beyond, () => toClientRaw(text));
    return toClientRaw(text);
  }

  /**
   * A message from the client the plane would not read (`problem` says why); `id` is its id when
   * one was found. Fail-safe: it goes on to the server as it came (`forward`), untracked.
   * Strict: a request is answered with a JSON-RPC error instead, and nothing goes on.
   */
  clientUnreadable(id: MessageId | undefined, problem: string, forward: () => void, toClient: Sink): void {
    this.plane.internalErrors += 1;
    if (!this.plane.strict) return forward();
    if (id !== undefined && id !== null)
      toClient(internalError(id, new Error(`the request could not be read: ${problem}`)));
  }

  /**
   * A message from the server the plane would not read (`problem` says why); `id` is its id when
   * one was found. Fail-safe: it reaches the client as it came (`forward`, when the caller has not
   * passed it on already), and a call it answers is recorded as answered, unread (the client got
   * the server's own answer, untouched by the plan). Strict: the request it answers gets a
   * JSON-RPC error instead, and the message is dropped.
   */
  serverUnreadable(id: MessageId | undefined, problem: string, forward?: () => void): void {
    this.plane.internalErrors += 1;
    const key = id === undefined || id === null ? undefined : String(id);
    const pending = key === undefined ? undefined : this.pending.get(key);
    if (!this.plane.strict) forward?.();
    if (!pending || pending.finished) return;
    this.pending.delete(key!);
    pending.finished = true;
    if (this.plane.strict) {
      const answer = internalError(pending.id, new Error(`the server's answer could not be read: ${problem}`));
      pending.toClient(answer);
      if (pending.kind === 'call') this.recordCall(pending, answer, this.upstreamMs(pending), false);
    } else if (pending.kind === 'call')
      this.recordCall(pending, undefined, this.upstreamMs(pending), false, undefined, problem);
  }

  /** A message from the client. `toServer` forwards it (maybe later: after a wait for a slot); `toClient` answers it.
   * */
  async fromClient(message: JsonRpcMessage, toServer: Sink, toClient: Sink): Promise<void> {
    let pending: Pending | undefined;
    let forwarded = false;
    const forward: Sink = (out) => {
      forwarded = true;
      toServer(out);
    };
    try {
      if (message.method === 'tools/call' && message.id !== undefined && message.id !== null) {
        pending = this.track(message, 'call', toClient);
        await this.startCall(pending, message, forward, toClient);
        return;
      }
      if (message.method === 'tools/list' && message.id !== undefined && message.id !== null)
        this.track(message, 'list', toClient);
      if (message.method === 'notifications/cancelled')
        this.cancel(message.params?.requestId as string | number | undefined);
      forward(message);
    } catch (error) {
      this.plane.internalErrors += 1;
      if (this.plane.strict && message.id !== undefined && message.id !== null) {
        if (pending) pending.finished = true;
        toClient(internalError(message.id, error));
        if (pending) this.recordCall(pending, undefined, null, false);
      } else if (!forwarded && !pending?.finished) forward(message);
    }
  }

  /** A message from the server; answers to tracked requests go to the sink they came with. */
  async fromServer(message: JsonRpcMessage, toClient: Sink): Promise<void> {
    const key = message.id === undefined || message.id === null || message.method ? undefined : String(message.id);
    const pending = key === undefined ? undefined : this.pending.get(key);
    if (!pending) {
      toClient(message);
      return;
    }
    this.pending.delete(key!);
    const sink = pending.toClient;
    try {
      if (pending.kind === 'list') {
        const tools = message.result?.tools;
        sink(
          Array.isArray(tools)
            ? { ...message, result: { ...message.result, tools: this.plane.learnTools(tools as never) } }
            : message,
        );
        return;
      }
      await this.finishCall(pending, message);
    } catch (error) {
      this.plane.internalErrors += 1;
      if (pending.finished) return;
      pending.finished = true;
      const answer = this.plane.strict ? internalError(pending.id, error) : message;
      sink(answer);
      if (pending.kind === 'call') this.recordCall(pending, answer, this.upstreamMs(pending), false);
    }
  }

  /**
   * Stops every pending delay, hang and wait for a slot (the connection is going away). A call
   * still waiting for the upstream (which died or was cut off) will never be answered: it is
   * recorded as no_answer, as a cancelled one is, so a server that crashes mid-call counts in the SLIs.
   */
  close(): void {
    for (const pending of this.pending.values()) {
      pending.cancelled = true;
      if (pending.wake)
        pending.wake(); // a delay, hang or wait here: its own path records the call
      else if (pending.kind === 'call' && pending.decision && !pending.finished) {
        this.recordCall(pending, undefined, null, false);
        this.plane.countUnanswered(); // only when the upstream failed: it died with this call in flight
      }
    }
    this.pending.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /**
   * The upstream could not be reached with these forwarded messages: their tool calls will never
   * be answered, so they are recorded unanswered now (not left pending until the session ends,
   * which kept them out of /metrics while the client had already seen them fail).
   */
  upstreamFailed(messages: readonly JsonRpcMessage[]): void {
    for (const message of messages) {
      if (message.id === undefined || message.id === null) continue;
      const pending = this.pending.get(String(message.id));
      if (!pending || pending.wake) continue;
      this.pending.delete(String(message.id));
      pending.finished = true;
      if (pending.kind === 'call' && pending.decision) {
        this.recordCall(pending, undefined, null, false);
        this.plane.countUnanswered();
      }
    }
  }

  /**
   * These forwarded requests will get no answer from the server through this path (its answer
   * was beyond the bounds and could not be relayed): each still pending is answered with a
   * JSON-RPC error saying why, in both modes, and recorded.
   */
  failForwarded(messages: readonly JsonRpcMessage[], problem: string): void {
    for (const message of messages) {
      if (message.id === undefined || message.id === null) continue;
      const pending = this.pending.get(String(message.id));
      if (!pending || pending.wake || pending.finished) continue;
      this.pending.delete(String(message.id));
      pending.finished = true;
      const answer = internalError(pending.id, new Error(`the server's answer could not be relayed: ${problem}`));
      pending.toClient(answer);
      if (pending.kind === 'call') this.recordCall(pending, answer, this.upstreamMs(pending), false);
    }
  }

  /**
   * The client's connection carrying these requests closed before their answers (it gave up
   * without a notifications/cancelled, or that notice was lost with the connection): no answer can
   * reach it any more, so each is cancelled and recorded unanswered now, not when the session ends.
   */
  clientGone(messages: readonly JsonRpcMessage[]): void {
    for (const message of messages) {
      if (message.method === 'tools/call' && message.id !== undefined && message.id !== null) this.cancel(message.id);
    }
  }

  /** A tool call the client made after the upstream was gone, so never sent: recorded unanswered. */
  callWithoutServer(tool: string, args: unknown, meta: Record<string, unknown> | undefined): void {
    const pending: Pending = {
      ...this.newPending('', 'call', tool, args, () => undefined),
      task: this.plane.taskOf(meta),
      cancelled: true,
      finished: true,
    };
    this.recordCall(pending, undefined, null, false);
    this.plane.countUnanswered();
  }

  private newPending(id: string | number, kind: 'call' | 'list', tool: string, args: unknown, toClient: Sink): Pending {
    return {
      id,
      kind,
      tool,
      task: '',
      args,
      startedAt: this.plane.now(),
      queuedMs: 0,
      slots: [],
      toClient,
      cancelled: false,
      finished: false,
      recorded: false,
    };
  }

  private track(message: JsonRpcMessage, kind: 'call' | 'list', toClient: Sink): Pending {
    if (this.pending.size >= this.plane.maxPending) {
      const oldest = this.pending.keys().next().value as string;
      const evicted = this.pending.get(oldest)!;
      evicted.cancelled = true;
      this.pending.delete(oldest);
      if (evicted.wake)
        evicted.wake(); // a delay, hang or wait here: its own path records it
      else releaseSlots(evicted);
      this.plane.evicted += 1;
    }
    const params = message.params ?? {};
    const pending = this.newPending(
      message.id!,
      kind,
      kind === 'call' ? String(params.name ?? '') : '',
      params.arguments,
      toClient,
    );
    this.pending.set(String(message.id), pending);
    return pending;
  }

  private async startCall(pending: Pending, message: JsonRpcMessage, toServer: Sink, toClient: Sink): Promise<void> {
    pending.task = this.plane.taskOf(message.params?._meta);
    const decision = this.plane.engine.decide(pending.tool, pending.task);
    pending.decision = decision;
    if (decision.listChanged) toClient({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    if (decision.gates.length > 0 && !(await this.passGates(pending, decision))) return this.endCancelled(pending);
    const short = decision.shortCircuit;
    if (!short) {
      pending.forwardedAt = this.plane.now();
      toServer(message);
      return;
    }
    // Answered here: the upstream never sees the call. Still pending (cancellable) while waiting.
    await this.sleep(pending, decision.delayMs);
    if (short.kind === 'hang') await this.sleep(pending, short.hangMs > 0 ? short.hangMs : Infinity);
    if (pending.cancelled) return this.endCancelled(pending);
    this.pending.delete(String(pending.id));
    const answer: JsonRpcMessage =
      short.shape === 'jsonrpc'
        ? { jsonrpc: '2.0', id: pending.id, error: { code: short.code, message: short.message } }
        : {
            jsonrpc: '2.0',
            id: pending.id,
            result: { content: [{ type: 'text', text: short.message }], isError: true },
          };
    pending.finished = true;
    toClient(answer);
    this.recordCall(pending, answer, null, false);
  }

  /**
   * Waits, in arrival order, for a slot of each head-of-line gate the call passes (plan order, so
   * two calls never hold each other's slots); cancellable like any wait. False when the call was
   * cancelled (or its session closed) while it waited. A call that had to wait is tagged.
   */
  private async passGates(pending: Pending, decision: Decision): Promise<boolean> {
    const start = this.plane.now();
    let waited = false;
    for (const gate of decision.gates) {
      const slot = gate.acquire();
      pending.slots.push(slot);
      if (slot.immediate) continue;
      waited = true;
      await new Promise<void>((resolve) => {
        pending.wake = resolve;
        void slot.ready.then(resolve);
      });
      pending.wake = undefined;
      if (pending.cancelled) break;
    }
    if (waited) {
      pending.queuedMs = this.plane.now() - start;
      decision.tags.push('head_of_line_blocking');
    }
    return !pending.cancelled;
  }

  /** A call cancelled (or cut off) while it waited here: no answer, recorded as such. */
  private endCancelled(pending: Pending): void {
    this.pending.delete(String(pending.id));
    this.recordCall(pending, undefined, null, false);
  }

  private async finishCall(pending: Pending, message: JsonRpcMessage): Promise<void> {
    const upstreamMs = this.upstreamMs(pending);
    const decision = pending.decision!;
    const { answer, acted } = this.mutate(pending, message, decision);
    if (decision.delayMs > 0) {
      this.pending.set(String(pending.id), pending); // still cancellable while delayed
      await this.sleep(pending, decision.delayMs);
      this.pending.delete(String(pending.id));
    }
    const noEffect = new Set(decision.mutations.map((mutation) => mutation.kind).filter((kind) => !acted.has(kind)));
    const tags = decision.tags.filter((tag) => !noEffect.has(tag as never));
    if (pending.cancelled) return this.recordCall(pending, undefined, upstreamMs, false, tags);
    pending.finished = true;
    pending.toClient(answer);
    this.recordCall(pending, answer, upstreamMs, answer !== message, tags);
  }

  /**
   * Each mutation in turn, keeping only those that change what the client receives, judged by
   * meaning: cutting arrays in half changes nothing in a result that has none, and re-serialising
   * JSON text (pretty to compact) changes nothing a client reads. Such a call is neither injected
   * nor incorrect, and the client gets exactly the server's answer.
   */
  private mutate(
    pending: Pending,
    message: JsonRpcMessage,
    decision: Decision,
  ): { answer: JsonRpcMessage; acted: Set<string> } {
    const acted = new Set<string>();
    if (decision.mutations.length === 0 || !message.result || message.result.isError) return { answer: message, acted };
    const schema = this.plane.outputSchemaOf(pending.tool) as never;
    let result = message.result as ToolResult;
    for (const mutation of decision.mutations) {
      const next = applyMutations(result, [mutation], schema, this.plane.engine.random);
      if (sameMeaning(next, result)) continue;
      acted.add(mutation.kind);
      result = next;
    }
    return { answer: acted.size > 0 ? { ...message, result: result as Record<string, unknown> } : message, acted };
  }

  private upstreamMs(pending: Pending): number | null {
    return pending.forwardedAt === undefined ? null : this.plane.now() - pending.forwardedAt;
  }

  /** Writes the call's journal record, once, and releases its slots. `unread`: its answer was relayed without being
   * read, and why. */
  private recordCall(
    pending: Pending,
    answer: JsonRpcMessage | undefined,
    upstreamMs: number | null,
    mutated: boolean,
    tags: readonly string[] = pending.decision?.tags ?? [],
    unread?: string,
  ): void {
    releaseSlots(pending);
    if (pending.recorded) return;
    pending.recorded = true;
    const plane = this.plane;
    const latency = plane.now() - pending.startedAt;
    const deadline = plane.deadlineOf(pending.tool);
    // An answer relayed unread is the server's own, untouched by the plan: answered, and as correct as the server made
    // it.
    const flags: Pick<CallRecord, 'outcome' | 'error_shape' | 'responded' | 'schema_ok' | 'correct'> =
      unread !== undefined
        ? { outcome: 'unread' as Outcome, error_shape: null, responded: true, schema_ok: true, correct: true }
        : plane.classify(pending.tool, answer, mutated);
    const attempt = plane.attemptOf(pending.task, pending.tool, pending.args);
    const within = flags.responded && latency <= deadline;
    plane.record(attempt.key, {
      ts: new Date().toISOString(),
      seq: attempt.seq,
      tool: pending.tool,
      task: pending.task,
      logical: attempt.logical,
      attempt: attempt.attempt,
      upstream_ms: upstreamMs === null ? null : round(upstreamMs),
      queued_ms: round(pending.queuedMs),
      injected_delay_ms: round(pending.decision?.delayMs ?? 0),
      latency_ms: round(latency),
      deadline_ms: deadline,
      fault: tags.length > 0 ? tags.join('+') : 'none',
      ...flags,
      within_deadline: within,
      success: flags.correct && within,
      unsafe_retry: plane.unsafeRetry(pending.tool),
      ...(unread !== undefined ? { note: `answer relayed unread: ${unread}` } : {}),
    });
  }

  private cancel(requestId: string | number | undefined): void {
    if (requestId === undefined) return;
    const pending = this.pending.get(String(requestId));
    if (!pending) return;
    pending.cancelled = true;
    if (pending.wake) {
      pending.wake(); // a delay, hang or wait here: its own path records the call
      return;
    }
    // Waiting for the upstream, which will not answer a cancelled request: record it now.
    this.pending.delete(String(requestId));
    if (pending.kind === 'call' && pending.decision) this.recordCall(pending, undefined, null, false);
  }

  /** A real delay that a cancellation (or close) cuts short; Infinity waits for the cancellation. */
  private sleep(pending: Pending, ms: number): Promise<void> {
    if (ms <= 0 || pending.cancelled) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (): void => {
        if (timer) {
          clearTimeout(timer);
          this.timers.delete(timer);
        }
        pending.wake = undefined;
        resolve();
      };
      if (Number.isFinite(ms)) {
        timer = setTimeout(finish, ms);
        this.timers.add(timer);
      }
      pending.wake = finish;
    });
  }
}

function releaseSlots(pending: Pending): void {
  for (const slot of pending.slots) slot.release();
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/** The JSON-RPC error a client gets when the proxy cannot relay an answer (strict mode, or nothing to relay). */
function internalError(id: string | number, error: unknown): JsonRpcMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: -32603, message: `faultline toolcall: ${(error as Error)?.message ?? String(error)}` },
  };
}

export type { Outcome };
