/**
 * Moments and windows on the run's timeline (t = 0 is the start of the load), and the three
 * phases: baseline before the first fault, inject while faults act, recover after the last one.
 */
import { InputError } from '../kernel/errors.js';
import { formatDuration, parseDuration } from '../duration.js';
import type { Experiment, Phases, Step, Window } from './model.js';

/** The forms an experiment's durations take: `500ms`, `5s`, `1m30s`, `1h`, a number of seconds. */
const COMPACT_DURATION = /^\s*(?:\d+(?:\.\d+)?(?:ms|s|m|h))+\s*$|^\s*\d+(?:\.\d+)?\s*$/i;

/**
 * A duration field: a number of seconds, or a string the one duration parser reads, in the
 * compact forms only. `3 seconds` is refused rather than read: a file is code that other tools
 * (k6, Chaos Mesh, FIS) are given in their own compact spellings, and a word form is a guess.
 */
export function durationField(value: unknown, what: string): number {
  if (typeof value === 'string' && !COMPACT_DURATION.test(value))
    throw new InputError(
      `${what}: ${JSON.stringify(value)} is not a duration; write one ` +
        `such as 500ms, 5s, 1m30s, 1h or a number of seconds`,
    );
  const ms = typeof value === 'number' ? value * 1000 : parseDuration(String(value), what);
  if (!Number.isFinite(ms) || ms < 0)
    throw new InputError(`${what}: must be a duration of 0 or more (got ${JSON.stringify(value)})`);
  return ms;
}

/** A moment: a duration from the start, or a percentage of the run (which must then be known). */
export function momentField(value: unknown, what: string, runMs: number | undefined): number {
  const percent = typeof value === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value) : null;
  if (!percent) return durationField(value, what);
  if (runMs === undefined)
    throw new InputError(
      `${what}: ${value} is a share of the run, whose length is not ` +
        `given; give load.duration (or duration), or write a time such as ` +
        `5s`,
    );
  const share = Number(percent[1]);
  if (share > 100) throw new InputError(`${what}: ${value} is over 100%`);
  return (share / 100) * runMs;
}

export function stepEnd(step: Step): number | undefined {
  return step.forMs === undefined ? undefined : step.atMs + step.forMs;
}

/** The steps that make the phases: fault and tool-call steps (each breaks something); probe steps only probe. */
export function injectingSteps(steps: readonly Step[]): Step[] {
  return steps.filter((step) => step.kind !== 'probe');
}

/**
 * The phases. With no injecting step nothing is ever broken: the whole run is the baseline, and
 * inject and recover are empty at its end (read.ts then judges `expect` and the steady state over
 * the run, and refuses `during: inject` or `recover`).
 */
export function phasesOf(steps: readonly Step[], durationMs: number): Phases {
  const injecting = injectingSteps(steps);
  const first = injecting.length === 0 ? durationMs : Math.min(...injecting.map((step) => step.atMs));
  const last = injecting.length === 0 ? durationMs : Math.max(...injecting.map((step) => stepEnd(step) ?? step.atMs));
  return {
    baseline: { label: 'baseline', fromMs: 0, toMs: first },
    inject: { label: 'inject', fromMs: first, toMs: last },
    recover: { label: 'recover', fromMs: last, toMs: durationMs },
  };
}

/**
 * A step's own window: its start to its end (to the run's end when it runs until done); an abort after its start
 * ended it then (every fault cleared, every plane step cut). One the abort came before never ran: its plan is kept.
 */
export function stepWindow(step: Step, durationMs: number, abortedAtMs?: number): Window {
  const toMs = Math.min(stepEnd(step) ?? durationMs, durationMs);
  const cut = abortedAtMs !== undefined && step.atMs < abortedAtMs ? Math.min(toMs, abortedAtMs) : toMs;
  return { label: step.name, fromMs: Math.min(step.atMs, durationMs), toMs: cut };
}

/**
 * Where the steady state is judged again: from `recover_within` after the recover phase opens
 * (from its start without recover_within) to the run's end.
 */
export function afterRecoveryWindow(phases: Phases, recoverWithinMs: number | undefined, durationMs: number): Window {
  return {
    label: recoverWithinMs === undefined ? 'after the last fault' : 'after recover_within',
    fromMs: Math.min(durationMs, phases.recover.fromMs + (recoverWithinMs ?? 0)),
    toMs: durationMs,
  };
}

