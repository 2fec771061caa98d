/**
 * Exact percentiles and summary statistics over recorded values (no histogram, so no bucketing
 * error: every request's value is kept, see samples.ts).
 *
 * Percentiles use the R-6 estimator (Hyndman & Fan type 6), as fault's report does
 * (reference/fault-anchor.md §3.3): for n sorted values x₁ ≤ … ≤ xₙ and fraction p, h = (n + 1)·p;
 * the result is x₁ when h ≤ 1, xₙ when h ≥ n, and otherwise x⌊h⌋ + (h − ⌊h⌋)·(x⌊h⌋₊₁ − x⌊h⌋).
 */

/** The R-6 percentile (`percent` in 0–100) of values sorted ascending; 0 when there are none. */
export function percentileR6(sorted: ArrayLike<number>, percent: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const h = (n + 1) * (percent / 100);
  if (h <= 1) return sorted[0]!;
  if (h >= n) return sorted[n - 1]!;
  const lower = Math.floor(h);
  const below = sorted[lower - 1]!;
  const above = sorted[lower]!;
  return below + (h - lower) * (above - below);
}

/** Summary of a set of durations, all in milliseconds (µs resolution). */
export interface Stats {
  count: number;
  min: number;
  max: number;
  /** The arithmetic mean of every value. */
  mean: number;
  p25: number;
  p50: number;
  p75: number;
  p95: number;
  p99: number;
  /** The 99.9th percentile. */
  p999: number;
}

/** Stats of the given values (any order; the array is not modified); null when there are none. */
export function computeStats(values: ArrayLike<number>): Stats | null {
  const count = values.length;
  if (count === 0) return null;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (let i = 0; i < count; i++) sum += sorted[i]!;
  return {
    count,
    min: sorted[0]!,
    max: sorted[count - 1]!,
    mean: sum / count,
    p25: percentileR6(sorted, 25),
    p50: percentileR6(sorted, 50),
    p75: percentileR6(sorted, 75),
    p95: percentileR6(sorted, 95),
    p99: percentileR6(sorted, 99),
    p999: percentileR6(sorted, 99.9),
  };
}
