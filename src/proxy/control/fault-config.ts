/**
 * One fault config, any door (proxy flags, the admin API, the MCP tools), any spelling: faultline's
 * network faults (camelCase as in src/proxy/faults, or snake_case, kebab-case types) and HTTP
 * faults (snake_case, or mcp-chaos-monkey's camelCase and kebab-case types). `latency` is the HTTP
 * fault with `delay`/`delayMs`, the network fault with `latencyMs` (see faultKind).
 */
import { InputError } from '../../kernel/errors.js';
import { refuseForbiddenKeys } from '../../config-reader.js';
import { NETWORK_COMMON_FIELDS, spellingsOf, type FieldDeclaration } from '../faults/declaration.js';
import { networkFault } from '../faults/declarations.js';
import { validateFault, type FaultSpec } from '../faults/index.js';
import { faultKind, validateHttpFault, type HttpFaultSpec } from '../http/spec.js';
import { CONNECTION_FAULT_TYPES, HTTP_FAULT_TYPES, NETWORK_FAULT_TYPES } from '../vocabulary.js';
import { targetNamesMapping, unknownTargetError, type Mapping } from '../mapping.js';

export type FaultConfig =
  | { kind: 'network'; spec: FaultSpec; type: string }
  | { kind: 'http'; spec: HttpFaultSpec; type: string };

/** Each spelling of a network fault's fields (its declaration's, and the common ones) → the spec key. */
function networkSpellings(type: string): Map<string, string> {
  const keyOf = new Map<string, string>();
  const fields: readonly FieldDeclaration[] = [...NETWORK_COMMON_FIELDS, ...(networkFault(type)?.fields ?? [])];
  for (const field of fields)
    if (!field.argumentOnly) for (const name of spellingsOf(field)) keyOf.set(name, field.key);
  return keyOf;
}

export function parseFaultConfig(raw: unknown, what = 'config'): FaultConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new InputError(`${what}: a fault config is a JSON object with a "type"`);
  const record = raw as Record<string, unknown>;
  refuseForbiddenKeys(record, what);
  const type = typeof record['type'] === 'string' ? record['type'] : '';
  refuseUnknownType(record, type, what);
  try {
    if (faultKind(record) === 'network') {
      const canonicalType = type.trim().toLowerCase().replace(/-/g, '_');
      const keyOf = networkSpellings(canonicalType);
      const spec: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(record)) {
        spec[keyOf.get(key) ?? key.replace(/_(\w)/g, (_, c: string) => c.toUpperCase())] =
          key === 'type' ? canonicalType : value;
      }
      const target = spec['target'];
      delete spec['target'];
      validateFault(spec);
      if (target !== undefined) spec['target'] = target;
      return { kind: 'network', spec: spec as unknown as FaultSpec, type };
    }
    validateHttpFault(record);
    return { kind: 'http', spec: record as HttpFaultSpec, type };
  } catch (error) {
    if (error instanceof InputError) throw new InputError(`${what}: ${error.message}`);
    throw error;
  }
}

/** Every fault type by its kind, and every spelling of latency's amount: a refusal says all of them. */
const LATENCY_AMOUNTS = ['delay', 'delay_ms', 'delayMs', 'latency_ms', 'latencyMs'];

function refuseUnknownType(record: Record<string, unknown>, type: string, what: string): void {
  const canonical = type.trim().toLowerCase().replace(/-/g, '_');
  const network = [...NETWORK_FAULT_TYPES, ...CONNECTION_FAULT_TYPES];
  if (!new Set<string>([...network, ...HTTP_FAULT_TYPES]).has(canonical))
    throw new InputError(
      `${what}.type: ${type === '' ? 'required' : `"${type}" is not a fault type`}; network faults (any mapping): ` +
        `${network.join(', ')}; HTTP faults (an HTTP mapping): ${HTTP_FAULT_TYPES.join(', ')} ` +
        '(kebab-case accepted)',
    );
  if (canonical === 'latency' && !Object.keys(record).some((key) => LATENCY_AMOUNTS.includes(key)))
    throw new InputError(
      `${what}: latency needs its amount in milliseconds: delay, delay_ms or delayMs (HTTP: each request waits) ` +
        'or latency_ms or latencyMs (network: the bytes wait)',
    );
}

/** Parses a JSON text into a fault config (for --http-fault and the MCP tools' string arrays). */
export function parseFaultJson(text: string, what: string): FaultConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(
      `${what}: not JSON; write a fault config such as ` +
        `{"type":"error","status_code":503} or ` +
        `{"type":"latency","latencyMs":200}`,
    );
  }
  return parseFaultConfig(value, what);
}

/**
 * Refuses a config whose `target` names none of `mappings`, naming the argument it came from
 * (`label(i)`, e.g. "--http-fault #2" or "faults[1]"): the proxy would refuse it too, but without
 * saying which of the caller's faults it was, since it sees network and HTTP faults apart.
 */
export function checkFaultTargets(
  configs: readonly FaultConfig[],
  mappings: readonly Mapping[],
  label: (index: number) => string,
  boundPort: (index: number) => number | undefined = () => undefined,
): void {
  configs.forEach((config, index) => {
    const target = (config.spec as { target?: unknown }).target;
    if (typeof target !== 'string') return;
    if (mappings.some((mapping, i) => targetNamesMapping(target, mapping, boundPort(i)))) return;
    throw unknownTargetError(target, mappings, boundPort, `${label(index)}: `);
  });
}
