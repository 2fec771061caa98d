/**
 * What an HTTP check's answer must satisfy, written the way people write assertions:
 *
 *   status == 200            status < 500            latency < 300
 *   header.content-type contains "json"              header[x-cache] == "hit"
 *   $.circuit == "open"      $.items[0].id exists    $.errors absent
 *   body contains "ok"       body matches "^OK"      … and … (every clause must hold)
 *
 * A JSON path is `$` followed by `.name`, `['name']` or `[index]` steps: a comparison needs one
 * value, so the filters and wildcards of full JSONPath (which yield lists) are not accepted.
 * Values are JSON literals (200, "open", true, null); a bare word is a string.
 */
import { InputError } from '../kernel/errors.js';
import { holds as meets } from '../prometheus/condition.js';

export type Operator = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'contains' | 'matches' | 'exists' | 'absent';

export type Subject =
  | { kind: 'status' }
  | { kind: 'latency' }
  | { kind: 'body' }
  | { kind: 'header'; name: string }
  | { kind: 'json'; path: Array<string | number>; text: string };

export interface Clause {
  subject: Subject;
  op: Operator;
  value: unknown;
  text: string;
}

export interface Predicate {
  text: string;
  clauses: Clause[];
}

/** What a check saw: the answer, or why there was none. */
export interface Observation {
  status: number;
  headers: Record<string, string>;
  body: string;
  latencyMs: number;
  /** Set when no answer came (refused, reset, timed out). */
  error?: string;
}

const OPERATORS: readonly Operator[] = ['==', '!=', '<=', '>=', '<', '>', 'contains', 'matches', 'exists', 'absent'];
export const DEFAULT_PREDICATE = 'status < 400';

export function parsePredicate(text: string, what: string): Predicate {
  const clauses = text
    .split(/\s+and\s+/i)
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => parseClause(part, what));
  if (clauses.length === 0) throw new InputError(`${what}: empty; write e.g. status == 200, $.circuit == "open"`);
  return { text: text.trim(), clauses };
}

function parseClause(text: string, what: string): Clause {
  const match = /^(\S+?)\s*(==|!=|<=|>=|<|>|\s+contains\s+|\s+matches\s+|\s+exists$|\s+absent$)\s*(.*)$/i.exec(text);
  if (!match)
    throw new InputError(
      `${what}: "${text}" is not "<subject> <operator> <value>"; ` +
        `subjects: status, latency, body, header.NAME, $.json.path; ` +
        `operators: ${OPERATORS.join(', ')}`,
    );
  const subject = parseSubject(match[1]!, what);
  const op = match[2]!.trim().toLowerCase() as Operator;
  const rest = match[3]!.trim();
  if ((op === 'exists' || op === 'absent') !== (rest === ''))
    throw new InputError(
      `${what}: "${text}": ${op === 'exists' || op === 'absent' ? `${op} takes no value` : `${op} needs a value`}`,
    );
  const value = op === 'exists' || op === 'absent' ? undefined : parseValue(rest);
  if (['<', '<=', '>', '>='].includes(op) && typeof value !== 'number')
    throw new InputError(`${what}: "${text}": ${op} compares numbers`);
  if (op === 'matches') {
    try {
      new RegExp(String(value));
    } catch {
      throw new InputError(`${what}: "${text}": ${JSON.stringify(value)} is not a regular expression`);
    }
  }
  if (
    (subject.kind === 'status' || subject.kind === 'latency') &&
    (op === 'contains' || op === 'matches' || op === 'exists' || op === 'absent')
  ) {
    throw new InputError(`${what}: "${text}": ${subject.kind} is a number; compare it with ==, !=, <, <=, >, >=`);
  }
  return { subject, op, value, text };
}

