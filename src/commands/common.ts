/**
 * What every CLI command shares: the global options, value parsers that reject bad input with a
 * message naming the accepted values, and the Command subclass that turns every usage error into
 * one line on stderr and exit code 2 (nothing on stdout).
 */
import { access, constants as fsConstants, stat } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { dirname, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from './commander.js';
import { LOG_LEVELS, createLogger, type LogLevel, type Logger } from '../log.js';
import {
  DEFAULT_TOOLSETS,
  LLM_CLIENT_SPELLINGS,
  OPT_IN_TOOLSETS,
  TOOLSETS,
  makeConfig,
  type Config,
  type LlmClient,
  type Toolset,
} from '../config.js';
import { DURATION_FORMS, parseDuration } from '../duration.js';
import { InputError, messageOf } from '../kernel/errors.js';
import { listenPortRefusal, parseAllowTargets, type TargetAllowance } from '../target-policy.js';
import { ALLOW_PRODUCTION_ENV, withProductionHint } from '../production.js';

/** Exit code for a usage error (unknown flag, bad value), as most Unix tools use. */
export const EXIT_USAGE = 2;

export interface GlobalOptions {
  logLevel: LogLevel;
  logFile?: string | undefined;
}

/** A usage error raised by a command's own checks (after commander parsed the flags). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export class FaultlineCommand extends Command {
  override createCommand(name?: string): FaultlineCommand {
    return new FaultlineCommand(name);
  }

  // Not in commander's type declarations, but a documented extension point of Command.
  unknownOption(flag: string): never {
    const accepted = acceptedFlags(this);
    this.error(`unknown flag ${flag} for '${commandPath(this)}'; accepted: ${accepted.join(', ') || '(none)'}`, {
      code: 'commander.unknownOption',
      exitCode: EXIT_USAGE,
    });
  }

  /**
   * An environment variable set to "" (or blanks) counts as unset for every option read from the
   * environment: a client config that blanks FAULT_AGENT_CLIENT must not stop the server.
   * Commander reads any defined variable, so the blank ones are removed before it parses.
   */
  override parseAsync(argv?: readonly string[], options?: Parameters<Command['parseAsync']>[1]): Promise<this> {
    forgetBlankEnv(this);
    return super.parseAsync(argv, options);
  }

  unknownCommand(): never {
    const names = this.commands.map((command) => command.name());
    this.error(`unknown command '${this.args[0] ?? ''}' for '${commandPath(this)}'; accepted: ${names.join(', ')}`, {
      code: 'commander.unknownCommand',
      exitCode: EXIT_USAGE,
    });
  }
}

function forgetBlankEnv(command: Command, env: NodeJS.ProcessEnv = process.env): void {
  for (const option of command.options) {
    const name = (option as Option).envVar;
    if (name !== undefined && env[name] !== undefined && env[name]!.trim() === '') delete env[name];
  }
  for (const sub of command.commands) forgetBlankEnv(sub, env);
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function acceptedFlags(command: Command): string[] {
  const flags: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) {
    for (const option of c.options) if (option.long && !option.hidden) flags.push(option.long);
  }
  return [...new Set([...flags, '--help'])];
}

/** Parsers for commander options: each throws InvalidArgumentError naming what is accepted. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError('expected a positive integer');
  }
  return n;
}

export function portNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  const refusal = listenPortRefusal(n);
  if (refusal !== undefined) throw new InvalidArgumentError(refusal);
  return n;
}

export function llmClient(value: string): LlmClient {
  const client = LLM_CLIENT_SPELLINGS[value.trim().toLowerCase()];
  if (!client) throw new InvalidArgumentError(`accepted: ${Object.keys(LLM_CLIENT_SPELLINGS).join(', ')}`);
  return client;
}

export function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('expected an http:// or https:// URL');
  return value;
}

/** `--llm-timeout`: any form the one duration parser accepts (a bare number is seconds). */
export function llmTimeout(value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value, '--llm-timeout');
  } catch {
    throw new InvalidArgumentError(`expected a duration such as ${DURATION_FORMS}`);
  }
  if (!(ms >= 1)) throw new InvalidArgumentError('expected a duration of at least 1 ms');
  return ms;
}

