/**
 * The flags several commands share, defined once: the global ones, the LLM provider's, the
 * target policy's, a scenario's limits and the MCP server's; and how a command spells a tool
 * argument (argumentFlags). What their values become is flag-values.ts.
 */
import { type Command, Option } from './commander.js';
import { LOG_LEVELS, type LogLevel } from '../log.js';
import { DEFAULT_TOOLSETS, OPT_IN_TOOLSETS, type LlmClient, type Toolset } from '../config.js';
import type { Spell } from '../kernel/errors.js';
import { allowTargetList, collect, httpUrl, llmClient, llmTimeout, positiveInteger, toolsetList } from './parsers.js';

export interface GlobalOptions {
  logLevel: LogLevel;
  logFile?: string | undefined;
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
export function argumentFlags(command: Command): Spell {
  const flags = new Set(command.options.map((option) => option.long));
  return (name) => {
    const flag = FLAG_OF_ARGUMENT[name] ?? `--${name.replace(/_/g, '-')}`;
    return flags.has(flag) ? flag : name;
  };
}
