/**
 * What a PromQL value must satisfy: faultline's spelling (`below: 0.01`, `above: 5`,
 * `between: [0, 0.2]`, which may be combined: below and above both hold) or Litmus promProbe's
 * comparator (`comparator: {criteria: "<=", value: "0.01"}`, criteria `>=`, `<=`, `>`, `<`,
 * `==`, `!=`, `oneOf` with a comma-separated value), so a Litmus probe's check reads as it is.
 */
import { InputError } from '../kernel/errors.js';

export type Comparison =
  | { op: '<' | '<=' | '>' | '>=' | '==' | '!='; value: number }
  | { op: 'oneOf'; values: number[] };

export interface Condition {
  /** Every comparison must hold. */
  all: Comparison[];
  /** As a report says it: "< 0.01", "between 0 and 0.2". */
  text: string;
}

export const COMPARATOR_CRITERIA = ['>=', '<=', '>', '<', '==', '!=', 'oneOf'] as const;

type Raw = Record<string, unknown>;

function numberField(value: unknown, what: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number))
    throw new InputError(`${what}: must be a number (got ${JSON.stringify(value)})`);
  return number;
}

/** Reads below/above/between/comparator from an entry; `where` names the entry. */
export function readCondition(raw: Raw, where: string): Condition {
  const all: Comparison[] = [];
  const words: string[] = [];
  if (raw.below !== undefined) {
    const value = numberField(raw.below, `${where}.below`);
    all.push({ op: '<', value });
    words.push(`< ${value}`);
  }
  if (raw.above !== undefined) {
    const value = numberField(raw.above, `${where}.above`);
    all.push({ op: '>', value });
    words.push(`> ${value}`);
  }
  if (raw.between !== undefined) {
    const pair = raw.between;
    if (!Array.isArray(pair) || pair.length !== 2)
      throw new InputError(`${where}.between: two numbers, [low, high] (got ${JSON.stringify(pair)})`);
    const low = numberField(pair[0], `${where}.between[0]`);
    const high = numberField(pair[1], `${where}.between[1]`);
    if (low > high) throw new InputError(`${where}.between: ${low} is above ${high}; give [low, high]`);
    all.push({ op: '>=', value: low }, { op: '<=', value: high });
    words.push(`between ${low} and ${high}`);
  }
  if (raw.comparator !== undefined) {
    const comparator = raw.comparator as Raw;
    const criteria = String(comparator.criteria ?? '');
    const match = COMPARATOR_CRITERIA.find((c) => c.toLowerCase() === criteria.toLowerCase());
    if (!match)
      throw new InputError(
        `${where}.comparator.criteria: "${criteria}" is not one of ${COMPARATOR_CRITERIA.join(', ')}`,
      );
    if (comparator.type !== undefined && comparator.type !== 'float' && comparator.type !== 'int')
      throw new InputError(`${where}.comparator.type: a PromQL value is a number: float or int`);
    if (match === 'oneOf') {
      const values = String(comparator.value ?? '')
        .split(',')
        .map((part, index) => numberField(part.trim(), `${where}.comparator.value[${index}]`));
      all.push({ op: 'oneOf', values });
      words.push(`one of ${values.join(', ')}`);
    } else {
      const value = numberField(comparator.value, `${where}.comparator.value`);
      all.push({ op: match, value });
      words.push(`${match} ${value}`);
    }
  }
  if (all.length === 0)
    throw new InputError(
      `${where}: say what the value must be: below, above, between [low, high], or comparator {criteria, value}`,
    );
  return { all, text: words.join(' and ') };
}

/** The first comparison `value` breaks, or undefined when it holds. */
export function unmet(condition: Condition, value: number): Comparison | undefined {
  return condition.all.find((c) => !holds(c, value));
}

/** Whether `value` meets comparison `c` (also the experiment's SLI thresholds and predicates'). */
export function holds(c: Comparison, value: number): boolean {
  switch (c.op) {
    case '<':
      return value < c.value;
    case '<=':
      return value <= c.value;
    case '>':
      return value > c.value;
    case '>=':
      return value >= c.value;
    case '==':
      return value === c.value;
    case '!=':
      return value !== c.value;
    default:
      return c.values.includes(value);
  }
}

export function describeComparison(c: Comparison): string {
  return c.op === 'oneOf' ? `one of ${c.values.join(', ')}` : `${c.op} ${c.value}`;
}
