/**
 * Exact percentiles and summary statistics over recorded values (no histogram, so no bucketing
 * error: every request's value is kept, see samples.ts).
 *
 * Percentiles use the R-6 estimator (Hyndman & Fan type 6), as the Rust tool fault's report does:
 * for n sorted values x₁ ≤ … ≤ xₙ and fraction p, h = (n + 1)·p;
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

/**
 * The same R-6 percentiles as computeStats, without sorting: each needs only the order
 * statistics at ⌊h⌋ and ⌊h⌋+1, which selection finds in O(n). The open-loop generator closes
 * each second's bucket mid-run, on its own event loop; sorting 20,000 latencies there took
 * 2–5 ms, a stall that every request due meanwhile would carry in its latency.
 */
export function selectPercentiles(values: Float64Array, percents: readonly number[]): number[] {
  const n = values.length;
  if (n === 0) return percents.map(() => 0);
  const a = values.slice();
  return percents.map((percent) => {
    const h = (n + 1) * (percent / 100);
    if (h <= 1) return orderStatistic(a, 0);
    if (h >= n) return orderStatistic(a, n - 1);
    const lower = Math.floor(h);
    const below = orderStatistic(a, lower - 1);
    // After selecting index lower − 1, everything to its right is ≥ it: the next is their minimum.
    let above = Infinity;
    for (let i = lower; i < n; i++) if (a[i]! < above) above = a[i]!;
    return below + (h - lower) * (above - below);
  });
}

/** The k-th smallest (0-based) of a, partially reordering a in place (Hoare's quickselect). */
function orderStatistic(a: Float64Array, k: number): number {
  let left = 0;
  let right = a.length - 1;
  while (left < right) {
    // Median of three as the pivot, so sorted or constant runs stay O(n).
    const middle = (left + right) >>> 1;
    const x = a[left]!,
      y = a[middle]!,
      z = a[right]!;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = left;
    let j = right;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else return a[k]!;
  }
  return a[k]!;
}