function parseSubject(text: string, what: string): Subject {
  const lower = text.toLowerCase();
  if (lower === 'status' || lower === 'status_code') return { kind: 'status' };
  if (lower === 'latency' || lower === 'latency_ms') return { kind: 'latency' };
  if (lower === 'body') return { kind: 'body' };
  const header = /^headers?(?:\.([!#$%&'*+\-.^_`|~0-9a-z]+)|\[["']?([^\]"']+)["']?\])$/i.exec(text);
  if (header) return { kind: 'header', name: (header[1] ?? header[2]!).toLowerCase() };
  if (text.startsWith('$')) return { kind: 'json', path: parseJsonPath(text, what), text };
  throw new InputError(
    `${what}: "${text}" is not a subject; use status, latency, body, header.NAME or a JSON path such as $.circuit`,
  );
}

export function parseJsonPath(text: string, what: string): Array<string | number> {
  const steps: Array<string | number> = [];
  const step = /\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[\s*(?:'([^']*)'|"([^"]*)")\s*\]/y;
  let index = 1;
  while (index < text.length) {
    step.lastIndex = index;
    const match = step.exec(text);
    if (!match)
      throw new InputError(
        `${what}: "${text}" is not a JSON path of .name, ['name'] and ` +
          `[index] steps (filters and wildcards are not accepted: a ` +
          `comparison needs one value)`,
      );
    steps.push(match[1] ?? (match[2] !== undefined ? Number(match[2]) : (match[3] ?? match[4]!)));
    index = step.lastIndex;
  }
  return steps;
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text.replace(/^'(.*)'$/, '$1');
  }
}

/** The first clause that does not hold, described with what was seen; undefined when all hold. */
export function unmetClause(predicate: Predicate, seen: Observation): string | undefined {
  if (seen.error !== undefined) return `no answer: ${seen.error}`;
  let json: { value: unknown } | undefined | null = undefined;
  for (const clause of predicate.clauses) {
    let actual: unknown;
    let present = true;
    switch (clause.subject.kind) {
      case 'status':
        actual = seen.status;
        break;
      case 'latency':
        actual = Math.round(seen.latencyMs * 10) / 10;
        break;
      case 'body':
        actual = seen.body;
        break;
      case 'header':
        actual = seen.headers[clause.subject.name];
        present = actual !== undefined;
        break;
      case 'json': {
        if (json === undefined) {
          try {
            json = { value: JSON.parse(seen.body) };
          } catch {
            json = null;
          }
        }
        if (json === null) return `${clause.text}: the body is not JSON (status ${seen.status})`;
        const found = walk(json.value, clause.subject.path);
        present = found.present;
        actual = found.value;
        break;
      }
    }
    if (!holds(clause, actual, present))
      return `${clause.text}: ${describeSubject(clause.subject)} was ${present ? show(actual) : 'absent'}`;
  }
  return undefined;
}

function walk(value: unknown, path: ReadonlyArray<string | number>): { present: boolean; value: unknown } {
  let current = value;
  for (const step of path) {
    if (
      typeof step === 'number'
        ? !Array.isArray(current) || step >= current.length
        : current === null || typeof current !== 'object' || Array.isArray(current) || !Object.hasOwn(current, step)
    ) {
      return { present: false, value: undefined };
    }
    current = (current as Record<string | number, unknown>)[step];
  }
  return { present: true, value: current };
}

function holds(clause: Clause, actual: unknown, present: boolean): boolean {
  switch (clause.op) {
    case 'exists':
      return present;
    case 'absent':
      return !present;
    case '==':
      return present && equal(actual, clause.value);
    case '!=':
      return !present || !equal(actual, clause.value);
    case 'contains':
      return (
        present &&
        (Array.isArray(actual)
          ? actual.some((item) => equal(item, clause.value))
          : String(typeof actual === 'object' ? JSON.stringify(actual) : actual).includes(String(clause.value)))
      );
    case 'matches':
      return (
        present && new RegExp(String(clause.value)).test(typeof actual === 'string' ? actual : JSON.stringify(actual))
      );
    default: {
      const number =
        typeof actual === 'number' ? actual : typeof actual === 'string' && actual.trim() !== '' ? Number(actual) : NaN;
      if (!present || Number.isNaN(number)) return false;
      return meets({ op: clause.op, value: clause.value as number }, number);
    }
  }
}

function equal(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'string') return String(a) === b;
  if (typeof a === 'string' && typeof b === 'number') return a === String(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

function describeSubject(subject: Subject): string {
  switch (subject.kind) {
    case 'header':
      return `header ${subject.name}`;
    case 'json':
      return subject.text;
    default:
      return subject.kind;
  }
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
