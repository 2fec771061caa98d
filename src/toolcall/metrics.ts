/**
 * The journal and the SLIs computed from it. One record per tools/call attempt; attempts that
 * repeat a failed call (same task, tool and arguments) are retries of one logical call.
 *
 * Per logical call (its last attempt): responded = an answer arrived; correct = responded, not
 * isError, structuredContent valid against the declared outputSchema (when there is one) and not
 * mutated by us; success = correct and within the tool's deadline. Then
 *   TCSR = successes / calls      A = responded / calls     C = correct / responded
 *   ETA = A × C                   SCR = schema_ok / calls   deadline adherence = within / calls
 *   TCAF = calls / tasks          blast radius = tasks with a failed call / tasks
 *   e = failed calls / calls      predicted blast radius = 1 − (1 − e)^TCAF
 *   amplification = attempts / calls
 * Queueing (head_of_line_blocking): each attempt's wait for a slot is in its record (queued_ms,
 * inside latency_ms, so a stalled call can miss its deadline); the SLIs give how many attempts
 * waited and the mean, p95 and longest wait among them.
 */
import { byCodeUnits } from '../order.js';

/** `unread`: the server's answer went to the client as it came, too large or too deeply nested for the proxy to read.
 * */
export type Outcome = 'ok' | 'is_error' | 'jsonrpc_error' | 'no_answer' | 'unread';

export interface CallRecord {
  ts: string;
  seq: number;
  tool: string;
  task: string;
  /** Sequence number of the logical call's first attempt. */
  logical: number;
  attempt: number;
  upstream_ms: number | null;
  /** Time spent waiting for a head-of-line slot before the call went on. */
  queued_ms: number;
  injected_delay_ms: number;
  latency_ms: number;
  deadline_ms: number;
  fault: string;
  outcome: Outcome;
  error_shape: 'is_error' | 'jsonrpc' | null;
  responded: boolean;
  schema_ok: boolean;
  correct: boolean;
  within_deadline: boolean;
  success: boolean;
  /** The tool is annotated destructive or non-idempotent. */
  unsafe_retry: boolean;
  /** Why the record is unusual (an answer relayed unread). */
  note?: string;
}

/** Waits for head-of-line slots, over the attempts that had to wait. */
export interface Queueing {
  queued_attempts: number;
  mean_ms: number;
  p95_ms: number;
  max_ms: number;
}

export interface Verdict {
  tool: string;
  fault: string;
  failures: number;
  stopped: number;
  retried: number;
  runaway: number;
  blind_retries: number;
}

/**
 * The upstream server failed under the proxy: a stdio server exited on its own (not stopped by
 * us), or an HTTP upstream could not be reached. Tool calls that then found no server are
 * recorded as unanswered calls (`no_answer`), so they count against availability and TCSR, and
 * are counted here too: the report says the server died rather than leaving a gap.
 *
 * An HTTP upstream may come back: each period it could not be reached is an outage (from the
 * first refused request to the first answer after it), and the tool calls that reached it after
 * its first failure are counted apart, so a server that recovered is not reported as down.
 */
export interface UpstreamFailure {
  kind: 'exited' | 'unreachable';
  /** When it was first seen (ISO 8601). */
  at: string;
  /** Tool-call attempts recorded before it. */
  attempts_before: number;
  /** exited: the exit code, when it exited rather than being killed by a signal. */
  exit_code?: number;
  /** exited: the signal that ended it. */
  signal?: string;
  /** unreachable: the last connection error. */
  error?: string;
  /** Tool-call attempts that found no server (in flight when it died, or made after). */
  unanswered: number;
  /** unreachable: when it answered again after its last outage; absent while it is still unreachable. */
  recovered_at?: string;
  /** unreachable: tool-call attempts that reached the upstream after its first failure. */
  reached?: number;
  /** unreachable: how many separate times it could not be reached. */
  outage_count?: number;
  /** unreachable: the outages, the latest MAX_OUTAGES_KEPT; `to` is absent for one still going on. */
  outages?: Outage[];
}

export interface Outage {
  from: string;
  to?: string;
  /** The last connection error of this outage. */
  error: string;
  /** Tool-call attempts that found no server during it. */
  unanswered: number;
}

/** Outages kept in upstream_failure (the latest; outage_count counts them all). */
export const MAX_OUTAGES_KEPT = 20;

