/**
 * What the shared flags' values (flags.ts) and their environment variables become: the server's
 * Config, the target allowance, the token-variable allowance, a logger.
 */
import { createLogger, type Logger } from '../log.js';
import { makeConfig, type Config } from '../config.js';
import { messageOf } from '../kernel/errors.js';
import { parseAllowTargets, type TargetAllowance } from '../target-policy.js';
import { ALLOW_PRODUCTION_ENV } from '../production.js';
import type { GlobalOptions, ServerOptionValues, TargetOptionValues } from './flags.js';
import { UsageError } from './run-command.js';

/** The allowance the target flags and their environment variables give (flags and variable add up). */
export function targetAllowanceFrom(
  options: TargetOptionValues,
  env: NodeJS.ProcessEnv = process.env,
): TargetAllowance {
  let fromEnv: string[] = [];
  try {
    fromEnv = parseAllowTargets(env.FAULTLINE_ALLOW_TARGETS ?? '', 'FAULTLINE_ALLOW_TARGETS');
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
  return {
    allowRemoteTargets: options.allowRemoteTargets ?? envFlag('FAULTLINE_ALLOW_REMOTE_TARGETS', env),
    allowTargets: [...new Set([...fromEnv, ...(options.allowTargets ?? [])])],
  };
}

/** The variables --allow-token-env and FAULTLINE_ALLOW_TOKEN_ENV name, checked to be variable names. */
export function tokenEnvAllowance(flagged: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = (env.FAULTLINE_ALLOW_TOKEN_ENV ?? '').split(',').map((name) => name.trim());
  const names = [...flagged, ...fromEnv].filter((name) => name !== '');
  const bad = names.find((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  if (bad !== undefined)
    throw new UsageError(`--allow-token-env / FAULTLINE_ALLOW_TOKEN_ENV: "${bad}" is not an environment variable name`);
  return [...new Set(names)];
}

export function configFrom(globals: GlobalOptions, options: ServerOptionValues): Config {
  return makeConfig({
    log: { level: globals.logLevel, file: globals.logFile },
    roots: options.root ?? [],
    llm: {
      client: options.llmClient,
      baseUrl: options.llmBaseUrl,
      promptModel: options.llmPromptReasoningModel,
      embedModel: options.llmEmbedModel,
      embedDim: options.llmEmbedModelDim,
      timeoutMs: options.llmTimeout,
    },
    scenario: {
      ...targetAllowanceFrom(options),
      allowNonLoopbackBind: options.allowNonLoopbackBind ?? false,
      allowTokenEnv: tokenEnvAllowance(options.allowTokenEnv),
      maxDurationMs: options.maxDuration === undefined ? undefined : options.maxDuration * 1000,
      maxRatePerSecond: options.maxRate,
    },
    toolsets: options.toolsets,
    allowProduction: options.allowProduction ?? envFlag(ALLOW_PRODUCTION_ENV),
  });
}

/** A yes/no environment variable: 1/true/yes/on or 0/false/no/off/empty; anything else is a usage error. */
export function envFlag(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env[name] ?? '').trim().toLowerCase();
  if (['', '0', 'false', 'no', 'off'].includes(value)) return false;
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  throw new UsageError(`${name}=${env[name]} is not a yes/no value; accepted: 1, true, yes, on / 0, false, no, off`);
}

export function loggerFor(globals: GlobalOptions): Logger {
  return createLogger({ level: globals.logLevel, file: globals.logFile });
}
