/**
 * The safety rules every path an experiment opens goes through: what may be dialled or bound (the
 * target policy) and whether this environment is production (the production guard). One adapter,
 * so a change to either rule touches this file only.
 */
import { refuseInProduction as refuse } from '../../production.js';
import { checkLoadTarget } from '../../scenario/target.js';
import { checkMappings, targetLookup, type MappingEnds, type TargetPolicy } from '../../target-policy.js';
import { InputError } from '../../kernel/errors.js';
import type { LookupFunction } from 'node:net';

export interface SafetyPolicy extends TargetPolicy {
  /** The person running faultline said production is fine (--allow-production, FAULTLINE_ALLOW_PRODUCTION=1). */
  allowProduction: boolean;
  /** Variables besides FAULTLINE_* a control plane's token may be read from (--allow-token-env,
   * FAULTLINE_ALLOW_TOKEN_ENV). */
  allowTokenEnv?: readonly string[] | undefined;
}

/** The prefix of the variables a file may name as a token's source without the owner listing them. */
export const TOKEN_ENV_PREFIX = 'FAULTLINE_';
/** The server's own credentials for other doors: FAULTLINE_* names, but never a control plane's token. */
const OTHER_DOORS_SECRETS = /^FAULTLINE_(TOKEN|PROMETHEUS_(TOKEN|USERNAME|PASSWORD))$/;

/**
 * Refuses a variable a control plane's token would be read from unless the owner named it or it is
 * one of faultline's own (FAULTLINE_*): the token is sent to the plane's URL, so an experiment
 * written by someone else (an agent's argument, a file from a repository) could otherwise send
 * OPENAI_API_KEY or AWS_SECRET_ACCESS_KEY to a listener of its choice.
 */
export function checkTokenEnv(name: string, policy: SafetyPolicy, what: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw new InputError(`${what}: "${name}" is not an environment variable name`);
  if (
    (name.startsWith(TOKEN_ENV_PREFIX) && !OTHER_DOORS_SECRETS.test(name)) ||
    (policy.allowTokenEnv ?? []).includes(name)
  )
    return;
  throw new InputError(
    `${what}: ${name} is not a variable a token may be read from; use a ${TOKEN_ENV_PREFIX}* name, or let the ` +
      `server's owner allow it with --allow-token-env ${name} (or FAULTLINE_ALLOW_TOKEN_ENV=${name})`,
  );
}

/** Refuses to inject anything when the environment says production, unless allowed. */
export function refuseInProduction(what: string, policy: SafetyPolicy): void {
  refuse(what, policy.allowProduction);
}

/** An http(s) URL the experiment will call (a check, a control plane, an MCP server): checked like the load's target.
 * */
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
