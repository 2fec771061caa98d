/**
 * The safety rules every path an experiment opens goes through: what may be dialled or bound (the
 * target policy) and whether this environment is production (the production guard). One adapter,
 * so a change to either rule touches this file only.
 */
import { productionRefusal } from '../../production.js';
import { checkLoadTarget } from '../../scenario/target.js';
import { checkMappings, targetLookup, type MappingEnds, type TargetPolicy } from '../../target-policy.js';
import { ToolInputError } from '../../errors.js';
import type { LookupFunction } from 'node:net';

export interface SafetyPolicy extends TargetPolicy {
  /** The person running faultline said production is fine (--allow-production, FAULTLINE_ALLOW_PRODUCTION=1). */
  allowProduction: boolean;
  /** How to say so, for the refusal: the flag or variable that allows it. */
  productionOverride: string;
}

/** Refuses to inject anything when the environment says production, unless allowed. */
export function refuseInProduction(what: string, policy: SafetyPolicy): void {
  const refusal = productionRefusal(what, policy.productionOverride, policy.allowProduction);
  if (refusal !== undefined) throw new ToolInputError(refusal);
}

/** An http(s) URL the experiment will call (a check, a control plane, an MCP server): checked like the load's target. */
export async function checkUrl(url: string, policy: SafetyPolicy, what: string): Promise<URL> {
  return checkLoadTarget(url, policy, what);
}

/** Proxy mappings: listen addresses, ports and literal remotes, before anything binds. */
export function checkProxyMappings(mappings: readonly MappingEnds[], policy: SafetyPolicy, what: string): void {
  checkMappings(mappings, policy, what);
}

/** The lookup every socket an experiment opens to a named host resolves through (checked at each connect). */
export function policyLookup(policy: SafetyPolicy): LookupFunction {
  return targetLookup(policy);
}
