/**
 * What a tool call's arguments go through before its handler sees them, the same for every tool:
 *
 * - `""` (or null) for an optional argument means its default, as fault's payload template sends
 *   `"direction": ""`, `"num_clients": ""`; a numeric string ("3") is the number where the schema
 *   says number; an enum value matches in any case ("Server"). The same holds inside structured
 *   arguments, for the properties their schema declares.
 * - A structured argument (objectArgument, objectListArgument) is an object, or an array of
 *   objects, in the published schema, and may also be sent as JSON text (YAML too where the
 *   argument says so; an array's items may each be JSON text): both forms reach the handler as
 *   the same objects. Their contents are checked by the domain code that reads them (with its own
 *   field names and limits), not here; what is checked here is that they are objects, within a
 *   size and depth bound, with no `__proto__`, `constructor` or `prototype` key at any depth.
 * - Everything else is then validated against the tool's zod shape, and every problem becomes a
 *   InputError naming the argument: `num_clients: must be at least 1 (got 0)`.
 *
 * The coercions follow the JSON Schema the tool publishes (its tools/list entry), so what a model
 * was told is exactly what is accepted; the schemas themselves stay plain (no unions).
 */
import * as z from 'zod';
import { InputError } from '../kernel/errors.js';
import { describeValue, isPlainObject, refuseForbiddenKeys } from '../config-reader.js';
import { jsonDepthExceeds, repeatedKey } from '../jsonrpc/message.js';

/** Largest JSON or YAML text accepted for one structured argument, in characters. */
export const MAX_STRUCTURED_TEXT_CHARS = 1_000_000;
/** Deepest nesting accepted in a structured argument (as text or as an object). */
export const MAX_STRUCTURED_DEPTH = 64;

interface StructuredSpec {
  /** An array of objects (each item may be JSON text) rather than one object. */
  list: boolean;
  /** Text may be YAML as well as JSON. */
  yaml: boolean;
  /**
   * Text that is not a JSON object is passed on as it is (the argument also takes plain text), unless it starts
   * with `{` or `[{` and does not parse: that is broken JSON, refused.
   */
  plainText: boolean;
  /** One object, or an array of them. */
  orList: boolean;
}

/** The zod schemas made by the helpers below, with how their text form is read. */
const STRUCTURED = new WeakMap<object, StructuredSpec>();

// `schema` is typed by zod's core interface: relating a ZodObject to the classic z.ZodType class costs
// the type checker ~1.7 s of the build (every method of the class compared), the core one ~0.1 s.
function structured<T>(schema: z.core.$ZodType, spec: StructuredSpec): z.ZodType<T> {
  STRUCTURED.set(schema, spec);
  return schema as unknown as z.ZodType<T>;
}

/**
 * A structured argument: published as an object with `shape`'s properties (declare the ones a
 * caller usually sets; others are passed on too), accepted as an object or as JSON text (YAML with
 * `yaml`). The handler gets the object unchecked beyond that: its domain reader validates it.
 */
export function objectArgument(
  shape: z.ZodRawShape,
  description: string,
  options: { yaml?: boolean } = {},
): z.ZodType<Record<string, unknown>> {
  return structured(z.looseObject(shape).describe(description), {
    list: false,
    yaml: options.yaml === true,
    plainText: false,
    orList: false,
  });
}

/** objectArgument that also takes plain text (a string that is not a JSON object reaches the handler as it is). */
export function objectOrTextArgument(
  shape: z.ZodRawShape,
  description: string,
): z.ZodType<Record<string, unknown> | string> {
  return structured(z.looseObject(shape).describe(description), {
    list: false,
    yaml: false,
    plainText: true,
    orList: false,
  });
}

/** objectArgument that also takes an array of such objects (published as the object). */
export function objectOrListArgument(
  shape: z.ZodRawShape,
  description: string,
): z.ZodType<Record<string, unknown> | Array<Record<string, unknown>>> {
  return structured(z.looseObject(shape).describe(description), {
    list: false,
    yaml: false,
    plainText: false,
    orList: true,
  });
}

