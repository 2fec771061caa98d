/**
 * The verdicts: each expectation judged on what was measured in its window, then the experiment.
 *
 * - An SLO is evaluated over the requests due in its window (src/scenario/slo.ts, as `faultline
 *   run` does). Failed: the window's figure, and the moment it broke — the first second whose own
 *   requests breach it (or the window's end when only the whole does). Inconclusive when no
 *   request fell in the window, or, while faults act, when no fault in the window acted.
 * - An HTTP check: every probe must hold (continuous, start, end, edge) or one must (eventually).
 * - A command must exit 0; one that could not start says nothing about the system: inconclusive.
 * - recover_within: the first moment after the last fault went off (or the abort cleared it) from
 *   which the steady-state SLOs hold over the rest of the run, within the allowance.
 * - The experiment: failed when aborted or any expectation failed; inconclusive when any was
 *   inconclusive or none was checked; passed otherwise. Free-text assertions are "not checked".
 */
import { formatDuration } from '../duration.js';
import { plural } from '../kernel/plural.js';
import { holds as meets } from '../prometheus/condition.js';
import { selectPercentiles, type RequestSamples } from '../load/index.js';
import { verdictOfProbe } from '../probe/report.js';
import { evaluateSlos, type Slo } from '../scenario/index.js';
import type { Experiment, FaultStep, Window } from './model.js';
import { judgePromql } from './evaluate-promql.js';
import { stepWindow } from './timeline.js';
import type { PromqlObservation } from './promql-watch.js';
import type {
  CheckObservation,
  ExperimentResult,
  ExpectationVerdict,
  FaultRecord,
  PlaneStepRecord,
  TimelineBucket,
  Verdict,
} from './result.js';

export interface Evidence {
  experiment: Experiment;
  samples: RequestSamples | undefined;
  faults: FaultRecord[];
  steps: PlaneStepRecord[];
  checks: Record<string, CheckObservation[]>;
  commands: ExperimentResult['commands'];
  aborted: ExperimentResult['aborted'];
  /** What each PromQL expectation's polls read, by id. */
  promql?: Record<string, PromqlObservation[]>;
  /** Remotes that accepted no connection before the first fault (preflight.ts, the runner). */
  unreachable?: ExperimentResult['unreachable'];
}

export interface Evaluation {
  expectations: ExpectationVerdict[];
  verdict: Verdict;
  reasons: string[];
  injected: string[];
}

