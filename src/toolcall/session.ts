/**
 * The transport-agnostic relay both proxies drive: JSON-RPC messages in from the client and from
 * the server, the plan applied to tools/call and tools/list, the journal written.
 *
 *   client ─fromClient()─▶ [decide: delay · answer here · hang · forward] ─toServer─▶ server
 *   client ◀─toClient──── [mutate · delay · filter tools/list · record]  ◀─fromServer()─ server
 *
 * A ToolPlane is one plan against one upstream server (shared by all sessions of an HTTP proxy);
 * a PlaneSession is one client connection's pending requests, bounded by maxPending (the oldest is
 * evicted and counted). Fail-safe by default: an internal error forwards the original message and
 * is counted; strict mode answers the client with a JSON-RPC error instead (fails closed).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { FaultEngine, type Decision } from './faults.js';
import { applyMutations, type ToolResult } from './mutate.js';
import { computeSlis, MAX_OUTAGES_KEPT, type CallRecord, type Outcome, type Slis, type UpstreamFailure } from './metrics.js';
import type { Plan } from './plan.js';
import type { JsonRpcMessage } from '../jsonrpc/message.js';

export type { JsonRpcMessage };
export type Sink = (message: JsonRpcMessage) => void;

export interface PlaneOptions {
  strict?: boolean;
  maxPending?: number;
  /** Overrides the plan's task_idle_ms. */
  taskIdleMs?: number;
  /** Called with every journal record as it is written. */
  onRecord?: (record: CallRecord) => void;
  now?: () => number;
}

interface ToolInfo {
  validate?: ValidateFunction;
  outputSchema?: Record<string, unknown>;
  unsafeRetry: boolean;
}

/** Attempts kept in memory for the SLIs; older ones are only in the journal file. */
export const MAX_RECORDS = 100_000;

/** Meta keys a client may use to mark which task a call belongs to. */
export const TASK_META_KEYS = ['task_id', 'faultline/task'];