/** An array of objects with `itemShape`'s properties; the array, or any item, may be JSON text. */
export function objectListArgument(
  itemShape: z.ZodRawShape,
  description: string,
): z.ZodType<Array<Record<string, unknown>>> {
  return structured(z.array(z.looseObject(itemShape)).describe(description), {
    list: true,
    yaml: false,
    plainText: false,
    orList: false,
  });
}

/** A JSON Schema node as the registry publishes it (only what the coercions look at). */
export interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
  required?: string[];
}

/** The structured spec of a field, looking through .optional(), .nullable() and .default(). */
function structuredSpecOf(schema: z.core.$ZodType): StructuredSpec | undefined {
  let current: z.core.$ZodType | undefined = schema;
  for (let i = 0; current && i < 8; i++) {
    const spec = STRUCTURED.get(current);
    if (spec) return spec;
    const def: { type: string; innerType?: z.core.$ZodType } = (
      current as unknown as { _zod: { def: { type: string; innerType?: z.core.$ZodType } } }
    )._zod.def;
    current = ['optional', 'nullable', 'default', 'prefault'].includes(def.type) ? def.innerType : undefined;
  }
  return undefined;
}

/** The JSON Schema of a tool's arguments, as the coercions read it. */
export function inputSchemaOf(shape: z.ZodRawShape): SchemaNode {
  return z.toJSONSchema(z.object(shape), { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as SchemaNode;
}

/** Reads one tool's arguments (see the module comment); built once per tool, on its first call. */
export class ArgumentReader {
  private readonly properties: Record<string, SchemaNode>;
  private readonly required: ReadonlySet<string>;
  private readonly structuredFields = new Map<string, StructuredSpec>();
  /** The tool's shape with each structured field taken as already checked. */
  private readonly validator: z.ZodObject;

  /**
   * `published`: the tool's inputSchema as tools/list publishes it, when the server has it (the list generated at
   * build time): the same conversion of `shape`, done then, so a tool's first call need not convert it (2-7 ms of
   * cold zod code). test/tool-arguments.test.ts holds every tool's published schema to inputSchemaOf's.
   */
  constructor(shape: z.ZodRawShape, published?: SchemaNode) {
    const json = published ?? inputSchemaOf(shape);
    this.properties = json.properties ?? {};
    this.required = new Set(json.required ?? []);
    // Core types here, as in structured(): the classic z.ZodType costs the checker a second.
    const runtime: Record<string, z.core.$ZodType> = {};
    for (const [name, field] of Object.entries(shape)) {
      const spec = structuredSpecOf(field);
      if (spec) this.structuredFields.set(name, spec);
      runtime[name] = spec ? z.unknown().optional() : field;
    }
    this.validator = z.object(runtime);
  }

  /** The arguments the handler gets, or an InputError naming the first bad one(s). */
  async read(given: Record<string, unknown>): Promise<Record<string, unknown>> {
    const prepared: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(given)) {
      const node = this.properties[name] ?? {};
      const optional = !this.required.has(name);
      if (optional && isEmpty(value)) continue; // its default
      const spec = this.structuredFields.get(name);
      // A required structured argument sent as "" or null: said as missing, not as text that failed to parse.
      if (spec && isEmpty(value))
        throw new InputError(
          `${name}: required, ${expectedOf(spec)} (${value === null ? 'null' : 'empty text'} given)`,
        );
      prepared[name] = spec ? await readStructured(name, value, spec, node) : coerce(value, node);
    }
    for (const name of this.structuredFields.keys()) {
      if (this.required.has(name) && prepared[name] === undefined) throw new InputError(`${name}: is required`);
    }
    const result = this.validator.safeParse(prepared, { reportInput: true });
    if (!result.success) throw new InputError(issuesMessage(result.error.issues));
    return result.data as Record<string, unknown>;
  }
}

/** `""`, blanks or null: what a caller sends for "use the default". */
function isEmpty(value: unknown): boolean {
  return value === null || (typeof value === 'string' && value.trim() === '');
}

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

function typeOf(node: SchemaNode): string | undefined {
  return Array.isArray(node.type) ? node.type[0] : node.type;
}

/** A value moved toward its published type where that is unambiguous; anything else is left for validation to refuse.
 * */
function coerce(value: unknown, node: SchemaNode, depth = 0): unknown {
  const type = typeOf(node);
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if ((type === 'number' || type === 'integer') && NUMERIC.test(trimmed)) return Number(trimmed);
    if (node.enum && !node.enum.includes(value)) {
      const match = node.enum.find(
        (option) => typeof option === 'string' && option.toLowerCase() === trimmed.toLowerCase(),
      );
      if (match !== undefined) return match;
    }
    return value;
  }
  if (depth > MAX_STRUCTURED_DEPTH) return value;
  if (Array.isArray(value) && type === 'array' && node.items)
    return value.map((item) => coerce(item, node.items!, depth + 1));
  if (isPlainObject(value) && type === 'object' && node.properties) return coerceProperties(value, node, depth + 1);
  return value;
}