export interface Slis {
  attempts: number;
  calls: number;
  tasks: number;
  tcsr: number;
  availability: number;
  correctness: number;
  eta: number;
  schema_conformance: number;
  deadline_adherence: number;
  tcaf: number;
  blast_radius: number;
  error_rate: number;
  predicted_blast_radius: number;
  amplification: number;
  queueing: Queueing;
  injected: Record<string, number>;
  verdicts: Verdict[];
  internal_errors: number;
  evicted: number;
  /** Present only when the upstream server exited or could not be reached. */
  upstream_failure?: UpstreamFailure;
}

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);

export function computeSlis(
  records: readonly CallRecord[],
  extra: { internal_errors?: number; evicted?: number; upstream_failure?: UpstreamFailure | undefined } = {},
): Slis {
  const last = new Map<number, CallRecord>();
  const attemptsOf = new Map<number, CallRecord[]>();
  for (const r of records) {
    last.set(r.logical, r);
    const list = attemptsOf.get(r.logical) ?? [];
    list.push(r);
    attemptsOf.set(r.logical, list);
  }
  const calls = [...last.values()];
  const n = calls.length;
  const responded = calls.filter((c) => c.responded).length;
  const correct = calls.filter((c) => c.correct).length;
  const success = calls.filter((c) => c.success).length;
  const tasks = new Map<string, boolean>();
  for (const c of calls) tasks.set(c.task, (tasks.get(c.task) ?? true) && c.success);
  const failedTasks = [...tasks.values()].filter((ok) => !ok).length;
  const tcaf = ratio(n, tasks.size);
  const e = ratio(n - success, n);
  const injected: Record<string, number> = {};
  for (const r of records)
    for (const tag of r.fault === 'none' ? [] : r.fault.split('+')) injected[tag] = (injected[tag] ?? 0) + 1;
  const verdicts = new Map<string, Verdict>();
  for (const attempts of attemptsOf.values()) {
    const first = attempts[0]!;
    if (first.success) continue;
    const key = `${first.tool}\u0000${first.fault}`;
    const v = verdicts.get(key) ?? {
      tool: first.tool,
      fault: first.fault,
      failures: 0,
      stopped: 0,
      retried: 0,
      runaway: 0,
      blind_retries: 0,
    };
    const retries = attempts.length - 1;
    v.failures += 1;
    if (retries === 0) v.stopped += 1;
    else if (retries < 3) v.retried += 1;
    else v.runaway += 1;
    if (first.unsafe_retry) v.blind_retries += retries;
    verdicts.set(key, v);
  }
  const round = (x: number): number => Math.round(x * 10000) / 10000;
  return {
    attempts: records.length,
    calls: n,
    tasks: tasks.size,
    tcsr: round(ratio(success, n)),
    availability: round(ratio(responded, n)),
    correctness: round(ratio(correct, responded)),
    eta: round(ratio(responded, n) * ratio(correct, responded)),
    schema_conformance: round(ratio(calls.filter((c) => c.schema_ok).length, n)),
    deadline_adherence: round(ratio(calls.filter((c) => c.within_deadline).length, n)),
    tcaf: round(tcaf),
    blast_radius: round(ratio(failedTasks, tasks.size)),
    error_rate: round(e),
    predicted_blast_radius: round(n === 0 ? 0 : 1 - Math.pow(1 - e, tcaf)),
    amplification: round(ratio(records.length, n)),
    queueing: queueingOf(records),
    injected,
    verdicts: [...verdicts.values()].sort((a, b) => byCodeUnits(a.tool, b.tool) || byCodeUnits(a.fault, b.fault)),
    internal_errors: extra.internal_errors ?? 0,
    evicted: extra.evicted ?? 0,
    ...(extra.upstream_failure ? { upstream_failure: copyFailure(extra.upstream_failure) } : {}),
  };
}

function queueingOf(records: readonly CallRecord[]): Queueing {
  const waits = records
    .map((r) => r.queued_ms ?? 0)
    .filter((ms) => ms > 0)
    .sort((a, b) => a - b);
  const total = waits.reduce((sum, ms) => sum + ms, 0);
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return {
    queued_attempts: waits.length,
    mean_ms: r2(ratio(total, waits.length)),
    p95_ms: waits.length === 0 ? 0 : waits[Math.min(waits.length - 1, Math.ceil(0.95 * waits.length) - 1)]!,
    max_ms: waits.length === 0 ? 0 : waits[waits.length - 1]!,
  };
}

function copyFailure(failure: UpstreamFailure): UpstreamFailure {
  return { ...failure, ...(failure.outages ? { outages: failure.outages.map((outage) => ({ ...outage })) } : {}) };
}

const attempts = (n: number): string => `${n} tool-call attempt${n === 1 ? '' : 's'}`;

/** One paragraph saying how the upstream failed, whether it came back, and what that cost, for the top of the report.
 * */