/**
 * The experiment as it ran: the one place the windows of a run cut short are derived, so the
 * verdicts, the timeline and every report and export say the same windows.
 *
 * - Ended at `endMs` (an abort's recovery judged, a command after `--` exited): every window is cut there.
 * - Aborted at `abortedAtMs`, when every fault was cleared: inject ends then, recover starts then, the
 *   steady state after recovery is judged from `recover_within` after it (from it without
 *   recover_within), and a step's window ends then (one not started by then keeps its plan: it never
 *   ran, and is judged so). Explicit spans ("10s..20s") keep their bounds, cut at the end.
 */
export function asRan(experiment: Experiment, run: { abortedAtMs?: number; endMs: number }): Experiment {
  const { endMs, abortedAtMs: abort } = run;
  const cut = (window: Window, at = endMs): Window => ({
    ...window,
    fromMs: Math.min(window.fromMs, at, endMs),
    toMs: Math.min(window.toMs, at, endMs),
  });
  const planned = experiment.phases;
  const phases: Phases =
    abort === undefined
      ? { baseline: cut(planned.baseline), inject: cut(planned.inject), recover: cut(planned.recover) }
      : {
          baseline: cut(planned.baseline, abort),
          inject: cut(planned.inject, abort),
          recover: { ...planned.recover, fromMs: Math.min(abort, endMs), toMs: endMs },
        };
  const after = afterRecoveryWindow(phases, experiment.recoverWithinMs, endMs);
  const windowAsRan = (window: Window, role: string): Window => {
    if (role === 'steady-after') return { ...after, label: window.label };
    const label = window.label;
    if (label === 'baseline' || label === 'inject' || label === 'recover') return phases[label];
    if (label === 'run') return { ...window, fromMs: 0, toMs: endMs };
    const step = experiment.steps.find((candidate) => candidate.name === label);
    return step ? stepWindow(step, endMs, abort) : cut(window);
  };
  return {
    ...experiment,
    durationMs: endMs,
    ...(experiment.load ? { load: { ...experiment.load, durationMs: endMs } } : {}),
    phases,
    expectations: experiment.expectations.map((expectation) => ({
      ...expectation,
      window: windowAsRan(expectation.window, expectation.role),
    })),
  };
}

/** A `during` value: a phase, run, a step's name, or "A..B" (moments). */
export function windowOf(
  text: string,
  what: string,
  phases: Phases,
  steps: readonly Step[],
  durationMs: number,
): Window {
  const label = text.trim();
  const phase = label.toLowerCase();
  if (phase === 'inject' || phase === 'recover') {
    if (injectingSteps(steps).length === 0)
      throw new InputError(
        `${what}: "${text}" is empty: the experiment has no fault or tool-call step, so nothing is injected or ` +
          `recovered from; write during: run (the default here), baseline, or a span such as "5s..15s"`,
      );
    return { ...phases[phase], label: phase };
  }
  if (phase === 'baseline') return { ...phases[phase], label: phase };
  if (phase === 'run') return { label: 'run', fromMs: 0, toMs: durationMs };
  const step = steps.find((candidate) => candidate.name === label);
  if (step) return stepWindow(step, durationMs);
  const range = /^(.+?)\s*\.\.\s*(.+)$/.exec(label);
  if (range) {
    const fromMs = momentField(range[1]!, what, durationMs);
    const toMs = momentField(range[2]!, what, durationMs);
    if (!(toMs > fromMs)) throw new InputError(`${what}: "${text}" ends before it starts`);
    if (toMs > durationMs)
      throw new InputError(`${what}: "${text}" ends after the run (${formatDuration(durationMs)})`);
    return { label, fromMs, toMs };
  }
  const names = steps.map((candidate) => JSON.stringify(candidate.name));
  throw new InputError(
    `${what}: "${text}" is not a window; accepted: inject, baseline, ` +
      `recover, run, "10s..20s"${names.length ? `, or a step: ${names.join(', ')}` : ''}`,
  );
}

/** "5s–15s" for reports. */
export function describeWindow(window: Window): string {
  return `${formatDuration(window.fromMs)}–${formatDuration(window.toMs)}`;
}