export function evaluate(evidence: Evidence): Evaluation {
  const { experiment } = evidence;
  const expectations: ExpectationVerdict[] = [];
  for (const expectation of experiment.expectations) {
    const base = {
      id: expectation.id,
      title: expectation.title,
      kind: expectation.kind,
      role: expectation.role,
      window: expectation.window,
    };
    const quiet = expectation.role === 'expect' ? faultsQuiet(evidence.faults, expectation.window) : undefined;
    let verdict: Pick<ExpectationVerdict, 'status' | 'figure' | 'atMs' | 'reason'>;
    if (expectation.kind === 'slo') verdict = judgeSlo(expectation.slo, expectation.window, evidence.samples);
    else if (expectation.kind === 'promql')
      verdict = judgePromql(expectation.window, evidence.promql?.[expectation.id] ?? []);
    else if (expectation.kind === 'http')
      verdict = judgeCheck(expectation.mode, expectation.window, evidence.checks[expectation.id] ?? []);
    else verdict = judgeCommand(evidence.commands.find((command) => command.id === expectation.id));
    if (quiet !== undefined && verdict.status !== 'inconclusive') {
      verdict = {
        status: 'inconclusive',
        figure: verdict.figure,
        atMs: null,
        reason:
          `the fault never acted in this window (${quiet}), so ${verdict.status === 'passed' ? 'holding' : 'breaking'} ` +
          `says nothing about it`,
      };
    }
    expectations.push({ ...base, ...verdict });
  }
  if (experiment.recoverWithinMs !== undefined) expectations.push(judgeRecovery(evidence));
  for (const step of experiment.steps) {
    const record = evidence.steps.find((candidate) => candidate.index === step.index);
    const window = stepWindow(step, experiment.durationMs, evidence.aborted?.atMs);
    const notRun = {
      status: 'inconclusive' as const,
      figure: '',
      atMs: null,
      reason: record?.error ?? 'the step did not run',
    };
    if (step.kind === 'toolcall') {
      step.expect.forEach((condition, j) => {
        const id = `method[${step.index}].expect[${j}]`;
        const base = { id, title: `${step.name}: ${condition.text}`, kind: 'toolcall' as const, role: 'step', window };
        if (!record?.slis) {
          expectations.push({ ...base, ...notRun });
          return;
        }
        const value = (record.slis as unknown as Record<string, number>)[condition.sli]!;
        const holds = meets(condition, value);
        const figure = `${condition.sli} ${round(value)} over ${record.slis.calls} calls`;
        expectations.push({
          ...base,
          status: record.slis.calls === 0 ? 'inconclusive' : holds ? 'passed' : 'failed',
          figure,
          atMs: record.endedAtMs,
          reason:
            record.slis.calls === 0
              ? 'no call was made'
              : holds
                ? `${figure} (${condition.op} ${condition.value})`
                : `${figure}, not ${condition.op} ${condition.value}`,
        });
      });
    }
    if (step.kind === 'probe' && step.mustPass) {
      const base = {
        id: `method[${step.index}]`,
        title: `${step.name} passes`,
        kind: 'probe' as const,
        role: 'step',
        window,
      };
      const probe = record?.probe;
      if (!probe) expectations.push({ ...base, ...notRun });
      else {
        const figure = `${probe.summary.passed ?? 0} leaves passed, ${probe.summary.failed ?? 0} failed`;
        const status = verdictOfProbe(probe.verdict);
        expectations.push({
          ...base,
          status,
          figure,
          atMs: record!.endedAtMs,
          reason:
            status === 'failed'
              ? `failed: ${probe.failedLeaves.join(', ')}`
              : status === 'passed'
                ? figure
                : (record!.error ?? 'no leaf passed or failed'),
        });
      }
    }
  }
  if (evidence.aborted) {
    const { atMs, rule, figure } = evidence.aborted;
    expectations.push({
      id: 'abort_when',
      title: `abort_when: ${rule}`,
      kind: 'abort',
      role: 'abort',
      window: { label: 'inject', fromMs: experiment.phases.inject.fromMs, toMs: experiment.phases.inject.toMs },
      status: 'failed',
      figure,
      atMs,
      reason: `aborted at ${formatDuration(atMs)}: ${figure}; every fault was cleared then`,
    });
  }
  experiment.notChecked.forEach((text, index) => {
    expectations.push({
      id: `assertions[${index}]`,
      title: text,
      kind: 'text',
      role: 'text',
      window: null,
      status: 'not_checked',
      figure: '',
      atMs: null,
      reason: 'free text: nothing in the file says how to check it',
    });
  });
  const { verdict, reasons } = overall(expectations, evidence);
  return { expectations, verdict, reasons, injected: injected(evidence) };
}

/**
 * Why no fault acted in `window` (when none did), or undefined. A window no fault was planned in
 * (`during: baseline`, a span before the first step) asks nothing of the faults: it is judged on
 * its own terms.
 */
function faultsQuiet(faults: readonly FaultRecord[], window: Window): string | undefined {
  if (faults.length === 0) return undefined;
  if (!faults.some((fault) => fault.plannedFromMs < window.toMs && fault.plannedToMs > window.fromMs)) return undefined;
  const overlapping = faults.filter(
    (fault) => fault.onAtMs !== null && fault.onAtMs < window.toMs && (fault.offAtMs ?? Infinity) > window.fromMs,
  );
  if (overlapping.some((fault) => fault.acted !== false)) return undefined;
  if (overlapping.length === 0) return 'no fault was on during it';
  return overlapping.map((fault) => `${fault.name}: ${fault.actedDetail}`).join('; ');
}

interface WindowFigures {
  requests: number;
  failed: number;
  sorted: Float64Array;
}

function figuresOf(samples: RequestSamples, fromMs: number, toMs: number): WindowFigures {
  const first = lowerBound(samples, fromMs);
  const end = lowerBound(samples, toMs);
  let failed = 0;
  for (let i = first; i < end; i++) if (samples.errorClass[i] !== 0) failed++;
  return { requests: end - first, failed, sorted: Float64Array.from(samples.latencyMs.subarray(first, end)).sort() };
}

function lowerBound(samples: RequestSamples, ms: number): number {
  let low = 0;
  let high = samples.count;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (samples.intendedStartMs[mid]! < ms) low = mid + 1;
    else high = mid;
  }
  return low;
}

function describeSlo(slo: Slo, observed: number): string {
  return slo.type === 'error'
    ? `errors ${round(observed)}% (limit ${slo.threshold}%)`
    : `p${slo.objective} ${round(observed)} ms (limit ${slo.threshold} ms)`;
}

