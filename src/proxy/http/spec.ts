/**
 * HTTP fault specs: validation, the spellings accepted (faultline's snake_case, mcp-chaos-monkey's
 * camelCase and kebab-case types, its field names), and the factory from spec to behaviour.
 *
 *   {"type":"error","statusCode":503}                  ≡ {"type":"error","status_code":503}
 *   {"type":"rate-limit","retryAfterSeconds":5}        ≡ {"type":"rate_limit","retry_after":5}
 *   {"type":"schema-mismatch","missingFields":["a.b"]} ≡ {"type":"schema_mismatch","missing_fields":["a.b"]}
 *   {"type":"latency","delayMs":200}, {"type":"timeout","hangMs":5000}, {"type":"connection-drop","afterBytes":10}
 */
import { InputError } from '../../kernel/errors.js';
import { refuseSameNames, SpecReader } from '../faults/fault.js';
import { httpConnectionDrop, type HttpConnectionDropSpec } from './connection-drop.js';
import { httpConnectionRefused, type HttpConnectionRefusedSpec } from './connection-refused.js';
import { httpError, readHttpError, type HttpErrorSpec } from './error.js';
import { HTTP_FAULT_TYPES, readCommon, type HttpFaultBehaviour, type HttpFaultType } from './fault.js';
import { CONNECTION_FAULT_TYPES, NETWORK_FAULT_TYPES } from '../vocabulary.js';
import { NETWORK_COMMON_FIELDS, snakeCase, spellingsOf, type FieldDeclaration } from '../faults/declaration.js';
import { LATENCY } from '../faults/latency.declaration.js';
import { HTTP_FAULTS } from './declarations.js';
import { httpLatency, type HttpLatencySpec } from './latency.js';
import { httpMalformed, type HttpMalformedSpec } from './malformed.js';
import { httpRateLimit, type HttpRateLimitSpec } from './rate-limit.js';
import { httpSchemaMismatch, type HttpSchemaMismatchSpec } from './schema-mismatch.js';
import { httpTimeout, type HttpTimeoutSpec } from './timeout.js';

/** A validated HTTP fault, every default filled in. */
export type ResolvedHttpFault =
  | HttpLatencySpec
  | HttpErrorSpec
  | HttpRateLimitSpec
  | HttpTimeoutSpec
  | HttpMalformedSpec
  | HttpSchemaMismatchSpec
  | HttpConnectionRefusedSpec
  | HttpConnectionDropSpec;

/** As written by a caller: any of the accepted spellings. */
export type HttpFaultSpec = { type: string } & Record<string, unknown>;

/** The faults whose spec is more than the common fields and their declaration's fields as read. */
const CUSTOM_READERS: Partial<Record<HttpFaultType, (reader: SpecReader) => ResolvedHttpFault>> = {
  error: readHttpError,
};

function readHttpFault(declaration: (typeof HTTP_FAULTS)[number], reader: SpecReader): ResolvedHttpFault {
  const custom = CUSTOM_READERS[declaration.type];
  if (custom) return custom(reader);
  const spec = { type: declaration.type, ...readCommon(reader), ...reader.declared(declaration.fields) };
  reader.done();
  return spec as ResolvedHttpFault;
}

/** The reference tools' field names (after camelCase → snake_case) for ours: the declarations' aliases (delay_ms →
 * delay). */
const FIELD_ALIASES: Record<string, string> = Object.fromEntries(
  HTTP_FAULTS.flatMap((fault) => fault.fields as readonly FieldDeclaration[]).flatMap((field) =>
    (field.aliases ?? []).map((alias) => [snakeCase(alias), field.key]),
  ),
);

/** The spec with keys and type in faultline's spelling; a key given twice in two spellings is an error. */
export function normalizeHttpFault(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const snake = snakeCase(key);
    const canonical = FIELD_ALIASES[snake] ?? snake;
    if (canonical in out)
      throw new InputError(`HTTP fault: "${key}" is given twice (as ${canonical} in another spelling)`);
    out[canonical] =
      key === 'type' && typeof value === 'string' ? value.trim().toLowerCase().replace(/-/g, '_') : value;
  }
  return out;
}

export function validateHttpFault(spec: unknown): ResolvedHttpFault {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new InputError(`an HTTP fault must be an object with a "type" (one of ${HTTP_FAULT_TYPES.join(', ')})`);
  }
  const raw = normalizeHttpFault(spec as Record<string, unknown>);
  const declaration = HTTP_FAULTS.find((fault) => fault.type === raw['type']);
  if (!declaration)
    throw new InputError(
      `HTTP fault type must be one of ${HTTP_FAULT_TYPES.join(', ')} ` +
        `(kebab-case accepted; got ` +
        `${JSON.stringify((spec as Record<string, unknown>)['type'])})`,
    );
  return readHttpFault(declaration, new SpecReader(declaration.type, raw));
}

export function validateHttpFaults(specs: unknown): ResolvedHttpFault[] {
  if (!Array.isArray(specs)) throw new InputError('HTTP faults must be an array of fault objects');
  const resolved = specs.map(validateHttpFault);
  refuseSameNames(resolved, 'HTTP faults');
  return resolved;
}

export function httpBehaviour(spec: ResolvedHttpFault): HttpFaultBehaviour {
  switch (spec.type) {
    case 'latency':
      return httpLatency(spec);
    case 'error':
      return httpError(spec);
    case 'rate_limit':
      return httpRateLimit(spec);
    case 'timeout':
      return httpTimeout(spec);
    case 'malformed':
      return httpMalformed(spec);
    case 'schema_mismatch':
      return httpSchemaMismatch(spec);
    case 'connection_refused':
      return httpConnectionRefused();
    case 'connection_drop':
      return httpConnectionDrop(spec);
  }
}

/** Network fault types (src/proxy/faults) — the other half of the one fault model. */
/** The network faults whose type alone says so (latency is both; its fields decide). */
const NETWORK_TYPES = new Set<string>([
  ...NETWORK_FAULT_TYPES.filter((type) => type !== 'latency'),
  ...CONNECTION_FAULT_TYPES,
]);
const NETWORK_LATENCY_FIELDS = new Set(
  [...LATENCY.fields, ...NETWORK_COMMON_FIELDS]
    .filter((field) => field.key !== 'name')
    .flatMap((field) => spellingsOf(field).map(snakeCase)),
);

/**
 * Whether a fault config (any spelling) is a network fault or an HTTP fault. `latency` is both:
 * with `latencyMs` (and the other network latency fields) it is the network fault, with
 * `delay`/`delayMs` the HTTP one.
 */
export function faultKind(raw: unknown): 'network' | 'http' {
  if (typeof raw !== 'object' || raw === null) return 'http';
  const record = raw as Record<string, unknown>;
  const type = typeof record['type'] === 'string' ? record['type'].trim().toLowerCase().replace(/-/g, '_') : '';
  if (NETWORK_TYPES.has(type)) return 'network';
  if (type === 'latency')
    return Object.keys(record).some((key) => NETWORK_LATENCY_FIELDS.has(snakeCase(key))) ? 'network' : 'http';
  return 'http';
}
