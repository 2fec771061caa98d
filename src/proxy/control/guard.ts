/**
 * The production guard: the admin API and held proxies refuse to start when the environment says
 * production (NODE_ENV or ENVIRONMENT is production, prod, prd or live, in any case) unless the
 * caller explicitly allowed it (mcp-chaos-monkey matches only the exact word "production").
 */
const PRODUCTION_NAMES = new Set(['production', 'prod', 'prd', 'live']);

/** The variable and value that say production, or undefined. */
export function productionSignal(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of ['NODE_ENV', 'ENVIRONMENT']) {
    const value = env[name];
    if (value !== undefined && PRODUCTION_NAMES.has(value.trim().toLowerCase())) return `${name}=${value}`;
  }
  return undefined;
}

/** A refusal message naming `what` and how to override, or undefined when allowed. */
export function productionRefusal(what: string, override: string, allowed: boolean, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const signal = productionSignal(env);
  if (!signal || allowed) return undefined;
  return `${what} refused: ${signal} says this is production; ${override} to allow it anyway`;
}