function judgeSlo(
  slo: Slo,
  window: Window,
  samples: RequestSamples | undefined,
): Pick<ExpectationVerdict, 'status' | 'figure' | 'atMs' | 'reason'> {
  if (!samples) return { status: 'inconclusive', figure: '', atMs: null, reason: 'no load ran' };
  const whole = figuresOf(samples, window.fromMs, window.toMs);
  if (whole.requests === 0)
    return {
      status: 'inconclusive',
      figure: '',
      atMs: null,
      reason: `no request fell in the window (${formatDuration(window.fromMs)}–${formatDuration(window.toMs)})`,
    };
  const result = evaluateSlos([slo], whole.sorted, whole.failed)[0]!;
  const figure = `${describeSlo(slo, result.observed)} over ${plural(whole.requests, 'request')}`;
  if (result.pass) return { status: 'passed', figure, atMs: null, reason: figure };
  // The moment it broke: the first second of the window whose own requests breach it.
  for (let from = window.fromMs; from < window.toMs; from += 1000) {
    const second = figuresOf(samples, from, Math.min(window.toMs, from + 1000));
    if (second.requests === 0) continue;
    const own = evaluateSlos([slo], second.sorted, second.failed)[0]!;
    if (!own.pass)
      return {
        status: 'failed',
        figure,
        atMs: from,
        reason:
          `broke at ${formatDuration(from)}: ${describeSlo(slo, own.observed)} ` +
          `in the second from then; ${figure} in the window`,
      };
  }
  return {
    status: 'failed',
    figure,
    atMs: window.toMs,
    reason: `${figure}: no single second breached it, the window as a whole did`,
  };
}

function judgeCheck(
  mode: string,
  window: Window,
  observations: readonly CheckObservation[],
): Pick<ExpectationVerdict, 'status' | 'figure' | 'atMs' | 'reason'> {
  const seen = observations.filter(
    (observation) => observation.atMs >= window.fromMs - 50 && observation.atMs <= window.toMs + 50,
  );
  if (seen.length === 0)
    return { status: 'inconclusive', figure: '', atMs: null, reason: 'no check ran in the window' };
  const ok = seen.filter((observation) => observation.ok).length;
  const figure = `${ok} of ${seen.length} checks held`;
  if (mode === 'eventually') {
    const first = seen.find((observation) => observation.ok);
    return first
      ? { status: 'passed', figure, atMs: first.atMs, reason: `held at ${formatDuration(first.atMs)}` }
      : {
          status: 'failed',
          figure,
          atMs: window.toMs,
          reason: `never held in the window; last: ${seen[seen.length - 1]!.detail}`,
        };
  }
  const broken = seen.find((observation) => !observation.ok);
  return broken
    ? {
        status: 'failed',
        figure,
        atMs: broken.atMs,
        reason: `broke at ${formatDuration(broken.atMs)}: ${broken.detail}`,
      }
    : { status: 'passed', figure, atMs: null, reason: figure };
}

function judgeCommand(
  command: ExperimentResult['commands'][number] | undefined,
): Pick<ExpectationVerdict, 'status' | 'figure' | 'atMs' | 'reason'> {
  if (!command)
    return {
      status: 'inconclusive',
      figure: '',
      atMs: null,
      reason: 'it did not run (the run ended before its window)',
    };
  const ran = `ran ${formatDuration(command.startedAtMs)}–${formatDuration(command.endedAtMs)}`;
  if (command.startError)
    return {
      status: 'inconclusive',
      figure: ran,
      atMs: command.startedAtMs,
      reason: `could not be started (${command.startError}): that says nothing about the system`,
    };
  const tail = command.output.trim().split('\n').slice(-3).join(' | ');
  if (command.timedOut)
    return {
      status: 'failed',
      figure: ran,
      atMs: command.endedAtMs,
      reason: `timed out and was killed${tail ? `; last output: ${tail}` : ''}`,
    };
  if (command.exitCode === 0)
    return { status: 'passed', figure: `exit 0, ${ran}`, atMs: command.endedAtMs, reason: `exit 0 (${ran})` };
  const how = command.exitCode === null ? `killed by ${command.signal}` : `exit ${command.exitCode}`;
  return {
    status: 'failed',
    figure: `${how}, ${ran}`,
    atMs: command.endedAtMs,
    reason: `${how} at ${formatDuration(command.endedAtMs)}${tail ? `; last output: ${tail}` : ''}`,
  };
}

