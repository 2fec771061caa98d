/**
 * Moments and windows on the run's timeline (t = 0 is the start of the load), and the three
 * phases: baseline before the first fault, inject while faults act, recover after the last one.
 */
import { InputError } from '../kernel/errors.js';
import { formatDuration, parseDuration } from '../duration.js';
import type { Phases, Step, Window } from './model.js';

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

/**
 * The phases: injecting steps are the fault steps and the tool-call steps (each breaks something);
 * probe steps probe and do not make a phase. With none, the inject window is empty at 0.
 */
export function phasesOf(steps: readonly Step[], durationMs: number): Phases {
  const injecting = steps.filter((step) => step.kind !== 'probe');
  const first = injecting.length === 0 ? 0 : Math.min(...injecting.map((step) => step.atMs));
  const last = injecting.length === 0 ? 0 : Math.max(...injecting.map((step) => stepEnd(step) ?? step.atMs));
  return {
    baseline: { label: 'baseline', fromMs: 0, toMs: first },
    inject: { label: 'inject', fromMs: first, toMs: last },
    recover: { label: 'recover', fromMs: last, toMs: durationMs },
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
  if (phase === 'inject' || phase === 'baseline' || phase === 'recover') return { ...phases[phase], label: phase };
  if (phase === 'run') return { label: 'run', fromMs: 0, toMs: durationMs };
  const step = steps.find((candidate) => candidate.name === label);
  if (step) return { label, fromMs: step.atMs, toMs: stepEnd(step) ?? durationMs };
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