export function describeUpstreamFailure(failure: UpstreamFailure): string {
  const lost =
    `${failure.unanswered} attempt${failure.unanswered === 1 ? '' : 's'} ` +
    `found no server and ${failure.unanswered === 1 ? 'counts' : 'count'} ` +
    `as unanswered`;
  if (failure.kind === 'exited') {
    return (
      `**The upstream server exited** at ${failure.at} ` +
      `(${failure.signal !== undefined ? `signal ${failure.signal}` : `exit code ${failure.exit_code ?? 'unknown'}`}) ` +
      `after ${attempts(failure.attempts_before)}; ${lost}.`
    );
  }
  const outages = failure.outages ?? [];
  const count = failure.outage_count ?? Math.max(1, outages.length);
  const shown = outages.map((o) => (o.to !== undefined ? `from ${o.from} to ${o.to}` : `from ${o.from}`));
  const earlier = count - outages.length;
  const periods =
    shown.length === 0
      ? `from ${failure.at}`
      : `${earlier > 0 ? `${earlier} earlier time${earlier === 1 ? '' : 's'} from ` + `${failure.at}, then ` : ''}${shown.join('; ')}`;
  const first =
    `**The upstream server could not be reached** ${count > 1 ? `${count} times: ` : ''}${periods} ` +
    `(${count > 1 ? 'last error: ' : ''}${failure.error ?? 'no answer'}), ` +
    `first after ${attempts(failure.attempts_before)}; ${lost}.`;
  const reached = failure.reached ?? 0;
  if (failure.recovered_at !== undefined) {
    return (
      `${first} **It recovered** at ${failure.recovered_at}: ${attempts(reached)} ` +
      `reached it after its first failure.`
    );
  }
  return (
    `${first} It was still unreachable at the ` +
    `end${reached > 0 ? ` (${attempts(reached)} reached it between outages)` : ''}.`
  );
}

/** The markdown report printed on exit and written by --report. */
export function renderReport(s: Slis, title = 'Tool-call plane chaos report'): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const lines = [
    `# ${title}`,
    '',
    // The notes that apply, each a paragraph; none leaves no empty lines behind.
    ...(s.upstream_failure ? [describeUpstreamFailure(s.upstream_failure), ''] : []),
    ...(s.calls === 0 ? ['**Inconclusive: no tool calls were observed.**', ''] : []),
    '| SLI | value |',
    '|---|---|',
    `| tool calls (logical) / attempts / tasks | ${s.calls} / ${s.attempts} / ${s.tasks} |`,
    `| TCSR | ${pct(s.tcsr)} |`,
    `| availability (A) | ${pct(s.availability)} |`,
    // C = correct / responded is undefined when nothing was answered: 0% would read as "wrong answers".
    `| correctness (C) | ${s.calls > 0 && s.availability === 0 ? 'n/a (no call was answered)' : pct(s.correctness)} |`,
    `| ETA = A × C | ${pct(s.eta)} |`,
    `| schema conformance | ${pct(s.schema_conformance)} |`,
    `| deadline adherence | ${pct(s.deadline_adherence)} |`,
    `| TCAF | ${s.tcaf.toFixed(2)} |`,
    `| blast radius (measured) | ${pct(s.blast_radius)} |`,
    `| blast radius (predicted 1 − (1 − e)^TCAF at the measured e = ` +
      `${pct(s.error_rate)}) | ${pct(s.predicted_blast_radius)} |`,
    `| amplification (attempts / calls) | ${s.amplification.toFixed(2)} |`,
    ...(s.queueing.queued_attempts > 0
      ? [
          `| head-of-line waits (attempts / mean / p95 / max) | ${s.queueing.queued_attempts} ` +
            `/ ${s.queueing.mean_ms} ms / ${s.queueing.p95_ms} ms / ${s.queueing.max_ms} ` +
            `ms |`,
        ]
      : []),
    `| proxy internal errors / evicted pending requests | ${s.internal_errors} / ${s.evicted} |`,
    '',
    `Injected: ${
      Object.entries(s.injected)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
  ];
  if (s.verdicts.length > 0) {
    lines.push(
      '',
      '## Client behaviour',
      '',
      '| tool | fault | failures | stopped | retried | runaway (3+) | blind retries |',
      '|---|---|---|---|---|---|---|',
    );
    for (const v of s.verdicts)
      lines.push(
        `| ${v.tool} | ${v.fault} | ${v.failures} | ${v.stopped} | ${v.retried} | ${v.runaway} | ${v.blind_retries} |`,
      );
  }
  return lines.filter((l, i) => l !== '' || i > 0).join('\n') + '\n';
}
