/**
 * The HTTP fault scenario (fault_run_http_error_impact_scenario, `faultline run http-error`): the
 * common scenario arguments, validated by scenarioFromArguments exactly as for the network faults,
 * plus one HTTP fault built from fault's arguments (status_code default 500, probability default 1,
 * error_body) and `http_fault` (one of the eight, default error) with that fault's fields.
 *
 * The proxy in front of the url parses HTTP, so the url must be http:// (an https:// url keeps
 * TLS end to end, which the proxy cannot read); an https dependency works through `proxies`,
 * where the app speaks plain HTTP to the proxy and the proxy originates TLS.
 */
import type { ScenarioLimits } from '../config.js';
import { ToolInputError } from '../errors.js';
import {
  HTTP_FAULT_TYPES,
  validateHttpFault,
  type HttpFaultSpec,
  type HttpFaultType,
  type ResolvedHttpFault,
} from '../proxy/http/index.js';
import { scenarioFromArguments, type ScenarioArguments, type ScenarioSpec } from './input.js';
import { HTTP_SCENARIO_DEFAULTS } from './defaults.js';

export { HTTP_SCENARIO_DEFAULTS };

export interface HttpScenarioArguments extends ScenarioArguments {
  http_fault?: string | undefined;
  status_code?: number | undefined;
  probability?: number | undefined;
  error_body?: string | undefined;
  forward?: boolean | undefined;
  delay?: number | undefined;
  retry_after?: number | undefined;
  hang?: number | undefined;
  missing_fields?: string[] | undefined;
  after_bytes?: number | undefined;
}

/** Each HTTP fault's own arguments (beyond probability). */
export const HTTP_FAULT_ARGUMENTS: Record<HttpFaultType, Array<keyof HttpScenarioArguments>> = {
  error: ['status_code', 'error_body', 'forward'],
  latency: ['delay'],
  rate_limit: ['retry_after'],
  timeout: ['hang'],
  malformed: [],
  schema_mismatch: ['missing_fields'],
  connection_refused: [],
  connection_drop: ['after_bytes'],
};

export async function httpScenarioFromArguments(
  args: HttpScenarioArguments,
  limits: ScenarioLimits,
): Promise<ScenarioSpec & { httpFault: HttpFaultSpec }> {
  const type = (args.http_fault ?? HTTP_SCENARIO_DEFAULTS.http_fault)
    .trim()
    .toLowerCase()
    .replace(/-/g, '_') as HttpFaultType;
  if (!HTTP_FAULT_TYPES.includes(type))
    throw new ToolInputError(`http_fault: "${args.http_fault}" is not one of ${HTTP_FAULT_TYPES.join(', ')}`);
  for (const [other, fields] of Object.entries(HTTP_FAULT_ARGUMENTS)) {
    if (other === type) continue;
    const given = fields.find((field) => args[field] !== undefined && !HTTP_FAULT_ARGUMENTS[type].includes(field));
    if (given)
      throw new ToolInputError(
        `${given}: belongs to http_fault ${other}; ${type} takes ${[...HTTP_FAULT_ARGUMENTS[type], 'probability'].join(', ')}`,
      );
  }
  const raw: Record<string, unknown> = { type, probability: args.probability ?? HTTP_SCENARIO_DEFAULTS.probability };
  if (type === 'error') {
    raw['status_code'] = args.status_code ?? HTTP_SCENARIO_DEFAULTS.status_code;
    if (args.error_body !== undefined && args.error_body !== '') raw['error_body'] = args.error_body;
    if (args.forward !== undefined) raw['forward'] = args.forward;
  }
  if (type === 'latency') raw['delay'] = args.delay ?? HTTP_SCENARIO_DEFAULTS.delay;
  if (type === 'rate_limit') raw['retry_after'] = args.retry_after ?? HTTP_SCENARIO_DEFAULTS.retry_after;
  if (type === 'timeout' && args.hang !== undefined) raw['hang'] = args.hang;
  if (type === 'schema_mismatch') {
    if (!args.missing_fields?.length)
      throw new ToolInputError(
        'missing_fields: schema_mismatch needs the dot paths to remove, e.g. ["id", "data.items.price"]',
      );
    raw['missing_fields'] = args.missing_fields;
  }
  if (type === 'connection_drop') raw['after_bytes'] = args.after_bytes ?? HTTP_SCENARIO_DEFAULTS.after_bytes;
  const httpFault = raw as HttpFaultSpec;
  try {
    validateHttpFault(raw);
  } catch (error) {
    // "error fault: status_code must be …" → "status_code: must be …": name the argument as given.
    if (error instanceof ToolInputError)
      throw new ToolInputError(error.message.replace(/^\w+ fault: (\w+) must/, '$1: must'));
    throw error;
  }
  // The common arguments, checked as for every scenario; blackhole has no fields of its own, so
  // its spec only fills `fault`, which the runner ignores when `httpFault` is set.
  const spec = await scenarioFromArguments('blackhole', args, limits);
  if (spec.proxies.length === 0 && new URL(spec.url).protocol === 'https:') {
    throw new ToolInputError(
      'url: an https:// url keeps TLS end to end, so a proxy in front of it cannot read HTTP; use an http:// url, or put the fault on the app\'s https dependency with proxies (e.g. "34000=https://api.example.com")',
    );
  }
  return { ...spec, httpFault };
}

/** The fault's line in the report. */
export function describeHttpFault(fault: ResolvedHttpFault): string {
  const p = `Probability: ${(fault.probability * 100).toFixed(0)}%`;
  switch (fault.type) {
    case 'error':
      return `HTTP Error: Status: ${fault.status_code}, ${p}${fault.forward ? ', forwarded first' : ', not forwarded'}`;
    case 'latency':
      return `HTTP Latency: ${fault.delay.toFixed(2)} ms, ${p}`;
    case 'rate_limit':
      return `HTTP Rate Limit: 429, Retry-After ${fault.retry_after}s, ${p}`;
    case 'timeout':
      return `HTTP Timeout: ${fault.hang === undefined ? 'held until the client gives up' : `held ${fault.hang} ms, then closed`}, ${p}`;
    case 'malformed':
      return `HTTP Malformed body, ${p}`;
    case 'schema_mismatch':
      return `HTTP Schema Mismatch: without ${fault.missing_fields.join(', ')}, ${p}`;
    case 'connection_refused':
      return `HTTP Connection Refused (reset), ${p}`;
    case 'connection_drop':
      return `HTTP Connection Drop: after ${fault.after_ms !== undefined ? `${fault.after_ms} ms` : `${fault.after_bytes} body bytes`}, ${p}`;
  }
}
