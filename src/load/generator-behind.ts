/**
 * Whether a run's load generator, not the target, was behind: the one judgment of it, shared by the
 * scenario report and the experiment runner's warnings. Send lag alone cannot say so: it also holds the
 * wait for a free connection behind a slow target, which is latency the target caused and must stay counted.
 * sentLate counts only the scheduler's own lateness (open-loop.ts).
 */
import { plural } from '../kernel/plural.js';
import { SENT_LATE_MS, type OpenLoopResult } from './open-loop.js';

/** More than this share of a run's requests sent late for the generator's own reasons says it was behind. */
export const GENERATOR_BEHIND_SHARE = 0.01;

/** The generator's own lateness in a run: its requests sent late, their share, and the worst tick. */
export interface GeneratorLateness {
  /** Requests the scheduler sent more than thresholdMs after their intended start (OpenLoopResult.sentLate). */
  sentLate: number;
  /** sentLate as a percentage of the run's requests. */
  sentLatePercent: number;
  /** The most the scheduler's tick ran late (ms). */
  worstTickLateMs: number;
  thresholdMs: number;
  /** sentLatePercent is over GENERATOR_BEHIND_SHARE: the figures measure this machine as much as the target. */
  behind: boolean;
}

export function generatorLateness(
  result: Pick<OpenLoopResult, 'requests' | 'sentLate' | 'worstTickLateMs'>,
): GeneratorLateness {
  const share = result.requests === 0 ? 0 : result.sentLate / result.requests;
  return {
    sentLate: result.sentLate,
    sentLatePercent: share * 100,
    worstTickLateMs: result.worstTickLateMs,
    thresholdMs: SENT_LATE_MS,
    behind: share > GENERATOR_BEHIND_SHARE,
  };
}

/** A sentence for a run whose generator was behind, else null. */
export function generatorBehindText(lateness: GeneratorLateness): string | null {
  if (!lateness.behind) return null;
  return (
    `the load generator (this machine) ran behind: ${plural(lateness.sentLate, 'request')} ` +
    `(${lateness.sentLatePercent.toFixed(1)}%) left more than ${lateness.thresholdMs} ms ` +
    `after ${lateness.sentLate === 1 ? 'its' : 'their'} intended start ` +
    `because faultline's own thread was late (${worstLate(lateness)}), not because they ` +
    `waited for a connection; their latency measures this machine as much as the target`
  );
}

/**
 * "up to 289 ms": the worst tick's lateness rounded up, never down, so it is never read as less than the threshold the
 * late requests passed ("more than 10 ms" late, "up to 11 ms", not "up to 10 ms").
 */
export function worstLate(lateness: GeneratorLateness): string {
  return `up to ${Math.ceil(lateness.worstTickLateMs)} ms`;
}