/** recover_within: measured from the moment the last fault went off (the abort's, when aborted). */
function judgeRecovery(evidence: Evidence): ExpectationVerdict {
  const { experiment, samples } = evidence;
  const within = experiment.recoverWithinMs!;
  const offs = evidence.faults.map((fault) => fault.offAtMs).filter((ms): ms is number => ms !== null);
  const lastOff = evidence.aborted?.atMs ?? (offs.length > 0 ? Math.max(...offs) : experiment.phases.inject.toMs);
  const deadline = lastOff + within;
  const base = {
    id: 'recover_within',
    title: `recover_within ${formatDuration(within)}: ${experiment.steadySlos.map((slo) => slo.title).join(', ')}`,
    kind: 'recover_within' as const,
    role: 'recover',
    window: { label: 'recover', fromMs: lastOff, toMs: experiment.durationMs },
  };
  if (!samples || figuresOf(samples, lastOff, experiment.durationMs).requests === 0)
    return { ...base, status: 'inconclusive', figure: '', atMs: null, reason: 'no request fell after the last fault' };
  const recoveredAt = recoveryMoment(samples, experiment.steadySlos, lastOff, experiment.durationMs);
  if (recoveredAt !== undefined && recoveredAt <= deadline) {
    return {
      ...base,
      status: 'passed',
      figure: `back to the steady state ${formatDuration(recoveredAt - lastOff)} after the last fault ended`,
      atMs: recoveredAt,
      reason:
        `recovered at ${formatDuration(recoveredAt)}, ${formatDuration(recoveredAt - lastOff)} ` +
        `after the last fault ended at ${formatDuration(lastOff)} ` +
        `(allowed ${formatDuration(within)})`,
    };
  }
  if (recoveredAt === undefined && experiment.durationMs < deadline) {
    return {
      ...base,
      status: 'inconclusive',
      figure: '',
      atMs: null,
      reason:
        `not recovered when the run ended ${formatDuration(experiment.durationMs - lastOff)} ` +
        `after the last fault, before the ${formatDuration(within)} ` +
        `allowed were over: lengthen the run`,
    };
  }
  const figure =
    recoveredAt === undefined
      ? 'not back to the steady state before the run ended'
      : `back to the steady state only ${formatDuration(recoveredAt - lastOff)} after the last fault ended`;
  return {
    ...base,
    status: 'failed',
    figure,
    atMs: deadline,
    reason: `${figure} (allowed ${formatDuration(within)}, from ${formatDuration(lastOff)})`,
  };
}

/**
 * The first moment t ≥ from such that every SLO holds over the requests due in [t, end): the rest
 * of the run is back to the steady state. Probed every 100 ms (coarser for long recoveries, so the
 * work stays bounded); undefined when no moment qualifies.
 */
export function recoveryMoment(
  samples: RequestSamples,
  slos: readonly Slo[],
  fromMs: number,
  endMs: number,
): number | undefined {
  const step = Math.max(100, Math.ceil((endMs - fromMs) / 600 / 100) * 100);
  for (let t = fromMs; t < endMs; t += step) {
    const figures = figuresOf(samples, t, endMs);
    if (figures.requests === 0) return undefined;
    if (evaluateSlos(slos, figures.sorted, figures.failed).every((result) => result.pass)) return t;
  }
  return undefined;
}

