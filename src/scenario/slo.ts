/**
 * Service-level objectives for a scenario run: parsing the strings agents and people write, and
 * evaluating them against the run's requests.
 *
 * Two kinds, as in fault's report:
 * - latency: "P% of requests complete within T" — written `99% @ 350ms` (fault's form),
 *   `p(99) < 350` (k6's threshold form; ms) or `p99 < 350ms`. It passes when the run's P-th
 *   percentile latency (from the intended start, timeouts included at their elapsed time) is at
 *   or under T (fault's rule). The percentile is R-6, interpolated between neighbouring requests,
 *   so this is close to but not exactly "at most (100 − P)% took longer than T": with ten
 *   requests of 10…100 ms, p90 is 99 ms, so `90% @ 95ms` fails although only 10% are over 95 ms.
 * - error: "at most E% of requests fail" — written `errors < 1%`, `error_rate < 1%` or k6's
 *   `rate < 0.01`. Failures are every error class: refused, reset, timeout, HTTP 5xx, other.
 *   It passes when the error percentage is under E.
 *
 * The burn rate is the observed bad fraction over the budget (1 − objective): 1 means the run
 * spent its error budget exactly; above 1, faster than the SLO allows.
 */
import { InputError } from '../kernel/errors.js';
import { percentileR6 } from '../load/percentiles.js';

export type SloType = 'latency' | 'error';

export interface Slo {
  /** As written (or as fault names its defaults, `99% @ 350ms`). */
  title: string;
  type: SloType;
  /** Latency: the percentile (e.g. 99). Error: 100 − the allowed error percentage. */
  objective: number;
  /** Latency: milliseconds. Error: the allowed error percentage. */
  threshold: number;
  /**
   * The comparison as written: `p95 < 200ms` passes under 200, `p95 <= 200` and `99% @ 200ms` at
   * or under it (fault's rule). Absent: latency `<=`, errors `<`. Exports keep it (k6 `p(95)<200`).
   */
  op?: '<' | '<=';
}

/**
 * fault's two hard-coded SLOs, plus an error budget: with latency SLOs alone, a run whose every
 * request failed fast (refused, a bad certificate) would pass, and the verdict would lie.
 */
export const DEFAULT_SLOS: readonly string[] = ['99% @ 350ms', '95% @ 200ms', 'errors < 1%'];

export const SLO_FORMS = '"99% @ 350ms", "p(95) < 200", "p95 < 200ms", "errors < 1%", "rate < 0.01"';

export function parseSlo(text: string, what = 'slos'): Slo {
  const input = text.trim();
  const compact = input.toLowerCase().replace(/\s+/g, '');
  let match = /^(\d+(?:\.\d+)?)%@(\d+(?:\.\d+)?)(ms|s)?$/.exec(compact);
  match ??= /^p\(?(\d+(?:\.\d+)?)\)?<=?(\d+(?:\.\d+)?)(ms|s)?$/.exec(compact);
  const op = /^p\(?[\d.]+\)?<(?!=)|^(?:errors|error_rate|rate)<(?!=)/.test(compact) ? '<' : '<=';
  if (match) {
    const objective = Number(match[1]);
    const threshold = Number(match[2]) * (match[3] === 's' ? 1000 : 1);
    if (!(objective > 0 && objective < 100))
      throw new InputError(`${what}: "${input}": the percentile must be between 0 and 100 (exclusive)`);
    if (!(threshold > 0)) throw new InputError(`${what}: "${input}": the latency threshold must be above 0`);
    return { title: input, type: 'latency', objective, threshold, op };
  }
  // "error < 1%" is refused, not guessed: the metric is errors (or error_rate).
  if (/^(?:error|errorrate)<=?/.test(compact))
    throw new InputError(`${what}: "${input}": the metric is errors, e.g. "errors < 1%"; accepted forms: ${SLO_FORMS}`);
  const errors = /^(?:errors|error_rate)<=?(\d+(?:\.\d+)?)%$/.exec(compact) ?? /^rate<=?(0?\.\d+|0|1)$/.exec(compact);
  if (errors) {
    const percent = compact.startsWith('rate') ? Number(errors[1]) * 100 : Number(errors[1]);
    if (!(percent > 0 && percent < 100))
      throw new InputError(`${what}: "${input}": the error percentage must be between 0 and 100 (exclusive)`);
    return { title: input, type: 'error', objective: 100 - percent, threshold: percent, op };
  }
  throw new InputError(`${what}: "${input}" is not an SLO; accepted forms: ${SLO_FORMS}`);
}

export interface SloResult extends Slo {
  pass: boolean;
  /** Latency: the run's value at the objective's percentile (ms). Error: the error percentage. */
  observed: number;
  /** threshold − observed: positive is headroom, negative is by how much it missed. */
  margin: number;
  /** Latency: requests slower than the threshold. Error: failed requests. */
  over: number;
  overPercent: number;
  /** Observed bad fraction / allowed bad fraction (see the header). */
  burnRate: number;
}

/**
 * Evaluates the SLOs over a run: `sortedLatencies` ascending (every request, ms) and the number
 * of requests that failed.
 */
export function evaluateSlos(slos: readonly Slo[], sortedLatencies: ArrayLike<number>, failed: number): SloResult[] {
  const total = sortedLatencies.length;
  const sorted = sortedLatencies;
  return slos.map((slo) => {
    const allowedBad = (100 - slo.objective) / 100;
    if (slo.type === 'latency') {
      const observed = total === 0 ? 0 : percentileR6(sorted, slo.objective);
      const over = total === 0 ? 0 : total - upperBound(sorted, slo.threshold);
      const overPercent = total === 0 ? 0 : (over / total) * 100;
      return {
        ...withoutOp(slo),
        pass: total > 0 && (slo.op === '<' ? observed < slo.threshold : observed <= slo.threshold),
        observed,
        margin: slo.threshold - observed,
        over,
        overPercent,
        burnRate: overPercent / 100 / allowedBad,
      };
    }
    return evaluateErrorSlo(slo, total, failed);
  });
}

/** An error SLO over `total` requests of which `failed` failed (also for closed-loop runs). */
export function evaluateErrorSlo(slo: Slo, total: number, failed: number): SloResult {
  const allowedBad = (100 - slo.objective) / 100;
  const observed = total === 0 ? 0 : (failed / total) * 100;
  return {
    ...withoutOp(slo),
    pass: total > 0 && (slo.op === '<=' ? observed <= slo.threshold : observed < slo.threshold),
    observed,
    margin: slo.threshold - observed,
    over: failed,
    overPercent: observed,
    burnRate: observed / 100 / allowedBad,
  };
}

/** Number of values ≤ limit in an ascending array. */
export function upperBound(sorted: ArrayLike<number>, limit: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! <= limit) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** A result carries the SLO as the reports and outputs have always shown it (the operator is in its title). */
function withoutOp(slo: Slo): Slo {
  const { op: _op, ...rest } = slo;
  return rest;
}
