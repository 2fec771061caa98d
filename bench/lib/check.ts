/**
 * The shape of a timing check (`npm run bench:check`): a check measures one property of faultline
 * next to a peer measured in the same run (a bare implementation, the same code on a smaller
 * input, the no-fault path, another tool) and holds the figure, or its ratio or difference to
 * the peer, to a target. A file in bench/checks/ exports `checks: BenchCheck[]`; bench/check.ts
 * finds it, runs each check in a fresh process of its own, prints every row and exits non-zero
 * when one misses.
 *
 * Checks live here, not in the test suite, because a busy machine slows them: a miss means
 * "measure again on a quiet machine, then look", never "the behaviour is wrong" (the tests say
 * that).
 */

/** One measured quantity. */
export interface Figure {
  /** What was measured, e.g. "20,000 rewrites" or "bare node proxy". */
  label: string;
  value: number;
  /** e.g. "ms", "req/s", "MB/s", "%". */
  unit: string;
}

/**
 * One line of a check's result: our figure, its peer from the same run, and the target on one of
 * them: the value of ours, the ratio ours ÷ peer, or the difference ours − peer.
 */
export interface Row {
  /** What this row is about within its check, e.g. "typescript" or "7 ms delay". */
  label: string;
  ours: Figure;
  peer?: Figure;
  target: Target;
}

export interface Target {
  /** The quantity the bounds apply to. `ratio` and `difference` need a peer. */
  on: 'value' | 'ratio' | 'difference';
  /** Inclusive bounds; at least one. */
  atMost?: number;
  atLeast?: number;
}

export interface CheckContext {
  /** A progress or diagnostic line, shown while the check runs (stderr). */
  log(line: string): void;
}

export interface BenchCheck {
  /** Unique, `area.what` (e.g. "proxy.latency-accuracy"): what `npm run bench:check -- NAME` selects. */
  name: string;
  /** What is measured, one sentence (bench/README.md says the same at more length). */
  measures: string;
  /** What it is measured against in the same run. */
  peer: string;
  /** The target, in words, with the threshold. */
  target: string;
  /** The test files that hold the behaviour behind the figure (test/…), for bench/README.md. */
  tests?: string[];
  /** Wall-clock bound for the whole check (default 120 s); past it the check's process is killed and it misses. */
  timeoutMs?: number;
  run(context: CheckContext): Promise<Row[]>;
}

/** The number a row's target applies to; NaN when it cannot be computed (no peer, a zero peer for a ratio). */
export function comparedValue(row: Row): number {
  const { on } = row.target;
  if (on === 'value') return row.ours.value;
  if (!row.peer) return Number.NaN;
  if (on === 'difference') return row.ours.value - row.peer.value;
  return row.peer.value === 0 ? Number.NaN : row.ours.value / row.peer.value;
}

/** Whether the row meets its target; a NaN figure never does. */
export function meets(row: Row): boolean {
  const value = comparedValue(row);
  if (!Number.isFinite(value)) return false;
  const { atMost, atLeast } = row.target;
  if (atMost === undefined && atLeast === undefined) return false;
  return (atMost === undefined || value <= atMost) && (atLeast === undefined || value >= atLeast);
}

/** A number shown with about three significant digits, thousands grouped. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  const digits = Number.isInteger(value) || magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

const unitOf = (row: Row): string => (row.target.on === 'ratio' ? '×' : ` ${row.ours.unit}`);

/** "ratio 10.8×", "difference +0.21 ms", "value 3.2 ms". */
export function formatCompared(row: Row): string {
  const value = comparedValue(row);
  const sign = row.target.on === 'difference' && value > 0 ? '+' : '';
  return `${row.target.on} ${sign}${formatNumber(value)}${unitOf(row)}`;
}

/** "≤ 40×", "≥ 0.8×", "−0.75 … +0.75 ms". */
export function formatTarget(row: Row): string {
  const { atMost, atLeast } = row.target;
  const unit = unitOf(row);
  if (atMost !== undefined && atLeast !== undefined) return `${formatNumber(atLeast)} … ${formatNumber(atMost)}${unit}`;
  if (atMost !== undefined) return `≤ ${formatNumber(atMost)}${unit}`;
  if (atLeast !== undefined) return `≥ ${formatNumber(atLeast)}${unit}`;
  return '(no bound)';
}

export const formatFigure = (figure: Figure): string => `${figure.label} ${formatNumber(figure.value)} ${figure.unit}`;

/** The median of a non-empty list (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Runs each of `sides` once per round, in turn, for `rounds` rounds: load on the machine then
 * falls on every side alike. Returns each side's figures in round order.
 */
export async function interleaved<K extends string>(
  rounds: number,
  sides: Record<K, () => number | Promise<number>>,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(sides) as K[];
  const figures = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round += 1) {
    for (const key of keys) figures[key].push(await sides[key]());
  }
  return figures;
}
