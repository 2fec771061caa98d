/**
 * Toxiproxy's toxics as another spelling of faultline's faults: a toxic (type, attributes, stream,
 * toxicity) becomes the fault a proxy's fault list takes. A toxic keeps no behaviour of its own;
 * each fault's declaration (src/proxy/faults/*.declaration.ts, `toxic`) says which toxic it is,
 * which attribute is which field (with the unit change), and what the Toxiproxy meaning fixes (the
 * table in docs/network.md lists them: latency → latency, timeout → stall, bandwidth's rate × 1000 …).
 *
 * Beyond Toxiproxy: faultline's other network faults by their own names (packet_loss, jitter,
 * blackhole, with their fields as attributes, snake_case or camelCase), and the HTTP faults as
 * `http_<type>` (http_error, http_rate_limit, …) with the HTTP fault's fields as attributes.
 *
 * `stream` picks the link (upstream: client → server; downstream, the default: server → client);
 * `toxicity` becomes the fault list's per-connection `chance` (an HTTP fault's `probability`).
 */
import { InputError } from '../kernel/errors.js';
import { validateFault, type FaultSpec } from '../proxy/faults/index.js';
import { validateHttpFault, type HttpFaultSpec } from '../proxy/http/spec.js';
import type { ToxicDeclaration } from '../proxy/faults/declaration.js';
import { LIST_FAULTS } from '../proxy/faults/declarations.js';
import { HTTP_FAULT_TYPES, NETWORK_FAULT_TYPES } from '../proxy/vocabulary.js';

/** A toxic as Toxiproxy's API answers it (keys in its order). */
export interface ToxicJson {
  attributes: Record<string, unknown>;
  name: string;
  type: string;
  stream: string;
  toxicity: number;
}

/** How one Toxiproxy toxic maps onto one of our faults. */
interface Spelling extends ToxicDeclaration {
  fault: string;
  /** Each attribute → the fault's field (Toxiproxy answers 0 for an attribute not sent). */
  fields: Record<string, { field: string; scale?: number }>;
}

/** Toxiproxy's toxics by type, from the declarations. */
const TOXIPROXY: Readonly<Record<string, Spelling>> = Object.fromEntries(
  LIST_FAULTS.flatMap(({ type, toxic, fields }) => {
    if (!toxic) return [];
    const attributes = fields.flatMap((field) =>
      field.toxic ? [[field.toxic.attribute, { field: field.key, scale: field.toxic.scale }] as const] : [],
    );
    return [[toxic.type, { ...toxic, fault: type, fields: Object.fromEntries(attributes) }]];
  }),
);

/** Our network faults Toxiproxy has no toxic of the same name for, taken by their own names and fields. */
const OWN_NETWORK_TYPES = NETWORK_FAULT_TYPES.filter((type) => !(type in TOXIPROXY));
const HTTP_PREFIX = 'http_';

/** Every toxic type this API takes: Toxiproxy's, then ours. */
export const TOXIC_TYPES: readonly string[] = [
  ...Object.keys(TOXIPROXY),
  ...OWN_NETWORK_TYPES,
  ...HTTP_FAULT_TYPES.map((type) => `${HTTP_PREFIX}${type}`),
];

export function isToxicType(type: unknown): type is string {
  return typeof type === 'string' && TOXIC_TYPES.includes(type);
}

/** Whether a toxic of this type needs a proxy that reads HTTP. */
export function isHttpToxic(type: string): boolean {
  return type.startsWith(HTTP_PREFIX);
}

/** The attributes Toxiproxy would answer with: every field of the toxic, its zero where not sent. */
export function withDefaults(type: string, attributes: Record<string, unknown>): Record<string, unknown> {
  const spelling = TOXIPROXY[type];
  if (!spelling) return { ...attributes };
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(spelling.fields)) out[name] = attributes[name] ?? 0;
  return out;
}

export type ToxicFault = { kind: 'network'; spec: FaultSpec } | { kind: 'http'; spec: HttpFaultSpec } | undefined;

