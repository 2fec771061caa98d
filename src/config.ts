/**
 * The server's configuration: what the CLI flags and environment variables decide, already
 * validated. Domain modules receive the part they need; nothing else reads process.env for
 * settings that are listed here.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { LogLevel } from './log.js';

/** The LLM providers we speak to, by their canonical name. */
export const LLM_CLIENTS = ['openai', 'openrouter', 'gemini', 'ollama', 'anthropic'] as const;
export type LlmClient = (typeof LLM_CLIENTS)[number];

/**
 * Every spelling `--llm-client` accepts: the reference tool's (`open-ai`, `open-router`) and the
 * plain ones, so its users' client configs keep working.
 */
export const LLM_CLIENT_SPELLINGS: Record<string, LlmClient> = {
  'open-ai': 'openai',
  openai: 'openai',
  'open-router': 'openrouter',
  openrouter: 'openrouter',
  gemini: 'gemini',
  ollama: 'ollama',
  anthropic: 'anthropic',
};

export interface LlmConfig {
  /** Unset: chosen from the API keys present in the environment (see src/llm). */
  client?: LlmClient | undefined;
  /** An OpenAI-compatible base URL for self-hosted servers. */
  baseUrl?: string | undefined;
  promptModel?: string | undefined;
  embedModel?: string | undefined;
  /** The dimension the embedding model is expected to return; checked, never assumed. */
  embedDim?: number | undefined;
  /** Upper bound for one LLM request, retries included. */
  timeoutMs: number;
}

/**
 * Tool families `--toolsets` / FAULTLINE_TOOLSETS choose from: every tool belongs to exactly one,
 * so a client that needs only some pays for only their part of tools/list.
 */
export const TOOLSETS = [
  'code',
  'search',
  'review',
  'scenario',
  'http',
  'proxy',
  'toolcall',
  'probe',
  'cloud',
  'experiment',
  'fis-recommender',
] as const;
export type Toolset = (typeof TOOLSETS)[number];

/**
 * Families offered only when named: another tool's names and shapes for what faultline's own
 * tools already do (fis-recommender: fis-recommender-mcp's recommend_fis_experiments and
 * create_fis_template), for its users to switch without rewriting a call. Offered by default they
 * would show every client two tools for one job; `all` keeps meaning faultline's own families.
 */
export const OPT_IN_TOOLSETS: readonly Toolset[] = ['fis-recommender'];

/** The families offered when --toolsets is not given, and what `all` means. */
export const DEFAULT_TOOLSETS: readonly Toolset[] = TOOLSETS.filter((toolset) => !OPT_IN_TOOLSETS.includes(toolset));

/** What may be dialled besides loopback (src/target-policy.ts): a TargetAllowance. */
export interface ScenarioLimits {
  /** Every address and name but link-local and metadata ones (--allow-remote-targets). */
  allowRemoteTargets: boolean;
  /** CIDR blocks, addresses and host names allowed besides loopback (--allow-targets). */
  allowTargets?: readonly string[] | undefined;
  /** Let proxy mappings listen on addresses other than loopback (src/target-policy.ts). */
  allowNonLoopbackBind?: boolean | undefined;
  /** Variables besides FAULTLINE_* an experiment's control plane may read its token from (--allow-token-env). */
  allowTokenEnv?: readonly string[] | undefined;
  maxDurationMs: number;
  /** Upper bound for num_clients × rps. */
  maxRatePerSecond: number;
}

/** What programs an MCP client may have the server start (src/consent): --allow-commands, --allow-command. */
export interface CommandAllowance {
  /** Any program (--allow-commands). */
  allowAll: boolean;
  /** These executables, by real path (--allow-command PROG, FAULTLINE_ALLOW_COMMANDS). */
  programs: string[];
}

/** How long a person asked for consent (MCP elicitation) has to answer. */
export const DEFAULT_CONSENT_TIMEOUT_MS = 120_000;

export interface Config {
  log: { level: LogLevel; file?: string | undefined };
  /** Directories the file-reading tools may read from (absolute). Empty: the client's roots decide. */
  roots: string[];
  llm: LlmConfig;
  scenario: ScenarioLimits;
  /** Where the embedded vector store and other state live. */
  dataDir: string;
  /**
   * Keep the definitions the code tools list on disk under dataDir, so a later process answers a
   * file listed before without parsing it (default on; FAULTLINE_CODE_CACHE=off turns it off).
   */
  codeCache: boolean;
  /** The tool families tools/list offers and tools/call accepts (default: DEFAULT_TOOLSETS). */
  toolsets: Toolset[];
  /** Inject faults even where the environment says production (--allow-production). */
  allowProduction: boolean;
  /** Programs an MCP call may start without asking (default none). */
  commands: CommandAllowance;
  /** How long an elicitation for consent waits for the person's answer. */
  consentTimeoutMs: number;
}

export const DEFAULT_LLM_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_DURATION_MS = 10 * 60_000;
export const DEFAULT_MAX_RATE_PER_SECOND = 5_000;

/** `$FAULTLINE_DATA_DIR`, else `$XDG_DATA_HOME/faultline`, else `~/.local/share/faultline`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FAULTLINE_DATA_DIR) return resolve(env.FAULTLINE_DATA_DIR);
  const base = env.XDG_DATA_HOME ? resolve(env.XDG_DATA_HOME) : join(homedir(), '.local', 'share');
  return join(base, 'faultline');
}

/** Whether the code tools keep listed definitions on disk: on unless FAULTLINE_CODE_CACHE is off, 0, false or no. */
export function defaultCodeCache(env: NodeJS.ProcessEnv = process.env): boolean {
  return !/^\s*(off|0|false|no)\s*$/i.test(env.FAULTLINE_CODE_CACHE ?? '');
}

/** A complete configuration from a partial one; what is not given takes its default. */
export function makeConfig(partial: DeepPartial<Config> = {}): Config {
  return {
    log: { level: partial.log?.level ?? 'info', file: partial.log?.file },
    roots: (partial.roots ?? []).map((root) => resolve(root)),
    llm: {
      client: partial.llm?.client,
      baseUrl: partial.llm?.baseUrl,
      promptModel: partial.llm?.promptModel,
      embedModel: partial.llm?.embedModel,
      embedDim: partial.llm?.embedDim,
      timeoutMs: partial.llm?.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS,
    },
    scenario: {
      allowRemoteTargets: partial.scenario?.allowRemoteTargets ?? false,
      allowTargets: [...(partial.scenario?.allowTargets ?? [])],
      allowNonLoopbackBind: partial.scenario?.allowNonLoopbackBind ?? false,
      allowTokenEnv: [...(partial.scenario?.allowTokenEnv ?? [])],
      maxDurationMs: partial.scenario?.maxDurationMs ?? DEFAULT_MAX_DURATION_MS,
      maxRatePerSecond: partial.scenario?.maxRatePerSecond ?? DEFAULT_MAX_RATE_PER_SECOND,
    },
    dataDir: partial.dataDir ?? defaultDataDir(),
    codeCache: partial.codeCache ?? defaultCodeCache(),
    toolsets: partial.toolsets ?? [...DEFAULT_TOOLSETS],
    allowProduction: partial.allowProduction ?? false,
    commands: { allowAll: partial.commands?.allowAll ?? false, programs: [...(partial.commands?.programs ?? [])] },
    consentTimeoutMs: partial.consentTimeoutMs ?? DEFAULT_CONSENT_TIMEOUT_MS,
  };
}

export type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K];
};
