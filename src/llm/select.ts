/**
 * Which provider, which endpoint, which key and which models: decided once from the LLM config
 * (flags) and the environment (keys), with the defaults documented in README.md.
 *
 * With no `--llm-client`, the first of OPENAI_API_KEY, OPENROUTER_API_KEY, GEMINI_API_KEY,
 * OLLAMA_HOST that is set picks the provider; with none of them but `--llm-base-url`, the base
 * URL is treated as a self-hosted OpenAI-compatible server. Otherwise nothing is configured and
 * the reason says what to set — tools answer with it at once instead of trying a request.
 */
import type { LlmClient, LlmConfig } from '../config.js';
import { OllamaTransport } from './ollama-transport.js';
import { OpenAiTransport } from './openai-transport.js';
import { LlmProvider, type Transport } from './provider.js';
import type { RetryOptions } from './retry.js';

interface ProviderDefaults {
  /** The env var holding the API key (for Ollama: the host). */
  env: string;
  endpoint: string;
  promptModel: string;
  embedModel: string;
  /** The dimension of `embedModel`, checked when the user kept the default model. */
  embedDim: number;
}

export const PROVIDER_DEFAULTS: Record<LlmClient, ProviderDefaults> = {
  openai: {
    env: 'OPENAI_API_KEY',
    endpoint: 'https://api.openai.com/v1',
    promptModel: 'o4-mini',
    embedModel: 'text-embedding-3-small',
    embedDim: 1536,
  },
  openrouter: {
    env: 'OPENROUTER_API_KEY',
    endpoint: 'https://openrouter.ai/api/v1',
    promptModel: 'openai/o4-mini',
    embedModel: 'openai/text-embedding-3-small',
    embedDim: 1536,
  },
  gemini: {
    env: 'GEMINI_API_KEY',
    endpoint: 'https://generativelanguage.googleapis.com/v1beta/openai/',
    promptModel: 'gemini-2.5-flash',
    embedModel: 'gemini-embedding-001',
    embedDim: 3072,
  },
  ollama: {
    env: 'OLLAMA_HOST',
    endpoint: 'http://127.0.0.1:11434',
    promptModel: 'qwen2.5-coder:7b',
    embedModel: 'nomic-embed-text',
    embedDim: 768,
  },
};

/** The order in which env vars pick a provider when `--llm-client` is not given. */
const AUTO_ORDER: LlmClient[] = ['openai', 'openrouter', 'gemini', 'ollama'];

/** Sent to servers that want no key; the openai SDK refuses an empty one. */
const NO_KEY = 'no-key';

export type ProviderChoice = { ok: true; provider: LlmProvider } | { ok: false; reason: string };

export interface CreateProviderOptions {
  /** Backoff settings; tests shorten them. */
  retry?: RetryOptions | undefined;
}

export function createProvider(
  llm: LlmConfig,
  env: NodeJS.ProcessEnv = process.env,
  options: CreateProviderOptions = {},
): ProviderChoice {
  if (!(llm.timeoutMs > 0)) return { ok: false, reason: `the LLM timeout must be a positive number of milliseconds (got ${llm.timeoutMs})` };
  if (llm.baseUrl !== undefined && !isHttpUrl(llm.baseUrl)) {
    return { ok: false, reason: `--llm-base-url / FAULT_LLM_BASE_URL must be an http:// or https:// URL (got "${llm.baseUrl}")` };
  }
  const client = llm.client ?? autoClient(env, llm.baseUrl);
  if (client === undefined) {
    return {
      ok: false,
      reason:
        'no LLM provider is configured: set OPENAI_API_KEY, OPENROUTER_API_KEY or GEMINI_API_KEY, or OLLAMA_HOST for a local Ollama ' +
        '(pick one explicitly with --llm-client / FAULT_AGENT_CLIENT; for a self-hosted OpenAI-compatible server give --llm-base-url / FAULT_LLM_BASE_URL)',
    };
  }

  const defaults = PROVIDER_DEFAULTS[client];
  const secret = nonEmpty(env[defaults.env]);
  let transport: Transport;
  let endpoint: string;
  if (client === 'ollama') {
    endpoint = llm.baseUrl ?? secret ?? defaults.endpoint;
    transport = new OllamaTransport(endpoint);
  } else {
    if (secret === undefined && llm.baseUrl === undefined) {
      return {
        ok: false,
        reason: `--llm-client ${client} needs an API key: set ${defaults.env} (or give --llm-base-url / FAULT_LLM_BASE_URL for a server that needs no key)`,
      };
    }
    endpoint = llm.baseUrl ?? defaults.endpoint;
    transport = new OpenAiTransport({
      baseUrl: endpoint,
      apiKey: secret ?? NO_KEY,
      headers: client === 'openrouter' ? { 'X-Title': 'faultline' } : undefined,
    });
  }

  const embedModel = llm.embedModel ?? defaults.embedModel;
  const info = {
    client,
    endpoint,
    promptModel: llm.promptModel ?? defaults.promptModel,
    embedModel,
    embedDim: llm.embedDim ?? (embedModel === defaults.embedModel ? defaults.embedDim : undefined),
  };
  return { ok: true, provider: new LlmProvider(info, transport, { timeoutMs: llm.timeoutMs, retry: options.retry }) };
}

function autoClient(env: NodeJS.ProcessEnv, baseUrl: string | undefined): LlmClient | undefined {
  const found = AUTO_ORDER.find((client) => nonEmpty(env[PROVIDER_DEFAULTS[client].env]) !== undefined);
  if (found) return found;
  return baseUrl !== undefined ? 'openai' : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