function overall(
  expectations: readonly ExpectationVerdict[],
  evidence: Evidence,
): { verdict: Verdict; reasons: string[] } {
  const failed = expectations.filter((e) => e.status === 'failed');
  const inconclusive = expectations.filter((e) => e.status === 'inconclusive');
  const passed = expectations.filter((e) => e.status === 'passed');
  const quietFaults = evidence.faults.filter((fault) => fault.acted === false || fault.onAtMs === null);
  const reasons: string[] = [];
  const unreachable = evidence.unreachable ?? [];
  if (unreachable.length > 0)
    reasons.push(
      `${unreachable.map((down) => `${down.where} (${down.address}) was unreachable: ${down.why}`).join('; ')}` +
        ' — nothing the experiment claims about it was tested',
    );
  if (evidence.aborted)
    reasons.push(
      `aborted at ${formatDuration(evidence.aborted.atMs)} ` +
        `(${evidence.aborted.rule}: ${evidence.aborted.figure}); every ` +
        `fault was cleared then` +
        (evidence.aborted.endedAtMs !== undefined
          ? `; the run ended at ${formatDuration(evidence.aborted.endedAtMs)}, once recover_within was judged`
          : ''),
    );
  for (const e of failed.filter((e) => e.kind !== 'abort')) reasons.push(`failed: ${e.title} — ${e.reason}`);
  for (const e of inconclusive) reasons.push(`inconclusive: ${e.title} — ${e.reason}`);
  for (const fault of quietFaults)
    reasons.push(`${fault.name}: ${fault.onAtMs === null ? fault.actedDetail : `never acted (${fault.actedDetail})`}`);
  if (failed.length > 0 || evidence.aborted) return { verdict: 'failed', reasons };
  if (inconclusive.length > 0 || unreachable.length > 0) return { verdict: 'inconclusive', reasons };
  if (passed.length === 0)
    return {
      verdict: 'inconclusive',
      reasons: [...reasons, 'nothing was checked: give steady_state, expect or recover_within'],
    };
  if (evidence.faults.length > 0 && quietFaults.length === evidence.faults.length)
    return {
      verdict: 'inconclusive',
      reasons: [...reasons, 'no fault acted: the expectations held, but nothing was broken'],
    };
  return {
    verdict: 'passed',
    reasons: [
      `${passed.length} expectation${passed.length > 1 ? 's' : ''} held${heldWhile(evidence.faults)}`,
      ...reasons,
    ],
  };
}

/** What the faults did while the expectations held, in words true to the run: none, all acted, or (said by the reasons)
 * some. */
function heldWhile(faults: Evidence['faults']): string {
  if (faults.length === 0) return '; no fault in this experiment';
  return faults.every((fault) => fault.acted === true) ? ' while every fault acted' : '';
}

/** The faults that acted, named as the run records name them (coverage reads these). */
function injected(evidence: Evidence): string[] {
  const names = new Set<string>();
  for (const record of evidence.faults) {
    if (record.acted !== true) continue;
    const step = evidence.experiment.steps.find((candidate) => candidate.index === record.index);
    if (step?.kind !== 'fault') continue;
    const type =
      step.config.kind === 'network'
        ? String(step.config.spec.type)
        : String((step.config.spec as { type: string }).type)
            .trim()
            .toLowerCase()
            .replace(/-/g, '_');
    names.add(step.config.kind === 'network' ? type : `${requestPlane(evidence.experiment, step)}_${type}`);
  }
  for (const record of evidence.steps)
    for (const [fault, count] of Object.entries(record.slis?.injected ?? {}))
      if (count > 0) names.add(`toolcall:${fault}`);
  return [...names].sort();
}

/**
 * What a request fault ran on, as its run-record prefix: `tcp_` on a tcp:// mapping (a reset, a
 * held or cut stream), `resp_` on a redis:// one (per command), `http_` otherwise (HTTP, or a
 * mapping without a scheme, sorted per connection).
 */
function requestPlane(experiment: Experiment, step: FaultStep): 'http' | 'resp' | 'tcp' {
  if (step.placement.plane !== 'proxy') return 'http';
  const target = step.placement.target;
  const mapping = experiment.proxies.find((m) => m.name === target || String(m.listenPort) === target);
  return mapping?.protocol ?? 'http';
}

/** Per-bucket figures: for the charts a bucket length that gives at most ~150 points, or `fixedMs` (the report's
 * seconds). */
export function timelineOf(
  samples: RequestSamples,
  durationMs: number,
  fixedMs?: number,
): { bucketMs: number; buckets: TimelineBucket[] } {
  const bucketMs =
    fixedMs ??
    [100, 200, 250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000].find((ms) => durationMs / ms <= 150) ??
    60_000;
  const buckets: TimelineBucket[] = [];
  for (let from = 0; from < durationMs; from += bucketMs) {
    const first = lowerBound(samples, from);
    const end = lowerBound(samples, from + bucketMs);
    let errors = 0;
    for (let i = first; i < end; i++) if (samples.errorClass[i] !== 0) errors++;
    const requests = end - first;
    const [p50, p95, p99] =
      requests === 0 ? [null, null, null] : selectPercentiles(samples.latencyMs.slice(first, end), [50, 95, 99]);
    buckets.push({
      fromMs: from,
      toMs: Math.min(durationMs, from + bucketMs),
      requests,
      errors,
      errorPercent: requests === 0 ? null : (errors / requests) * 100,
      p50Ms: p50 ?? null,
      p95Ms: p95 ?? null,
      p99Ms: p99 ?? null,
    });
  }
  return { bucketMs, buckets };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
