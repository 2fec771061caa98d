/**
 * The one reader for config objects that come from outside: tool arguments, admin API bodies,
 * fault plans, suite files, FIS recommendations. Every refusal has one shape, naming where the
 * object came from and the field:
 *
 *   <where>: <field> must be <what is accepted> (got <value>)
 *   <where>: unknown field "a", "b" (accepted: x, y, z)
 *   <where>: field "__proto__" is not accepted
 *
 * A misspelt key would otherwise fall back to a default without a word, so every reader ends with
 * `done()`, which refuses the keys nobody asked for. `__proto__`, `constructor` and `prototype`
 * are refused everywhere: no config of ours has such a field, and copying one into an object
 * would reach its prototype.
 */
import { InputError } from './kernel/errors.js';

/** Keys no config may carry. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How a value is quoted in a refusal: short, and never the whole of a large value. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

/** The refusal of keys outside `accepted` (and of the forbidden ones), or undefined when all are known. */
export function unknownKeysProblem(
  object: Record<string, unknown>,
  accepted: Iterable<string>,
  where: string,
): string | undefined {
  const keys = Object.keys(object);
  const forbidden = keys.find((key) => FORBIDDEN_KEYS.has(key));
  if (forbidden !== undefined) return `${where}: field ${JSON.stringify(forbidden)} is not accepted`;
  const known = new Set(accepted);
  const unknown = keys.filter((key) => !known.has(key));
  if (unknown.length === 0) return undefined;
  return (
    `${where}: unknown field ${unknown.map((key) => JSON.stringify(key)).join(', ')} ` +
    `(accepted: ${[...known].join(', ')})`
  );
}

/**
 * Refuses FORBIDDEN_KEYS at any depth of a parsed value, naming the path (`finding.a[0]: field
 * "constructor" is not accepted`): for what is read field by field further down (a fault config,
 * a tool argument), before anything copies it. Iterative and bounded in depth, so a hostile
 * nesting cannot overflow the stack.
 */
export function refuseForbiddenKeys(value: unknown, name: string, maxDepth = 64): void {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: name, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, path, depth } = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > maxDepth) throw new InputError(`${name}: nested deeper than ${maxDepth} levels`);
    if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, path: `${path}[${index}]`, depth: depth + 1 }));
      continue;
    }
    for (const key of Object.keys(current)) {
      if (FORBIDDEN_KEYS.has(key)) throw new InputError(`${path}: field ${JSON.stringify(key)} is not accepted`);
      pending.push({ value: (current as Record<string, unknown>)[key], path: `${path}.${key}`, depth: depth + 1 });
    }
  }
}

/** Throws an InputError for keys outside `accepted` (see unknownKeysProblem). */
export function refuseUnknownKeys(object: Record<string, unknown>, accepted: Iterable<string>, where: string): void {
  const problem = unknownKeysProblem(object, accepted, where);
  if (problem !== undefined) throw new InputError(problem);
}

/**
 * Reads the fields of one object, one at a time, with their defaults; `done()` then refuses every
 * field no read asked for. Every error names `where` and the field.
 */
export class ConfigReader {
  private readonly seen = new Set<string>();

  constructor(
    /** Where the object came from, as the caller knows it: `latency fault`, `plan.faults[2]`, `config`. */
    readonly where: string,
    readonly raw: Record<string, unknown>,
    /** Keys a caller has already read (a type discriminator): never unknown. */
    alreadyRead: readonly string[] = [],
  ) {
    for (const key of alreadyRead) this.seen.add(key);
  }

  fail(field: string, expected: string, value: unknown = this.raw[field]): never {
    throw new InputError(`${this.where}: ${field} must be ${expected} (got ${describeValue(value)})`);
  }

  /** The raw value of a field (marked as read). */
  take(field: string): unknown {
    this.seen.add(field);
    return this.raw[field];
  }

  has(field: string): boolean {
    return this.raw[field] !== undefined;
  }

  number(
    field: string,
    check: { min?: number; max?: number; above?: number; integer?: boolean; default?: number; expected: string },
  ): number {
    const value = this.take(field);
    if (value === undefined && check.default !== undefined) return check.default;
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(field, check.expected);
    if (check.integer && !Number.isInteger(value)) this.fail(field, check.expected);
    if (check.min !== undefined && value < check.min) this.fail(field, check.expected);
    if (check.max !== undefined && value > check.max) this.fail(field, check.expected);
    if (check.above !== undefined && value <= check.above) this.fail(field, check.expected);
    return value;
  }

  boolean(field: string, fallback: boolean): boolean {
    const value = this.take(field);
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') this.fail(field, 'true or false');
    return value;
  }

  choice<T extends string>(field: string, choices: readonly T[], fallback: T): T {
    const value = this.take(field);
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || !(choices as readonly string[]).includes(value))
      this.fail(field, `one of ${choices.join(', ')}`);
    return value as T;
  }

  optionalString(field: string, max?: number): string | undefined {
    const value = this.take(field);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '') this.fail(field, 'a non-empty string');
    if (max !== undefined && value.length > max) this.fail(field, `a string of at most ${max} characters`);
    return value.trim();
  }

  /** A list of non-empty strings; a comma-separated string is taken as one. */
  stringList(field: string, expected: string): string[] {
    const value = this.take(field);
    const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      list.some((item) => typeof item !== 'string' || item.trim() === '')
    )
      this.fail(field, expected);
    return (list as string[]).map((item) => item.trim());
  }

  /** Refuses fields no read asked for, so a misspelt argument is not silently ignored. */
  done(): void {
    refuseUnknownKeys(this.raw, this.seen, this.where);
  }
}
