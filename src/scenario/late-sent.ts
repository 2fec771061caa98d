/**
 * Whether a failed latency SLO is the load generator's lateness rather than the target's: when the generator ran
 * behind (load/generator-behind.ts), its late requests carry this machine's delay in their latency. Each failed latency
 * SLO is judged again without the requests sent more than SENT_LATE_MS late; one that then holds could have failed
 * through the generator alone, so the verdict cannot say the target failed it (verdict.ts: inconclusive).
 */
import { latenciesIn, latenciesSentOnTime, SENT_LATE_MS, type RequestSamples } from '../load/index.js';
import { evaluateSlos, type Slo, type SloResult } from './slo.js';

/** The failed latency SLOs judged again over the requests sent on time (PhaseResult.slosSentOnTime). */
export interface SlosSentOnTime {
  /** The requests judged: those sent at most lateMs after their intended start. */
  requests: number;
  /** The requests left out. */
  leftOut: number;
  lateMs: number;
  slos: SloResult[];
}

/**
 * Undefined unless the generator ran behind and a latency SLO failed. `window` is what the SLOs were judged over
 * (the fault window, or the whole phase).
 */
export function judgeSentOnTime(
  slos: readonly Slo[],
  results: readonly SloResult[],
  samples: RequestSamples,
  window: { fromMs: number; toMs: number },
  generatorBehind: boolean,
): SlosSentOnTime | undefined {
  if (!generatorBehind) return undefined;
  const failed = slos.filter((slo, index) => slo.type === 'latency' && results[index]?.pass === false);
  if (failed.length === 0) return undefined;
  const onTime = latenciesSentOnTime(samples, window, SENT_LATE_MS);
  const judged = latenciesIn(samples, window).length;
  return {
    requests: onTime.length,
    leftOut: judged - onTime.length,
    lateMs: SENT_LATE_MS,
    slos: evaluateSlos(failed, onTime, 0),
  };
}