/** Earlier names of a toolset, still accepted. */
const TOOLSET_ALIASES: Record<string, Toolset> = { toolplane: 'toolcall' };

/**
 * `--toolsets code,search`: a comma-separated list of tool families. `all` means every family on
 * by default; an opt-in family (fis-recommender) is added by naming it, with `all` or alone.
 */
export function toolsetList(value: string): Toolset[] {
  const names = value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '')
    .map((name) => TOOLSET_ALIASES[name] ?? name);
  if (names.length === 0) return [...DEFAULT_TOOLSETS];
  const unknown = names.filter((name) => name !== 'all' && !(TOOLSETS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown toolset ${unknown.join(', ')}; accepted: ${TOOLSETS.join(', ')}, all`);
  const chosen = new Set(names.flatMap((name) => (name === 'all' ? DEFAULT_TOOLSETS : [name as Toolset])));
  return TOOLSETS.filter((toolset) => chosen.has(toolset));
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The global options, defined on the root program (they go before the command). */
export function addGlobalOptions(program: Command): void {
  program
    .addOption(new Option('--log-file <path>', 'append logs to this file instead of stderr').env('FAULT_LOG_FILE'))
    .addOption(
      new Option('--log-level <level>', 'least severe level that is logged')
        .choices(LOG_LEVELS)
        .default('info')
        .env('FAULT_LOG_LEVEL'),
    )
    .addOption(
      new Option(
        '--log-stdout',
        'accepted for compatibility with fault; ignored, since stdout carries the MCP protocol',
      ).hideHelp(),
    )
    .addOption(
      new Option(
        '--with-otel',
        'accepted for compatibility with fault; OpenTelemetry export is not implemented',
      ).hideHelp(),
    );
}

/** The LLM provider flags (fault's names and env vars), for every command that may call a model. */
export function addLlmOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--llm-client <client>',
        'LLM provider: open-ai|openai, open-router|openrouter, gemini, ' +
          'ollama, anthropic (default: from the API keys present)',
      )
        .argParser(llmClient)
        .env('FAULT_AGENT_CLIENT'),
    )
    .addOption(
      new Option('--llm-prompt-reasoning-model <model>', 'model for the review tools (default per provider)').env(
        'FAULT_AGENT_PROMPT_REASONING_MODEL',
      ),
    )
    .addOption(
      new Option('--llm-embed-model <model>', 'embedding model for code search (default per provider)').env(
        'FAULT_AGENT_EMBED_MODEL',
      ),
    )
    .addOption(
      new Option('--llm-embed-model-dim <n>', 'dimension the embedding model returns (checked)')
        .argParser(positiveInteger)
        .env('FAULT_AGENT_EMBED_MODEL_DIMENSION'),
    )
    .addOption(
      new Option('--llm-base-url <url>', 'base URL of the provider (wins over OPENAI_BASE_URL / ANTHROPIC_BASE_URL)')
        .argParser(httpUrl)
        .env('FAULT_LLM_BASE_URL'),
    )
    .addOption(
      new Option(
        '--llm-timeout <duration>',
        'bound on one LLM call, retries and repair included, e.g. 90s, 2m (default: 120s)',
      )
        .argParser(llmTimeout)
        .env('FAULT_LLM_TIMEOUT'),
    );
}

/** `--toolsets`: which tool families the MCP server offers. */
export function addToolsetOption(command: Command): Command {
  return command.addOption(
    new Option(
      '--toolsets <list>',
      `comma-separated tool families to offer: ${DEFAULT_TOOLSETS.join(', ')} ` +
        `(default and "all": these); ${OPT_IN_TOOLSETS.join(', ')} only ` +
        `when named (e.g. "all,${OPT_IN_TOOLSETS[0]}")`,
    )
      .argParser(toolsetList)
      .env('FAULTLINE_TOOLSETS'),
  );
}

/** `--root`: the directories file-reading commands and tools are confined to. */
export function addRootOption(command: Command): Command {
  return command.addOption(
    new Option(
      '--root <dir>',
      'directory the file tools may read (repeatable; default: the ' +
        "client's roots; without any, source files outside secret " +
        'locations)',
    ).argParser(collect),
  );
}

/** `--allow-targets 10.0.0.0/8,api.staging.local`: what may be dialled besides loopback. */
export function allowTargetList(value: string, previous: string[] | undefined): string[] {
  try {
    return [...(previous ?? []), ...parseAllowTargets(value, '--allow-targets')];
  } catch (error) {
    throw new InvalidArgumentError(messageOf(error).replace(/^--allow-targets: /, ''));
  }
}

/**
 * The target policy's flags (src/target-policy.ts): loopback only unless these say more. Every
 * command that dials on someone's behalf takes them; read them with targetAllowanceFrom.
 */
export function addTargetOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--allow-targets <list>',
        'CIDR blocks, addresses and host names that may be dialled ' +
          'besides loopback, e.g. 10.0.0.0/8,api.staging.local,*.svc.local ' +
          '(repeatable; env FAULTLINE_ALLOW_TARGETS); link-local and ' +
          'metadata addresses never',
      ).argParser(allowTargetList),
    )
    .addOption(
      // Not .env(): commander takes any value of the variable, "0" and "false" too, as true.
      new Option(
        '--allow-remote-targets',
        "let every address and name be dialled (as --allow-targets '*'), " +
          'but link-local and metadata ones (env ' +
          'FAULTLINE_ALLOW_REMOTE_TARGETS=1)',
      ),
    );
}

export interface TargetOptionValues {
  allowTargets?: string[];
  allowRemoteTargets?: boolean;
}

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

/** The limits on what a scenario may do. */
export function addScenarioLimitOptions(command: Command): Command {
  return addTargetOptions(command)
    .addOption(
      new Option(
        '--allow-non-loopback-bind',
        'let listeners bind addresses other than 127.0.0.1/::1, e.g. ' +
          '0.0.0.0: proxy mappings, and with mcp --transport http its ' +
          '--host (which then needs --token too); off: a listener open to ' +
          'the network is a decision, not a default',
      ),
    )
    .addOption(
      new Option(
        '--allow-production',
        'inject faults even where the environment says production ' +
          '(NODE_ENV, ENVIRONMENT, APP_ENV, RAILS_ENV … = prod*, ' +
          'production, prd, live; env FAULTLINE_ALLOW_PRODUCTION=1)',
      ),
    )
    .addOption(
      new Option('--max-duration <seconds>', 'longest scenario duration accepted')
        .argParser(positiveInteger)
        .default(600),
    )
    .addOption(
      new Option('--max-rate <rps>', 'highest total request rate (num_clients × rps) accepted')
        .argParser(positiveInteger)
        .default(5000),
    );
}

/** Everything that shapes the MCP server's tools; on both `mcp` and `agent`. */
export function addServerOptions(command: Command): Command {
  return addTokenEnvOption(addToolsetOption(addScenarioLimitOptions(addRootOption(addLlmOptions(command)))));
}

/** `--allow-token-env NAME`: a variable besides FAULTLINE_* an experiment's control plane may read its token from. */
export function addTokenEnvOption(command: Command): Command {
  return command.addOption(
    new Option(
      '--allow-token-env <name>',
      "let an experiment's control.*.token_env name this variable " +
        '(repeatable; env FAULTLINE_ALLOW_TOKEN_ENV, comma-separated); ' +
        'FAULTLINE_* names need no flag',
    ).argParser(collect),
  );
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

export interface ServerOptionValues extends TargetOptionValues {
  llmClient?: LlmClient;
  llmPromptReasoningModel?: string;
  llmEmbedModel?: string;
  llmEmbedModelDim?: number;
  llmBaseUrl?: string;
  llmTimeout?: number;
  toolsets?: Toolset[];
  root?: string[];
  allowNonLoopbackBind?: boolean;
  allowProduction?: boolean;
  maxDuration?: number;
  maxRate?: number;
  allowTokenEnv?: string[];
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

/** A command's work that a signal cut short: runCommand exits 128 + the signal's number, as a shell does. */
export class InterruptedError extends Error {
  constructor(
    readonly signalName: 'SIGINT' | 'SIGTERM',
    cause: unknown,
  ) {
    super(`${messageOf(cause)} (${signalName})`);
  }
}

/**
 * Runs `work` with a signal that Ctrl-C (SIGINT) or SIGTERM aborts; the handlers go afterwards.
 * When the work fails after the signal (it was cancelled), the failure is an InterruptedError,
 * so a script can tell an interrupted run (130, 143) from one that failed (1).
 */
export async function withInterrupt<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  const onInterrupt = (): void => {
    received = 'SIGINT';
    controller.abort();
  };
  const onTerminate = (): void => {
    received = 'SIGTERM';
    controller.abort();
  };
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onTerminate);
  try {
    return await work(controller.signal);
  } catch (error) {
    throw received === undefined ? error : new InterruptedError(received, error);
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminate);
  }
}

/** Scenario arguments whose flag is not the argument's name with dashes. */
const FLAG_OF_ARGUMENT: Readonly<Record<string, string>> = {
  headers: '--header',
  proxies: '--proxy',
  slos: '--slo',
  target_config: '--target',
};

/**
 * How `command` spells a tool argument: its flag (`fault_start` → `--fault-start`, `headers` →
 * `--header`) when the command has that flag, else the argument's own name.
 */
export function argumentFlags(command: Command): (argument: string) => string {
  const flags = new Set(command.options.map((option) => option.long));
  return (name) => {
    const flag = FLAG_OF_ARGUMENT[name] ?? `--${name.replace(/_/g, '-')}`;
    return flags.has(flag) ? flag : name;
  };
}

/**
 * Runs `build` (validation written for the tools' arguments, e.g. a scenario's), naming `command`'s
 * flags in its argument errors: their messages start with the argument (`fault_start: 5s is not
 * before the end of the run`, `headers[0]: …`, `num_clients × rps = …`), which from the shell are
 * `--fault-start`, `--header`, `--num-clients × --rps`. Only leading names that are this command's
 * flags are rewritten, so the rest of a message reads as written.
 */
export async function withFlagNames<T>(command: Command, build: () => Promise<T>): Promise<T> {
  const spell = argumentFlags(command);
  try {
    return await build();
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    throw new UsageError(
      error.message.replace(/^[a-z][a-z_]*(?: × [a-z][a-z_]*)*/, (names) => names.split(' × ').map(spell).join(' × ')),
    );
  }
}

/**
 * Runs a command's work: a UsageError or InputError is a one-line message and exit 2, work
 * cut short by Ctrl-C or SIGTERM (withInterrupt) exit 130 or 143, any other error exit 1.
 */
export async function runCommand(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const usage = error instanceof UsageError || error instanceof InputError;
    process.stderr.write(`faultline: ${messageOf(withProductionHint(error, 'pass --allow-production'))}\n`);
    process.exitCode =
      error instanceof InterruptedError ? 128 + osConstants.signals[error.signalName] : usage ? EXIT_USAGE : 1;
  }
}

/** Refuses an output file that cannot be written: its directory missing or read-only, or a directory itself. */
export async function checkWritable(flag: string, file: string): Promise<void> {
  const path = resolve(file);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) throw new UsageError(`${flag} ${file}: is a directory; give a file path`);
  try {
    await access(existing ? path : dirname(path), fsConstants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `${flag} ${file}: cannot be written ` +
        `(${code === 'ENOENT' ? `no directory ${dirname(path)}` : (code ?? 'not writable')})`,
    );
  }
}
