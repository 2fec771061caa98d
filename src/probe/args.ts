/**
 * Arguments derived from a tool's inputSchema: one minimal valid object (for the SCHEMA and
 * TIMEOUT probes), and seeded hostile variants (for the TOOL probe): wrong types, missing
 * required fields, unknown fields, huge and odd strings. Same schema + seed → same cases.
 */
import { createRandom } from '../kernel/random.js';

export type JsonSchema = Record<string, unknown>;

/** The project's one seeded generator (proxy/random.ts): same schema + seed → same cases. */
export function seededRandom(seed: number): () => number {
  const random = createRandom(seed, 'probe-args');
  return () => random.next();
}

function typeOf(schema: JsonSchema): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined;
  if (schema.properties) return 'object';
  if (Array.isArray(schema.enum)) return typeof schema.enum[0];
  return undefined;
}

function properties(schema: JsonSchema): Record<string, JsonSchema> {
  return (schema.properties && typeof schema.properties === 'object' ? schema.properties : {}) as Record<
    string,
    JsonSchema
  >;
}

function required(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? (schema.required.filter((r) => typeof r === 'string') as string[]) : [];
}

/** A value that satisfies the simple constraints of `schema` (best effort; unions take the first branch). */
export function validValue(schema: JsonSchema, depth = 0): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema) return schema.default;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) return validValue(branches[0] as JsonSchema, depth + 1);
  }
  switch (typeOf(schema)) {
    case 'string': {
      const min = typeof schema.minLength === 'number' ? schema.minLength : 1;
      return 'a'.repeat(Math.max(1, Math.min(min, 1000)));
    }
    case 'integer':
    case 'number': {
      const min =
        typeof schema.minimum === 'number'
          ? schema.minimum
          : typeof schema.exclusiveMinimum === 'number'
            ? Math.floor(schema.exclusiveMinimum) + 1
            : 1;
      const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
      const value = max !== undefined && min > max ? max : min;
      return typeOf(schema) === 'integer' ? Math.ceil(value) : value;
    }
    case 'boolean':
      return false;
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const items = (schema.items ?? {}) as JsonSchema;
      return Array.from({ length: Math.min(min, 10) }, () => validValue(items, depth + 1));
    }
    case 'object': {
      if (depth > 5) return {};
      const out: Record<string, unknown> = {};
      const props = properties(schema);
      for (const name of required(schema)) out[name] = validValue(props[name] ?? {}, depth + 1);
      return out;
    }
    case 'null':
      return null;
    default:
      return 'a';
  }
}

