/**
 * The small interface every probe check implements, and the context it runs against.
 *
 * A check declares which probe it is (taxonomy.json names probes under the leaves they exercise),
 * its family, the leaves it decides with the severity of a finding under each, and whether it
 * needs a transport or calls tools; run() does its exchanges with the server through the context
 * and reports what it saw: `check` (a check of a leaf ran and found nothing), `report` (a
 * finding), `note` (why a leaf could not be decided). The runner (runner.ts) starts the session,
 * runs the checks in order and turns the ledger into the report; a check knows nothing of the
 * others except what the context memoises for several of them (the second session, the tool list
 * after the calls).
 */
import type { FindingInput, Severity } from '../findings.js';
import type { Peer, Reply, Target, TranscriptLine } from '../peer/index.js';
import type { ListedTool } from '../schema-checks.js';
import type { FamilyId } from '../taxonomy.js';
import type { ValidateFunction } from 'ajv';
import type { LookupFunction } from 'node:net';

export interface ProbeCheck {
  /** The probe's name, as taxonomy.json lists it under each leaf it exercises. */
  readonly id: string;
  readonly family: FamilyId;
  /** The leaves it decides, each with the severity of its findings unless a finding says otherwise. */
  readonly leaves: Readonly<Record<string, Severity>>;
  /** Runs only over this transport (its leaves stay n/a over the other). */
  readonly transport?: 'stdio' | 'http';
  /** It calls the server's tools: with none it may call, what only such checks exercise is untested. */
  readonly callsTools?: boolean;
  /** Leaves other checks decide from what this one did (its calls): it runs when they are wanted too. */
  readonly feeds?: readonly string[];
  run(ctx: CheckContext): Promise<void> | void;
}

export interface ProbeSettings {
  /** Hostile cases per tool (TOOL family). */
  cases: number;
  seed: number;
  allowWrites: boolean;
  callTimeoutMs: number;
  overallTimeoutMs: number;
}

/** What the session start saw: the request sent before initialize, and the version negotiation. */
export interface SessionStart {
  /** tools/list sent before initialize, on `peer`. */
  early: { reply: Reply; peer: Peer; from: number; id: string; killed: boolean };
  /** initialize asking for a version no server supports. */
  negotiation: { reply: Reply; exchange: TranscriptLine[] };
}

/** One tool call the probe made, and how it went. */
export interface ToolCall {
  tool: string;
  reply: Reply;
  /** Only this call's lines of the transcript. */
  exchange: TranscriptLine[];
  /**
   * answered: a result or an error came back; unreadable: an answer came that could not be read;
   * hung: nothing for a whole per-call bound (progress restarts it); closed: the server went away.
   */
  outcome: 'answered' | 'unreadable' | 'hung' | 'closed';
}

/** A progress token the probe sent, for the TIMEOUT checks. */
export interface TokenUse {
  tool: string;
  startedAt: number;
  answeredAt?: number;
  /** The probe cancelled the call: what comes after says nothing about progress. */
  cancelled?: boolean;
}

export interface CheckContext {
  readonly target: Target;
  readonly settings: ProbeSettings;
  /** The bound on one request now: the per-call bound, or what is left of the run if less. */
  bound(): number;
  /** What is left of the run's overall bound, in ms. */
  remaining(): number;
  timeLeft(): boolean;
  /** Throws PeerStopped once the run was stopped (for checks that ask the server directly). */
  throwIfStopped(): void;
  /** The run's stop signal: aborted at the overall bound or on cancellation. */
  readonly stopSignal: AbortSignal;
  /** HTTP: the target policy's lookup, for requests a check makes itself (postRaw). */
  readonly lookup: LookupFunction | undefined;
  progress(message: string): void;

  /** The initialised session checks share; started again (stdio) if the server went away. */
  session(): Promise<Peer>;
  /** That session as it is, without starting another: undefined once it ended. */
  current(): Peer | undefined;
  /** A fresh session, not initialised yet (closed with the run). */
  open(): Peer;
  /** A fresh initialised session. */
  reopen(): Promise<Peer>;
  /**
   * After a message the server did not survive: an HTTP server is asked for a new session at
   * once (a stdio one is started again by session()). Throws ServerGone when none is had.
   */
  recover(peer: Peer, after: string): Promise<void>;
  readonly peers: readonly Peer[];

  readonly start: SessionStart;
  readonly capabilities: Record<string, unknown>;
  /** Every tool listed, and those the probe may call (readOnlyHint unless allowWrites). */
  readonly tools: readonly ListedTool[];
  readonly callable: readonly ListedTool[];
  /** The tool's outputSchema, compiled (undefined when it declares none or it does not compile). */
  outputValidator(tool: ListedTool): ValidateFunction | undefined;
  /**
   * Calls a tool with a progress token: the wait is the per-call bound, restarted by each progress
   * notification, up to the run's bound. A call given up on is cancelled (notifications/cancelled),
   * as a client would.
   */
  callTool(peer: Peer, tool: ListedTool, args: unknown, label: string): Promise<ToolCall>;
  /** The longest each tool took to answer so far, and the tools that never answered. */
  readonly timings: ReadonlyMap<string, { longestMs: number; hung: boolean }>;
  readonly tokens: ReadonlyMap<string, TokenUse>;
  /** A new progress token, registered for the TIMEOUT checks. */
  newToken(tool: string): TokenUse & { token: string };
  listTools(peer: Peer): Promise<ListedTool[]>;
  /** A value computed once per run and shared by several checks. */
  memo<T>(key: string, make: () => Promise<T>): Promise<T>;

  wants(leaf: string): boolean;
  check(leaf: string, n?: number): void;
  report(finding: FindingInput): void;
  note(leaf: string, note: string, outcome?: 'inconclusive' | 'untested'): void;
}

/** An HTTP server that did not survive a probe and accepts no new session (see CheckContext.recover). */
export class ServerGone extends Error {
  constructor(readonly after: string) {
    super(`the server stopped answering after ${after}`);
  }
}

export function errorCode(reply: Reply): number | undefined {
  const error = reply.message?.error as { code?: unknown } | undefined;
  return typeof error?.code === 'number' ? error.code : undefined;
}

/** A short description of what came back, for a finding's message. */
export function describeAnswer(reply: Reply): string {
  if (reply.unreadable) return `an unreadable answer (${reply.unreadable})`;
  if (reply.timedOut) return 'no answer';
  if (reply.closed) return 'no answer (the connection or process went away)';
  if (reply.message?.result !== undefined) return 'a result';
  const code = errorCode(reply);
  return code === undefined ? JSON.stringify(reply.message?.error ?? null).slice(0, 200) : `error ${code}`;
}