export class ToolPlane {
  readonly engine: FaultEngine;
  readonly records: CallRecord[] = [];
  readonly strict: boolean;
  readonly maxPending: number;
  internalErrors = 0;
  evicted = 0;
  /** Set when the upstream server exited on its own or could not be reached (see UpstreamFailure). */
  upstreamFailure: UpstreamFailure | undefined;
  private readonly tools = new Map<string, ToolInfo>();
  private readonly ajv = new Ajv({ strict: false, allErrors: false });
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
    this.engine = new FaultEngine(plan);
    this.strict = options.strict ?? false;
    this.maxPending = options.maxPending ?? 1024;
    this.taskIdleMs = options.taskIdleMs ?? plan.task_idle_ms;
    this.now = options.now ?? (() => performance.now());
  }

  session(): PlaneSession {
    return new PlaneSession(this);
  }

  slis(): Slis {
    return computeSlis(this.records, { internal_errors: this.internalErrors, evicted: this.evicted, upstream_failure: this.upstreamFailure });
  }

  /** The stdio server ended although nobody stopped it. */
  upstreamExited(exitCode: number | null, signal: string | null): void {
    this.upstreamFailure ??= {
      kind: 'exited',
      at: new Date().toISOString(),
      attempts_before: this.seq,
      ...(signal !== null ? { signal } : exitCode !== null ? { exit_code: exitCode } : {}),
      unanswered: 0,
    };
  }

  /**
   * The HTTP upstream refused or dropped a request. The first failure's time is kept and the
   * latest error named; a failure after a recovery opens a new outage.
   */
  upstreamUnreachable(error: string): void {
    const now = new Date().toISOString();
    const failure = this.upstreamFailure;
    if (!failure) {
      this.upstreamFailure = { kind: 'unreachable', at: now, attempts_before: this.seq, error, unanswered: 0, reached: 0, outage_count: 1, outages: [{ from: now, error, unanswered: 0 }] };
      return;
    }
    if (failure.kind !== 'unreachable') return;
    failure.error = error;
    const outages = (failure.outages ??= []);
    if (failure.recovered_at === undefined && outages.length > 0) {
      outages[outages.length - 1]!.error = error;
      return;
    }
    delete failure.recovered_at;
    failure.outage_count = (failure.outage_count ?? outages.length) + 1;
    outages.push({ from: now, error, unanswered: 0 });
    if (outages.length > MAX_OUTAGES_KEPT) outages.splice(0, outages.length - MAX_OUTAGES_KEPT);
  }

  /**
   * The HTTP upstream answered (any HTTP status: the server is there). Ends an outage going on;
   * `toolCalls` tool-call attempts went with the request, and count as reaching it when it had
   * failed before.
   */
  upstreamReached(toolCalls = 0): void {
    const failure = this.upstreamFailure;
    if (failure?.kind !== 'unreachable') return;
    if (failure.recovered_at === undefined) {
      const now = new Date().toISOString();
      failure.recovered_at = now;
      const last = failure.outages?.[failure.outages.length - 1];
      if (last && last.to === undefined) last.to = now;
    }
    failure.reached = (failure.reached ?? 0) + toolCalls;
  }

  /** Whether the upstream is down now: it exited, or its last outage has not ended. */
  upstreamDown(): boolean {
    const failure = this.upstreamFailure;
    return failure !== undefined && (failure.kind === 'exited' || failure.recovered_at === undefined);
  }

  /** Counts one tool-call attempt that found no server (only while the upstream is down). */
  countUnanswered(): void {
    const failure = this.upstreamFailure;
    if (!failure || !this.upstreamDown()) return;
    failure.unanswered += 1;
    const last = failure.outages?.[failure.outages.length - 1];
    if (last) last.unanswered += 1;
  }

  /** Learns outputSchemas and annotations from a tools/list result; returns the client's view. */
  learnTools(tools: Array<{ name: string; outputSchema?: Record<string, unknown>; annotations?: Record<string, unknown> }>): typeof tools {
    for (const tool of tools) {
      let validate: ValidateFunction | undefined;
      if (tool.outputSchema) {
        try {
          validate = this.ajv.compile(tool.outputSchema);
        } catch {
          validate = undefined; // an invalid declared schema cannot be checked against
        }
      }
      const a = tool.annotations ?? {};
      this.tools.set(tool.name, { validate, outputSchema: tool.outputSchema, unsafeRetry: a.destructiveHint === true || a.idempotentHint === false });
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
    return this.plan.deadlines[tool] ?? this.plan.deadline_ms;
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
  classify(tool: string, answer: JsonRpcMessage | undefined, mutated: boolean): Pick<CallRecord, 'outcome' | 'error_shape' | 'responded' | 'schema_ok' | 'correct'> {
    if (!answer) return { outcome: 'no_answer', error_shape: null, responded: false, schema_ok: true, correct: false };
    if (answer.error) return { outcome: 'jsonrpc_error', error_shape: 'jsonrpc', responded: false, schema_ok: true, correct: false };
    const result = (answer.result ?? {}) as ToolResult;
    if (result.isError) return { outcome: 'is_error', error_shape: 'is_error', responded: true, schema_ok: true, correct: false };
    const info = this.tools.get(tool);
    const schemaOk = info?.validate ? result.structuredContent !== undefined && info.validate(result.structuredContent) === true : true;
    return { outcome: 'ok', error_shape: null, responded: true, schema_ok: schemaOk, correct: schemaOk && !mutated };
  }
}

interface Pending {
  id: string | number;
  kind: 'call' | 'list';
  tool: string;
  task: string;
  args: unknown;
  startedAt: number;
  decision?: Decision;
  toClient: Sink;
  cancelled: boolean;
  wake?: () => void;
  finished: boolean;
}

export class PlaneSession {
  private readonly pending = new Map<string, Pending>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(readonly plane: ToolPlane) {}

  get pendingCount(): number {
    return this.pending.size;
  }

  /** A message from the client. `toServer` forwards it; `toClient` answers it. */
  async fromClient(message: JsonRpcMessage, toServer: Sink, toClient: Sink): Promise<void> {
    let pending: Pending | undefined;
    try {
      if (message.method === 'tools/call' && message.id !== undefined && message.id !== null) {
        pending = this.track(message, 'call', toClient);
        await this.startCall(pending, message, toServer, toClient);
        return;
      }
      if (message.method === 'tools/list' && message.id !== undefined && message.id !== null) this.track(message, 'list', toClient);
      if (message.method === 'notifications/cancelled') this.cancel(message.params?.requestId as string | number | undefined);
      toServer(message);
    } catch (error) {
      this.plane.internalErrors += 1;
      if (this.plane.strict && message.id !== undefined && message.id !== null) {
        if (pending) pending.finished = true;
        toClient(internalError(message.id, error));
      } else if (!pending?.finished) toServer(message);
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
        if (Array.isArray(tools)) {
          sink({ ...message, result: { ...message.result, tools: this.plane.learnTools(tools as never) } });
          return;
        }
        sink(message);
        return;
      }
      await this.finishCall(pending, message);
    } catch (error) {
      this.plane.internalErrors += 1;
      if (pending.finished) return;
      pending.finished = true;
      sink(this.plane.strict ? internalError(pending.id, error) : message);
    }
  }

  /**
   * Stops every pending delay and hang (the connection is going away). A call still waiting for
   * the upstream (which died or was cut off) will never be answered: it is recorded as
   * no_answer, as a cancelled one is, so a server that crashes mid-call counts in the SLIs.
   */
  close(): void {
    for (const pending of this.pending.values()) {
      pending.cancelled = true;
      if (pending.wake) pending.wake(); // a delay or hang here: its own path records the call
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
    const pending: Pending = { id: '', kind: 'call', tool, task: this.plane.taskOf(meta), args, startedAt: this.plane.now(), toClient: () => undefined, cancelled: true, finished: true };
    this.recordCall(pending, undefined, null, false);
    this.plane.countUnanswered();
  }

  private track(message: JsonRpcMessage, kind: 'call' | 'list', toClient: Sink): Pending {
    if (this.pending.size >= this.plane.maxPending) {
      const oldest = this.pending.keys().next().value as string;
      const evicted = this.pending.get(oldest)!;
      evicted.cancelled = true;
      evicted.wake?.();
      this.pending.delete(oldest);
      this.plane.evicted += 1;
    }
    const params = message.params ?? {};
    const pending: Pending = {
      id: message.id!,
      kind,
      tool: kind === 'call' ? String(params.name ?? '') : '',
      task: '',
      args: params.arguments,
      startedAt: this.plane.now(),
      toClient,
      cancelled: false,
      finished: false,
    };
    this.pending.set(String(message.id), pending);
    return pending;
  }

  private async startCall(pending: Pending, message: JsonRpcMessage, toServer: Sink, toClient: Sink): Promise<void> {
    pending.task = this.plane.taskOf(message.params?._meta);
    const decision = this.plane.engine.decide(pending.tool, pending.task);
    pending.decision = decision;
    if (decision.listChanged) toClient({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    const short = decision.shortCircuit;
    if (!short) {
      toServer(message);
      return;
    }
    // Answered here: the upstream never sees the call. Still pending (cancellable) while waiting.
    await this.sleep(pending, decision.delayMs);
    if (short.kind === 'hang') await this.sleep(pending, short.hangMs > 0 ? short.hangMs : Infinity);
    this.pending.delete(String(pending.id));
    if (pending.cancelled) return this.recordCall(pending, undefined, null, false);
    const answer: JsonRpcMessage =
      short.shape === 'jsonrpc'
        ? { jsonrpc: '2.0', id: pending.id, error: { code: short.code, message: short.message } }
        : { jsonrpc: '2.0', id: pending.id, result: { content: [{ type: 'text', text: short.message }], isError: true } };
    pending.finished = true;
    toClient(answer);
    this.recordCall(pending, answer, null, false);
  }

  private async finishCall(pending: Pending, message: JsonRpcMessage): Promise<void> {
    const upstreamMs = this.plane.now() - pending.startedAt;
    const decision = pending.decision!;
    let answer = message;
    // Each mutation in turn, keeping only those that changed what the client receives: cutting
    // arrays in half changes nothing in a result that has none, and such a call is neither
    // injected nor incorrect (the client got exactly the server's answer).
    const noEffect = new Set<string>(decision.mutations.map((mutation) => mutation.kind));
    if (decision.mutations.length > 0 && message.result && !message.result.isError) {
      const schema = this.plane.outputSchemaOf(pending.tool) as never;
      let result = message.result as ToolResult;
      let changed = false;
      for (const mutation of decision.mutations) {
        const next = applyMutations(result, [mutation], schema, this.plane.engine.random);
        if (JSON.stringify(next) !== JSON.stringify(result)) {
          noEffect.delete(mutation.kind);
          changed = true;
        }
        result = next;
      }
      if (changed) answer = { ...message, result: result as Record<string, unknown> };
    }
    const mutated = answer !== message;
    if (decision.delayMs > 0) {
      this.pending.set(String(pending.id), pending); // still cancellable while delayed
      await this.sleep(pending, decision.delayMs);
      this.pending.delete(String(pending.id));
    }
    const tags = decision.tags.filter((tag) => !noEffect.has(tag));
    if (pending.cancelled) return this.recordCall(pending, undefined, upstreamMs, false, tags);
    pending.finished = true;
    pending.toClient(answer);
    this.recordCall(pending, answer, upstreamMs, mutated, tags);
  }

  private recordCall(
    pending: Pending,
    answer: JsonRpcMessage | undefined,
    upstreamMs: number | null,
    mutated: boolean,
    tags: readonly string[] = pending.decision?.tags ?? [],
  ): void {
    const plane = this.plane;
    const latency = plane.now() - pending.startedAt;
    const deadline = plane.deadlineOf(pending.tool);
    const flags = plane.classify(pending.tool, answer, mutated);
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
      injected_delay_ms: round(pending.decision?.delayMs ?? 0),
      latency_ms: round(latency),
      deadline_ms: deadline,
      fault: tags.length > 0 ? tags.join('+') : 'none',
      ...flags,
      within_deadline: within,
      success: flags.correct && within,
      unsafe_retry: plane.unsafeRetry(pending.tool),
    });
  }

  private cancel(requestId: string | number | undefined): void {
    if (requestId === undefined) return;
    const pending = this.pending.get(String(requestId));
    if (!pending) return;
    pending.cancelled = true;
    if (pending.wake) {
      pending.wake(); // a delay or hang here: its own path records the call
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

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function internalError(id: string | number, error: unknown): JsonRpcMessage {
  return { jsonrpc: '2.0', id, error: { code: -32603, message: `faultline toolcall (strict): internal error: ${(error as Error)?.message ?? String(error)}` } };
}

export type { Outcome };