export function validArguments(inputSchema: JsonSchema): Record<string, unknown> {
  const value = validValue(inputSchema);
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * Names of arguments that set how long a call takes, with their unit in the name (`ms`,
 * `delay_ms`, `sleepMs`, `wait_seconds`). A bare `delay` or `timeout` is left alone: its unit is
 * unknown, and 1,650 read as seconds would hold the server's work for half an hour.
 */
const MILLISECONDS_NAME = /(^|_)(ms|millis|milliseconds)$|[a-z](Ms|Millis|Milliseconds)$/;
const SECONDS_NAME = /(^|_)(s|secs?|seconds)$|[a-z](Secs?|Seconds)$/;

/**
 * Valid arguments that ask the tool to take about `targetMs`, when its schema has a number
 * argument whose name gives a time unit (`ms`, `delay_ms`, `sleepSeconds`, …), within the schema's bounds;
 * undefined when it has none. The cancellation probe needs a call still running when it cancels,
 * and a tool's minimal valid arguments (a 1 ms sleep) finish first.
 */
export function slowArguments(inputSchema: JsonSchema, targetMs: number): Record<string, unknown> | undefined {
  const args = validArguments(inputSchema);
  let found = false;
  for (const [name, schema] of Object.entries(properties(inputSchema))) {
    const type = typeOf(schema);
    if (type !== 'number' && type !== 'integer') continue;
    const seconds = SECONDS_NAME.test(name);
    if (!seconds && !MILLISECONDS_NAME.test(name)) continue;
    let value = seconds ? targetMs / 1000 : targetMs;
    if (typeof schema.maximum === 'number') value = Math.min(value, schema.maximum);
    if (typeof schema.minimum === 'number') value = Math.max(value, schema.minimum);
    args[name] = type === 'integer' ? Math.ceil(value) : value;
    found = true;
  }
  return found ? args : undefined;
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  '../../../../../../../../etc/passwd',
  '%s%n%x',
  '${jndi:ldap://x}',
  "'; DROP TABLE t; --",
  '\u202e\ud83d\ude00',
  '-1',
  'NaN',
  'x'.repeat(100_000),
];
const WRONG_VALUES: unknown[] = [
  null,
  12345,
  -1,
  1e308,
  true,
  [],
  {},
  'not-a-number',
  [null],
  { nested: { deep: [1, 'a'] } },
];

export interface HostileCase {
  /** What was made wrong, e.g. "path: number instead of string". */
  label: string;
  args: unknown;
}

/** `count` seeded hostile cases for one tool. */
export function hostileCases(inputSchema: JsonSchema, count: number, seed: number): HostileCase[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const base = validArguments(inputSchema);
  const props = properties(inputSchema);
  const names = Object.keys(props);
  const req = required(inputSchema);
  const cases: HostileCase[] = [];
  // Kinds take turns, and each kind walks the properties in turn (from a seeded offset), so that a
  // few cases already reach every property with a wrong type; the values themselves are seeded.
  const kinds = [
    'wrong-type',
    'missing-required',
    'hostile-string',
    'unknown-field',
    'out-of-range',
    'not-an-object',
  ] as const;
  const offset = Math.floor(random() * Math.max(1, names.length));
  for (let i = 0; i < count; i++) {
    const kind = kinds[i % kinds.length]!;
    const turn = Math.floor(i / kinds.length);
    const name = names.length > 0 ? names[(offset + turn) % names.length] : undefined;
    const args: Record<string, unknown> = { ...base };
    if (kind === 'wrong-type' && name) {
      const expected = typeOf(props[name]!) ?? 'any';
      const wrong = WRONG_VALUES.filter(
        (v) => jsonType(v) !== expected && !(expected === 'number' && jsonType(v) === 'integer'),
      );
      args[name] = pick(wrong);
      cases.push({ label: `${name}: ${jsonType(args[name])} instead of ${expected}`, args });
    } else if (kind === 'hostile-string' && name) {
      const value = pick(HOSTILE_STRINGS);
      args[name] = value;
      cases.push({
        label: `${name}: hostile string ${JSON.stringify(value.slice(0, 40))}${value.length > 40 ? `… (${value.length} chars)` : ''}`,
        args,
      });
    } else if (kind === 'missing-required' && req.length > 0) {
      const missing = pick(req);
      delete args[missing];
      cases.push({ label: `required ${missing} missing`, args });
    } else if (kind === 'out-of-range' && name) {
      const s = props[name]!;
      const t = typeOf(s);
      args[name] =
        t === 'number' || t === 'integer'
          ? typeof s.minimum === 'number'
            ? s.minimum - 1e6
            : -1e15
          : t === 'array'
            ? Array.from({ length: 10_000 }, () => 0)
            : 'x'.repeat(1_000_000);
      cases.push({ label: `${name}: out of range`, args });
    } else if (kind === 'not-an-object') {
      const value = pick(['a string', 42, [1, 2], null] as unknown[]);
      cases.push({ label: `arguments: ${jsonType(value)} instead of an object`, args: value });
    } else {
      args[`unknown_${Math.floor(random() * 1000)}`] = pick(WRONG_VALUES);
      cases.push({ label: 'an unknown field', args });
    }
  }
  return cases;
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
