/**
 * The production guard: faultline refuses to inject faults where the environment it runs in says
 * production, unless the person running it says otherwise (--allow-production, or
 * FAULTLINE_ALLOW_PRODUCTION=1). One detector, called where faults are injected rather than at
 * each door: a proxy's start (`faultline proxy`, held proxies, scenarios, experiments, the
 * Toxiproxy API), a scenario's and an experiment's run, the tool-call plane's proxies, and a probe
 * that calls tools that write.
 *
 * The variables frameworks and platforms name their environment with are read; a value says
 * production when one of its words (split at anything but letters and digits) is `prod`,
 * `production`, `prd` or `live`, optionally followed by digits: `prod-eu`, `eu_prod`, `PROD1`,
 * `production`, `Live`. `preprod`, `nonprod`, `staging` and `prod-like` words such as `product` do
 * not. (mcp-chaos-monkey matches only the exact word "production", in NODE_ENV.)
 */

import { InputError } from './kernel/errors.js';

/** Set to 1 (true, yes, on) to allow fault injection where the environment says production. */
export const ALLOW_PRODUCTION_ENV = 'FAULTLINE_ALLOW_PRODUCTION';

/**
 * Where frameworks and platforms keep the environment's name. Not `ENV`: POSIX shells read a
 * startup file's path from it.
 */
export const ENVIRONMENT_VARIABLES = [
  'NODE_ENV',
  'ENVIRONMENT',
  'APP_ENV',
  'APP_ENVIRONMENT',
  'RAILS_ENV',
  'RACK_ENV',
  'DEPLOY_ENV',
  'DEPLOYMENT_ENV',
  'DEPLOYMENT_ENVIRONMENT',
  'STAGE',
  'FLASK_ENV',
  'DJANGO_ENV',
  'MIX_ENV',
  'GO_ENV',
  'ASPNETCORE_ENVIRONMENT',
  'DOTNET_ENVIRONMENT',
  'SPRING_PROFILES_ACTIVE',
  'SENTRY_ENVIRONMENT',
  'DD_ENV',
  'VERCEL_ENV',
] as const;

const PRODUCTION_WORD = /^(?:prod|production|prd|live)\d*$/;

/** Whether one environment name says production. */
export function isProductionName(value: string): boolean {
  return value
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((word) => PRODUCTION_WORD.test(word));
}

/** The variable and value that say production (`ENVIRONMENT=prod-eu`), or undefined. */
export function productionSignal(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of ENVIRONMENT_VARIABLES) {
    const value = env[name];
    if (value !== undefined && isProductionName(value)) return `${name}=${value}`;
  }
  return undefined;
}

/** Whether FAULTLINE_ALLOW_PRODUCTION says yes. */
export function productionAllowedByEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env[ALLOW_PRODUCTION_ENV] ?? '').trim().toLowerCase());
}

/**
 * A refusal to inject faults where the environment says production. It names what was refused and
 * the variable that says production; each door adds how its caller allows it (withProductionHint).
 */
export class ProductionRefused extends InputError {
  /** `what`: what was refused, as a verb phrase ("start a fault proxy"). */
  constructor(what: string, signal: string) {
    super(`refused to ${what}: ${signal} says this is production`);
  }
}

/** `error` with the door's way of allowing production (`how`) appended, when it is a production refusal. */
export function withProductionHint(error: unknown, how: string): unknown {
  return error instanceof ProductionRefused ? new InputError(`${error.message}; ${how} to allow it anyway`) : error;
}

/**
 * Refuses to `what` (inject faults) where the environment says production, unless `allowed`
 * (--allow-production) or FAULTLINE_ALLOW_PRODUCTION=1. Called where faults are injected: a
 * proxy's start, a scenario's or an experiment's run, a tool-call proxy, a probe that writes.
 */
export function refuseInProduction(what: string, allowed: boolean, env: NodeJS.ProcessEnv = process.env): void {
  const signal = productionSignal(env);
  if (signal && !allowed && !productionAllowedByEnv(env)) throw new ProductionRefused(what, signal);
}
