/**
 * From text to a checked object: YAML or JSON (bounded), then the published JSON Schema (ajv),
 * whose errors are said the house way — `method[1].fault: unknown field "statuscode" (accepted: …)`,
 * `load.rps: must be a number (got "fast")` — naming where in the file, as written.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import { InputError } from '../kernel/errors.js';
import { describeValue, FORBIDDEN_KEYS } from '../config-reader.js';
import { jsonDepthExceeds, repeatedKeyAt } from '../jsonrpc/message.js';
import { EXPERIMENT_SCHEMA } from './schema.js';

/** The longest experiment text accepted, and its deepest nesting. */
export const MAX_EXPERIMENT_CHARS = 512 * 1024;
export const MAX_EXPERIMENT_DEPTH = 32;

/** Parses experiment text: JSON when it starts with `{`, else YAML (of which JSON is a subset anyway). */
export async function parseExperimentText(text: string, where = 'experiment'): Promise<unknown> {
  if (text.length > MAX_EXPERIMENT_CHARS)
    throw new InputError(`${where}: ${text.length} characters, above the ${MAX_EXPERIMENT_CHARS} accepted`);
  if (jsonDepthExceeds(text, MAX_EXPERIMENT_DEPTH))
    throw new InputError(`${where}: nested deeper than ${MAX_EXPERIMENT_DEPTH} levels`);
  if (text.trimStart().startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch (error) {
      // V8 says an offset ("at position 40", newer V8 adds "(line 4 column 13)"); YAML's refusals, and the docs,
      // give a line and column: one form, ours.
      const message = (error as Error).message.replace(
        / at position (\d+)(?: \(line \d+ column \d+\))?/,
        (_, offset: string) => ` at ${lineColumn(text, Number(offset))}`,
      );
      throw new InputError(`${where}: not valid JSON (${message})`);
    }
    // As YAML below (uniqueKeys): JSON.parse would keep a repeated key's last value without a word.
    const repeated = repeatedKeyAt(text);
    if (repeated !== undefined)
      throw new InputError(
        `${where}: the key ${JSON.stringify(repeated.key)} is given twice in one object ` +
          `(${lineColumn(text, repeated.at)})`,
      );
    return value;
  }
  const { parseDocument } = await import('yaml');
  // Aliases bounded: a YAML "billion laughs" expands a few lines into gigabytes.
  const document = parseDocument(text, { uniqueKeys: true });
  if (document.errors.length > 0)
    throw new InputError(`${where}: not valid YAML (${document.errors[0]!.message.split('\n')[0]!.replace(/:$/, '')})`);
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    // The yaml library throws when the aliases would expand past the bound: a bad file, not a crash.
    throw new InputError(
      `${where}: YAML aliases expand too far ` +
        `(${(error as Error).message}); write the repeated parts out, or ` +
        `use fewer aliases`,
    );
  }
  if (value === null || value === undefined)
    throw new InputError(`${where}: empty; an experiment has at least a title and a method or expectations`);
  return value;
}

/** `line 3, column 7` (both from 1) of an offset in `text`, as positionOf and YAML's refusals say it. */
function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/** How the schema is compiled, at build time (shape-writer.ts) or, failing that, here. */
export const SHAPE_AJV_OPTIONS = { allErrors: true, strict: false, verbose: true } as const;
/** The validator `npm run build` generates (shape-writer.ts), next to this module in dist. */
export const SHAPE_VALIDATOR_URL = new URL('./shape-validator.cjs', import.meta.url);

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
let validator: Validate | undefined;

/** Which schema a generated validator was built from. */
export function schemaFingerprint(schema: unknown): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

/**
 * The generated validator when it was built from this schema, else the schema compiled now: loading
 * ajv and compiling costs ~150-200 ms of CPU, loading the generated code a fraction of it.
 */
function experimentValidator(): Validate {
  const require = createRequire(import.meta.url);
  try {
    const generated = require(fileURLToPath(SHAPE_VALIDATOR_URL)) as { default: Validate; fingerprint?: string };
    if (generated.fingerprint === schemaFingerprint(EXPERIMENT_SCHEMA)) return generated.default;
  } catch (error) {
    // Not generated (a `tsc` alone): compile below. Any other failure is a broken build, said as such.
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
  }
  const { Ajv } = require('ajv') as typeof import('ajv');
  return new Ajv(SHAPE_AJV_OPTIONS).compile(EXPERIMENT_SCHEMA);
}

/** Checks `raw` against the published schema; throws naming the first problem where it is. */
export function checkShape(raw: unknown, where = 'experiment'): void {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new InputError(`${where}: must be a mapping with title, method, … (got ${describeValue(raw)})`);
  const forbidden = findForbiddenKey(raw, '', new Set());
  if (forbidden?.deep)
    throw new InputError(`${where}: nested deeper than ${MAX_EXPERIMENT_DEPTH} levels (at ${forbidden.at})`);
  if (forbidden?.cycle)
    throw new InputError(
      `${where}: ${forbidden.at || 'the top level'} contains itself (a ` +
        `YAML alias of a node inside its own anchor): an experiment is a ` +
        `tree`,
    );
  if (forbidden !== undefined)
    throw new InputError(
      `${where}: field ${JSON.stringify(forbidden.key)} is not accepted${forbidden.at ? ` (at ${forbidden.at})` : ''}`,
    );
  validator ??= experimentValidator();
  if (validator(raw)) return;
  throw new InputError(describeErrors(validator.errors ?? [], raw));
}

