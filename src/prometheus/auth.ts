/**
 * Credentials for a Prometheus server, read from the environment only (a file an agent may have
 * written must not carry them, and a report must never show them):
 *
 *   FAULTLINE_PROMETHEUS_TOKEN                                    → Authorization: Bearer <token>
 *   FAULTLINE_PROMETHEUS_USERNAME + FAULTLINE_PROMETHEUS_PASSWORD → Authorization: Basic …
 *
 * The token wins when both are set. No variable set: no Authorization header. They are sent only
 * to the server FAULTLINE_PROMETHEUS_URL names (its origin): a URL written in a file, which an
 * agent may have written, never receives them (authFor).
 */
import { InputError } from '../kernel/errors.js';

export const PROMETHEUS_ENV = {
  url: 'FAULTLINE_PROMETHEUS_URL',
  token: 'FAULTLINE_PROMETHEUS_TOKEN',
  username: 'FAULTLINE_PROMETHEUS_USERNAME',
  password: 'FAULTLINE_PROMETHEUS_PASSWORD',
} as const;

export type PrometheusAuth = { kind: 'bearer'; token: string } | { kind: 'basic'; username: string; password: string };

/** The credentials for `url`: the environment's, when `url` is on FAULTLINE_PROMETHEUS_URL's origin; else none. */
export function authFor(url: string, env: NodeJS.ProcessEnv = process.env): PrometheusAuth | undefined {
  const home = env[PROMETHEUS_ENV.url]?.trim();
  if (!home) return undefined;
  try {
    if (new URL(home).origin !== new URL(url).origin) return undefined;
  } catch {
    return undefined;
  }
  return authFromEnv(env);
}

export function authFromEnv(env: NodeJS.ProcessEnv = process.env): PrometheusAuth | undefined {
  const token = env[PROMETHEUS_ENV.token]?.trim();
  if (token) {
    if (/[\r\n\0]/.test(token)) throw new InputError(`${PROMETHEUS_ENV.token}: not a token (a line break or NUL)`);
    return { kind: 'bearer', token };
  }
  const username = env[PROMETHEUS_ENV.username];
  const password = env[PROMETHEUS_ENV.password];
  if (username === undefined && password === undefined) return undefined;
  if (!username || password === undefined)
    throw new InputError(
      `${PROMETHEUS_ENV.username} and ${PROMETHEUS_ENV.password}: basic ` +
        `auth needs both (or give ${PROMETHEUS_ENV.token})`,
    );
  if (username.includes(':') || /[\r\n\0]/.test(username + password))
    throw new InputError(`${PROMETHEUS_ENV.username}: a basic-auth user name has no ":" and no line break`);
  return { kind: 'basic', username, password };
}