/** The declared properties of an object coerced, and those optional ones sent as "" or null left out (their default).
 * */
function coerceProperties(object: Record<string, unknown>, node: SchemaNode, depth: number): Record<string, unknown> {
  const required = new Set(node.required ?? []);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    const child = node.properties?.[key];
    if (child && !required.has(key) && isEmpty(value)) continue;
    // Defined, not assigned: `out["__proto__"] = v` would set out's prototype and drop the key, so
    // the readers downstream, which refuse it by name, would never see it.
    Object.defineProperty(out, key, {
      value: child ? coerce(value, child, depth) : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A structured argument as objects: text parsed, the shape checked, forbidden keys refused, declared properties
 * coerced. */
async function readStructured(name: string, value: unknown, spec: StructuredSpec, node: SchemaNode): Promise<unknown> {
  let parsed = typeof value === 'string' ? await parseText(name, value, spec) : value;
  // Plain text stays text unless it is a JSON object.
  if (spec.plainText && typeof value === 'string' && !isPlainObject(parsed)) return value;
  if (spec.list) {
    if (!Array.isArray(parsed))
      throw new InputError(`${name}: must be an array of objects (got ${describeValue(parsed)})`);
    parsed = await Promise.all(parsed.map((item, index) => readItem(`${name}[${index}]`, item)));
  } else if (
    !isPlainObject(parsed) &&
    !(spec.orList && Array.isArray(parsed) && parsed.length > 0 && parsed.every(isPlainObject))
  ) {
    throw new InputError(
      `${name}: must be an object${spec.orList ? ' or an array of objects' : ''} (got ${describeValue(parsed)})`,
    );
  }
  refuseForbiddenKeys(parsed, name, MAX_STRUCTURED_DEPTH);
  if (Array.isArray(parsed)) {
    const itemNode = spec.list ? node.items : node;
    return itemNode ? parsed.map((item) => coerce(item, itemNode)) : parsed;
  }
  return coerce(parsed, node);
}

/** One item of an object list: an object, or JSON text of one. */
async function readItem(where: string, item: unknown): Promise<Record<string, unknown>> {
  const value =
    typeof item === 'string'
      ? await parseText(where, item, { list: false, yaml: false, plainText: false, orList: false })
      : item;
  if (!isPlainObject(value)) throw new InputError(`${where}: must be an object (got ${describeValue(value)})`);
  return value;
}

async function parseText(name: string, text: string, spec: StructuredSpec): Promise<unknown> {
  if (text.length > MAX_STRUCTURED_TEXT_CHARS) {
    throw new InputError(
      `${name}: ${text.length} characters of text; at most ${MAX_STRUCTURED_TEXT_CHARS} are accepted`,
    );
  }
  if (jsonDepthExceeds(text, MAX_STRUCTURED_DEPTH))
    throw new InputError(`${name}: nested deeper than ${MAX_STRUCTURED_DEPTH} levels`);
  const trimmed = text.trim();
  let jsonProblem: string;
  try {
    const value = JSON.parse(trimmed) as unknown;
    const repeated = repeatedKey(trimmed);
    if (repeated === undefined) return value;
    // JSON.parse would keep the last silently: refused, naming the key (YAML would not name it).
    throw new InputError(
      `${name}: the key ${JSON.stringify(repeated)} is given twice in one object; give each key once`,
    );
  } catch (error) {
    if (error instanceof InputError) throw error;
    jsonProblem = (error as Error).message;
  }
  if (spec.yaml) {
    const { parse } = await import('yaml');
    try {
      // An empty document (only comments) is an empty object, as a plan file with nothing in it.
      return parse(trimmed, { maxAliasCount: 100 }) ?? {};
    } catch (error) {
      throw new InputError(`${name}: neither JSON nor YAML (${(error as Error).message.split('\n')[0]})`);
    }
  }
  if (spec.plainText) {
    // Text opening like JSON is meant as JSON: cut off or mistyped, read as a summary it would answer nothing.
    // `[high] db down` is a summary; `[{"id": ` is cut-off JSON.
    if (!/^(\{|\[\s*\{)/.test(trimmed)) return text;
    throw new InputError(
      `${name}: starts like JSON but is not JSON text (${jsonProblem}); ` +
        'give an object, its JSON text, or plain text not starting with { or [{',
    );
  }
  throw new InputError(`${name}: not JSON text (${jsonProblem}); give ${expectedOf(spec)}`);
}

/** What a structured argument takes, as its refusals say it. */
function expectedOf(spec: StructuredSpec): string {
  const shape = spec.list ? 'an array of objects' : spec.orList ? 'an object or an array of objects' : 'an object';
  return spec.plainText ? `${shape} or plain text` : shape;
}

const EXPECTED: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
};

/** zod's issues as one message, each naming its argument (at most three). */
export function issuesMessage(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, 3).map(issueMessage);
  return issues.length > 3 ? `${shown.join('; ')}; and ${issues.length - 3} more` : shown.join('; ');
}

function issueMessage(issue: z.core.$ZodIssue): string {
  const path = formatPath(issue.path);
  const input = (issue as { input?: unknown }).input;
  const got = ` (got ${describeValue(input)})`;
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return `${path}: is required`;
      return `${path}: must be ${EXPECTED[issue.expected] ?? issue.expected}${got}`;
    case 'too_small': {
      const n = Number(issue.minimum);
      if (issue.origin === 'string')
        return n === 1 ? `${path}: must not be empty` : `${path}: must be at least ${n} characters${got}`;
      if (issue.origin === 'array') return `${path}: must have at least ${n} item${n === 1 ? '' : 's'}`;
      return `${path}: must be ${issue.inclusive ? 'at least' : 'more than'} ${n}${got}`;
    }
    case 'too_big': {
      const n = Number(issue.maximum);
      if (issue.origin === 'string') return `${path}: must be at most ${n} characters (got ${String(input).length})`;
      if (issue.origin === 'array')
        return `${path}: must have at most ${n} items (got ${Array.isArray(input) ? input.length : '?'})`;
      return `${path}: must be ${issue.inclusive ? 'at most' : 'less than'} ${n}${got}`;
    }
    case 'invalid_value':
      return `${path}: must be one of ${issue.values.map((value) => String(value)).join(', ')}${got}`;
    default:
      return `${path}: ${issue.message}`;
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path)
    text += typeof part === 'number' ? `[${part}]` : text === '' ? String(part) : `.${String(part)}`;
  return text || 'arguments';
}