/**
 * The first key no config may have, the first node that contains itself (YAML builds one when an
 * alias points inside its own anchor, `a: &x [*x]`, and every walk of it would never end), or the
 * first node nested past the depth text is held to: an object argument arrives already parsed, and
 * this walk, the schema check and the readers all recurse.
 */
function findForbiddenKey(
  value: unknown,
  at: string,
  ancestors: Set<object>,
): { key: string; at: string; cycle?: true; deep?: true } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (ancestors.has(value)) return { key: '', at, cycle: true };
  if (ancestors.size >= MAX_EXPERIMENT_DEPTH) return { key: '', at, deep: true };
  ancestors.add(value);
  for (const [key, child] of Object.entries(value)) {
    if (FORBIDDEN_KEYS.has(key)) return { key, at };
    const found = findForbiddenKey(
      child,
      Array.isArray(value) ? `${at}[${key}]` : at ? `${at}.${key}` : key,
      ancestors,
    );
    if (found) return found;
  }
  ancestors.delete(value);
  return undefined;
}

/** `/method/1/fault` → `method[1].fault`. */
function pathOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}

function valueAt(raw: unknown, pointer: string): unknown {
  let current = raw;
  for (const part of pointer.split('/').slice(1))
    current = (current as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return current;
}

/**
 * One message for the most useful error: the deepest (the one that got furthest into the value)
 * says most; where a field takes several forms and none fits at its own level, the field's
 * description of its forms says more than any one branch's complaint.
 */
function describeErrors(errors: ErrorObject[], raw: unknown): string {
  const deepest = [...errors].sort(
    (a, b) => b.instancePath.split('/').length - a.instancePath.split('/').length || rank(a) - rank(b),
  )[0]!;
  const where = pathOf(deepest.instancePath) || 'experiment';
  const got = describeValue(valueAt(raw, deepest.instancePath));
  switch (deepest.keyword) {
    case 'additionalProperties': {
      const schema = deepest.parentSchema as { properties?: Record<string, unknown> } | undefined;
      const accepted = Object.keys(schema?.properties ?? {});
      return `${where}: unknown field ${JSON.stringify((deepest.params as { additionalProperty: string }).additionalProperty)}${accepted.length ? ` (accepted: ${accepted.join(', ')})` : ''}`;
    }
    case 'required':
      return `${where}: ${(deepest.params as { missingProperty: string }).missingProperty} is required`;
    case 'type':
      return `${where}: must be ${article((deepest.params as { type: string | string[] }).type)} (got ${got})`;
    case 'enum':
      return (
        `${where}: must be one of ${(deepest.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')} ` +
        `(got ${got})`
      );
    case 'const':
      return (
        `${where}: must be ${JSON.stringify((deepest.params as { allowedValue: unknown }).allowedValue)} ` +
        `(got ${got})`
      );
    case 'oneOf': {
      const schema = deepest.parentSchema as { description?: string } | undefined;
      return (
        `${where}: not a form this field takes${schema?.description ? `: ${schema.description}` : ''} ` + `(got ${got})`
      );
    }
    default:
      return `${where}: ${deepest.message ?? 'is not valid'} (got ${got})`;
  }
}

/** Among errors at the same depth, the most specific kind first. */
function rank(error: ErrorObject): number {
  return (
    [
      'oneOf',
      'additionalProperties',
      'required',
      'enum',
      'const',
      'minimum',
      'maximum',
      'exclusiveMinimum',
      'minLength',
      'maxLength',
      'type',
    ].indexOf(error.keyword) >>> 0
  );
}

function article(type: string | string[]): string {
  const list = Array.isArray(type) ? type : type.split(',');
  const word = (t: string): string =>
    t === 'integer' ? 'a whole number' : t === 'object' ? 'a mapping' : t === 'array' ? 'a list' : `a ${t}`;
  return list.map(word).join(' or ');
}

/**
 * Where in the text the field a refusal names is: `method[1].fault: …` → "line 9, column 7". The
 * path is walked in the YAML document (JSON is YAML too) as far as it goes; an unknown field is
 * pointed at by its own key. Undefined when the message names no path found in the text.
 */
export async function positionOf(text: string, message: string): Promise<string | undefined> {
  const head = /^([A-Za-z_$][\w$-]*(?:\[\d+\]|\.[\w$-]+)*):/.exec(message);
  if (!head || head[1] === 'experiment') {
    const unknown = /^experiment: (?:unknown )?field "([^"]+)"/.exec(message);
    if (!unknown) return undefined;
  }
  const { LineCounter, parseDocument, isMap, isSeq, isScalar } = await import('yaml');
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: false });
  const parts =
    head && head[1] !== 'experiment'
      ? [...head[1]!.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!))
      : [];
  let node: unknown = document.contents;
  let at: [number, number, number] | undefined = (node as { range?: [number, number, number] } | null)?.range;
  for (const part of parts) {
    if (isSeq(node) && typeof part === 'number' && node.items[part] !== undefined) node = node.items[part];
    else if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(part));
      if (!pair) break;
      node = pair.value ?? pair.key;
      if (pair.value === null) at = (pair.key as { range?: [number, number, number] }).range;
    } else break;
    at = (node as { range?: [number, number, number] } | null)?.range ?? at;
  }
  // An unknown field: its own key, not the mapping holding it.
  const field = /(?:unknown field|field) "([^"]+)"/.exec(message)?.[1];
  if (field !== undefined && isMap(node)) {
    const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === field);
    at = (pair?.key as { range?: [number, number, number] } | undefined)?.range ?? at;
  }
  if (!at) return undefined;
  const { line, col } = lineCounter.linePos(at[0]);
  return `line ${line}, column ${col}`;
}
