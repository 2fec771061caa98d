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
import { asGiven, InputError, type Spell } from '../kernel/errors.js';
import {
  HTTP_FAULT_TYPES,
  validateHttpFault,
  type HttpFaultSpec,
  type HttpFaultType,
  type ResolvedHttpFault,
} from '../proxy/http/index.js';
import { scenarioFromArguments, type ScenarioArguments, type ScenarioSpec } from './input.js';
import { HTTP_SCENARIO_DEFAULTS } from './defaults.js';
import type { FaultDeclaration, FieldDeclaration } from '../proxy/faults/declaration.js';
import { HTTP_FAULTS } from '../proxy/http/declarations.js';

export { HTTP_SCENARIO_DEFAULTS };

/** The HTTP scenario's arguments: `http_fault`, `probability` and each HTTP fault's own (its declaration's). */
export interface HttpScenarioArguments extends ScenarioArguments {
  http_fault?: string | undefined;
  probability?: number | undefined;
}

/** Each HTTP fault's own arguments (beyond probability), from its declaration. */
export const HTTP_FAULT_ARGUMENTS = Object.fromEntries(
  HTTP_FAULTS.map((fault) => [
    fault.type,
    (fault.fields as readonly FieldDeclaration[]).flatMap((field) => (field.argument ? [field.argument.name] : [])),
  ]),
) as Record<HttpFaultType, string[]>;

export async function httpScenarioFromArguments(
  args: HttpScenarioArguments,
  limits: ScenarioLimits,
  spell: Spell = asGiven,
): Promise<ScenarioSpec & { httpFault: HttpFaultSpec }> {
  const type = (args.http_fault ?? HTTP_SCENARIO_DEFAULTS.http_fault)
    .trim()
    .toLowerCase()
    .replace(/-/g, '_') as HttpFaultType;
  if (!HTTP_FAULT_TYPES.includes(type))
    throw new InputError(`${spell('http_fault')}: "${args.http_fault}" is not one of ${HTTP_FAULT_TYPES.join(', ')}`);
  for (const [other, fields] of Object.entries(HTTP_FAULT_ARGUMENTS)) {
    if (other === type) continue;
    const given = fields.find((field) => args[field] !== undefined && !HTTP_FAULT_ARGUMENTS[type].includes(field));
    if (given)
      throw new InputError(
        `${spell(given)}: belongs to ${spell('http_fault')} ${other}; ${type} takes ` +
          [...HTTP_FAULT_ARGUMENTS[type], 'probability'].map(spell).join(', '),
      );
  }
  const raw: Record<string, unknown> = { type, probability: args.probability ?? HTTP_SCENARIO_DEFAULTS.probability };
  const declaration = HTTP_FAULTS.find((fault) => fault.type === type);
  for (const field of (declaration?.fields ?? []) as readonly FieldDeclaration[]) {
    const argument = field.argument;
    if (!argument) continue;
    const value = args[argument.name] ?? argument.default;
    // "" is the default of an optional argument; an empty list gives nothing either.
    if (value === '' || (Array.isArray(value) && value.length === 0)) continue;
    if (value !== undefined) raw[field.key] = value;
    else if (field.required)
      throw new InputError(`${spell(argument.name)}: ${type} needs ${field.expected ?? field.help}`);
  }
  const httpFault = raw as HttpFaultSpec;
  try {
    validateHttpFault(raw);
  } catch (error) {
    // "error fault: status_code must be …" → "status_code: must be …": name the argument as given.
    if (error instanceof InputError)
      throw new InputError(
        error.message.replace(/^\w+ fault: (\w+) must/, (_, name: string) => `${spell(name)}: must`),
      );
    throw error;
  }
  // The common arguments, checked as for every scenario; blackhole has no fields of its own, so
  // its spec only fills `fault`, which the runner ignores when `httpFault` is set.
  const spec = await scenarioFromArguments('blackhole', args, limits, spell);
  if (spec.proxies.length === 0 && new URL(spec.url).protocol === 'https:') {
    throw new InputError(
      `${spell('url')}: an https:// url keeps TLS end to end, so a proxy in front ` +
        'of it cannot read HTTP; use an http:// url, or put the fault on ' +
        `the app's https dependency with ${spell('proxies')} (e.g. ` +
        '"34000=https://api.example.com")',
    );
  }
  return { ...spec, httpFault };
}

/** The fault's line in the report: its declaration's, after the probability. */
export function describeHttpFault(fault: ResolvedHttpFault): string {
  const declaration = HTTP_FAULTS.find((each) => each.type === fault.type) as FaultDeclaration<
    unknown,
    ResolvedHttpFault
  >;
  return declaration.describe!(fault, `Probability: ${(fault.probability * 100).toFixed(0)}%`);
}
