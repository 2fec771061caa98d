/**
 * One query's answer judged against a condition: held, broken (with the series and its value),
 * or unknown (no answer, a query error, no series, or only NaN) — never "held" on nothing.
 * Every series must hold: a query answering one series per instance breaks when one does.
 */
import { seriesName, type QueryOutcome } from './client.js';
import { describeComparison, unmet, type Condition } from './condition.js';

export interface Reading {
  state: 'held' | 'broken' | 'unknown';
  /** The figure: the breaking series' value, else the value farthest toward breaking (undefined when unknown). */
  value: number | undefined;
  /** "errors 0.42 ({code="500"}) is not < 0.01", "no series", "unreachable: ECONNREFUSED". */
  detail: string;
}

export function judgeSamples(outcome: QueryOutcome, condition: Condition): Reading {
  if (!outcome.ok)
    return {
      state: 'unknown',
      value: undefined,
      detail: `${outcome.kind === 'query' ? 'query error' : outcome.kind}: ${outcome.message}`,
    };
  if (outcome.samples.length === 0)
    return { state: 'unknown', value: undefined, detail: 'no series (the query answered nothing)' };
  const numbers = outcome.samples.filter((sample) => !Number.isNaN(sample.value));
  if (numbers.length === 0)
    return { state: 'unknown', value: undefined, detail: 'the value is NaN (e.g. a rate over no requests)' };
  for (const sample of numbers) {
    const broken = unmet(condition, sample.value);
    if (broken) {
      const name = seriesName(sample.labels);
      return {
        state: 'broken',
        value: sample.value,
        detail:
          `${format(sample.value)}${name && name !== '{}' ? ` (${name})` : ''}, ` + `not ${describeComparison(broken)}`,
      };
    }
  }
  const shown = numbers.length === 1 ? format(numbers[0]!.value) : `${numbers.length} series, each ${condition.text}`;
  return { state: 'held', value: numbers[0]!.value, detail: shown };
}

export function format(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return String(
    Math.abs(value) >= 1000 || Number.isInteger(value) ? Math.round(value * 100) / 100 : Number(value.toPrecision(4)),
  );
}