/** A stream's link as our faults name it: the server socket, read (downstream) or written (upstream). */
function placement(stream: string): { side: 'server'; direction: 'ingress' | 'egress' } {
  return { side: 'server', direction: stream.toLowerCase() === 'upstream' ? 'egress' : 'ingress' };
}

/**
 * The fault a toxic is, checked by the fault's own validator; undefined for a toxic that does
 * nothing (bandwidth at rate 0). Throws an InputError naming the attribute as the toxic spells it.
 */
export function toxicFault(toxic: ToxicJson): ToxicFault {
  const spelling = TOXIPROXY[toxic.type];
  if (spelling) return toxiproxyFault(toxic, spelling);
  if (isHttpToxic(toxic.type)) {
    const spec: HttpFaultSpec = {
      ...toxic.attributes,
      type: toxic.type.slice(HTTP_PREFIX.length),
      name: toxic.name,
      probability: toxic.toxicity,
    };
    checked(() => validateHttpFault(spec), {}, HTTP_SET_BY_TOXIC);
    return { kind: 'http', spec };
  }
  const spec: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(toxic.attributes))
    spec[key.replace(/_(\w)/g, (_, c: string) => c.toUpperCase())] = value;
  Object.assign(spec, { type: toxic.type, name: toxic.name, ...placement(toxic.stream) });
  // Its attributes were read as camelCase fields (`burst_len` as burstLen): a refusal names them as a toxic does.
  checked(() => validateFault(spec), {}, NETWORK_SET_BY_TOXIC, snakeCase);
  return { kind: 'network', spec: { ...spec, chance: toxic.toxicity } as unknown as FaultSpec };
}

function toxiproxyFault(toxic: ToxicJson, spelling: Spelling): ToxicFault {
  const attributes: Record<string, number> = {};
  const spec: Record<string, unknown> = { type: spelling.fault, name: toxic.name, ...placement(toxic.stream) };
  for (const [name, { field, scale }] of Object.entries(spelling.fields)) {
    const value = toxic.attributes[name] ?? 0;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new InputError(`attributes.${name} must be a number (got ${JSON.stringify(value)})`);
    attributes[name] = value;
    spec[field] = value * (scale ?? 1);
  }
  if (spelling.inert?.(attributes)) return undefined;
  Object.assign(spec, spelling.fixed);
  const fieldNames = Object.fromEntries(Object.entries(spelling.fields).map(([name, { field }]) => [field, name]));
  checked(() => validateFault(spec), fieldNames);
  return { kind: 'network', spec: { ...spec, chance: toxic.toxicity } as unknown as FaultSpec };
}

/** A fault's fields the toxic itself sets (its type, name, toxicity, stream, proxy): never attributes. */
const HTTP_SET_BY_TOXIC: ReadonlySet<string> = new Set(['type', 'name', 'probability', 'target']);
const NETWORK_SET_BY_TOXIC: ReadonlySet<string> = new Set(['type', 'name', 'side', 'direction', 'target', 'chance']);

/**
 * Runs a fault validator, its message speaking of the toxic's attributes rather than the fault's fields: a
 * field renamed, and a list of accepted fields cut to the attributes, spelt as a toxic spells them (snake_case).
 */
function checked(
  validate: () => unknown,
  fieldNames: Record<string, string> = {},
  setByToxic: ReadonlySet<string> = new Set(),
  spell: (field: string) => string = (field) => field,
): void {
  try {
    validate();
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const message = error.message
      .replace(/^[\w ]*fault: /, '')
      .replace(/^(\w+) must/, (_, field: string) => `attributes.${fieldNames[field] ?? spell(field)} must`)
      .replace(/^unknown field "([^"]*)"/, (_, field: string) => `unknown attribute "${spell(field)}"`)
      .replace(/\(accepted: ([^)]*)\)/, (_, list: string) => {
        const names = list.split(', ').filter((name) => !setByToxic.has(name));
        return `(accepted attributes: ${names.map((name) => fieldNames[name] ?? spell(name)).join(', ')})`;
      });
    throw new InputError(message);
  }
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
