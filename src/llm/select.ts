/**
 * Which provider, which endpoint, which key and which models: decided once from the LLM config
 * (flags) and the environment (keys), with the defaults documented in README.md.
 *
 * With no `--llm-client`, the first of OPENAI_API_KEY, OPENROUTER_API_KEY, GEMINI_API_KEY,
 * ANTHROPIC_API_KEY, OLLAMA_HOST that is set picks the provider; with none of them but
 * `--llm-base-url` or OPENAI_BASE_URL, the base URL is treated as a self-hosted OpenAI-compatible
 * server. The base URL: --llm-base-url / FAULT_LLM_BASE_URL, else the SDK's own variable
 * (OPENAI_BASE_URL for openai, ANTHROPIC_BASE_URL for anthropic), else the provider's default. Otherwise nothing is
 * configured and
 * the reason says what to set — tools answer with it at once instead of trying a request.
 */
import type { LlmClient, LlmConfig } from '../config.js';
import { AnthropicTransport } from './anthropic-transport.js';
import { OllamaTransport } from './ollama-transport.js';
import { OpenAiTransport } from './openai-transport.js';
import { LlmProvider, type Transport } from './provider.js';
import type { RetryOptions } from './retry.js';
import { autoClient, nonEmpty, PROVIDER_KEY_ENV } from './provider-env.js';

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
    env: PROVIDER_KEY_ENV.openai,
    endpoint: 'https://api.openai.com/v1',
    promptModel: 'o4-mini',
    embedModel: 'text-embedding-3-small',
    embedDim: 1536,
  },
  openrouter: {
    env: PROVIDER_KEY_ENV.openrouter,
    endpoint: 'https://openrouter.ai/api/v1',
    promptModel: 'openai/o4-mini',
    embedModel: 'openai/text-embedding-3-small',
    embedDim: 1536,
  },
  gemini: {
    env: PROVIDER_KEY_ENV.gemini,
    endpoint: 'https://generativelanguage.googleapis.com/v1beta/openai/',
    promptModel: 'gemini-2.5-flash',
    embedModel: 'gemini-embedding-001',
    embedDim: 3072,
  },
  ollama: {
    env: PROVIDER_KEY_ENV.ollama,
    endpoint: 'http://127.0.0.1:11434',
    promptModel: 'qwen2.5-coder:7b',
    embedModel: 'nomic-embed-text',
    embedDim: 768,
  },
  anthropic: {
    env: PROVIDER_KEY_ENV.anthropic,
    endpoint: 'https://api.anthropic.com',
    promptModel: 'claude-sonnet-4-6',
    // Anthropic has no embedding API: code search uses the local embedder (src/search/embedder.ts).
    embedModel: 'none',
    embedDim: 0,
  },
};

/**
 * The base-URL variables each SDK's own users set, honoured after --llm-base-url /
 * FAULT_LLM_BASE_URL (which win, being faultline's own setting).
 */
const SDK_BASE_URL_ENV: Partial<Record<LlmClient, string>> = {
  openai: 'OPENAI_BASE_URL',
  anthropic: 'ANTHROPIC_BASE_URL',
};

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
  if (!(llm.timeoutMs > 0))
    return { ok: false, reason: `the LLM timeout must be a positive number of milliseconds (got ${llm.timeoutMs})` };
  if (llm.baseUrl !== undefined && !isHttpUrl(llm.baseUrl)) {
    return {
      ok: false,
      reason: `--llm-base-url / FAULT_LLM_BASE_URL must be an http:// or https:// URL (got "${llm.baseUrl}")`,
    };
  }
  const openAiBaseUrl = nonEmpty(env.OPENAI_BASE_URL);
  const client = llm.client ?? autoClient(env, llm.baseUrl ?? openAiBaseUrl);
  if (client === undefined) {
    return {
      ok: false,
      reason:
        'no LLM provider is configured: set OPENAI_API_KEY, ' +
        'OPENROUTER_API_KEY, GEMINI_API_KEY or ANTHROPIC_API_KEY, or ' +
        'OLLAMA_HOST for a local Ollama ' +
        '(pick one explicitly with --llm-client / FAULT_AGENT_CLIENT; for ' +
        'a self-hosted OpenAI-compatible server give --llm-base-url / ' +
        'FAULT_LLM_BASE_URL)',
    };
  }

  const defaults = PROVIDER_DEFAULTS[client];
  const secret = nonEmpty(env[defaults.env]);
  const sdkBaseUrlEnv = SDK_BASE_URL_ENV[client];
  const sdkBaseUrl = sdkBaseUrlEnv !== undefined ? nonEmpty(env[sdkBaseUrlEnv]) : undefined;
  if (llm.baseUrl === undefined && sdkBaseUrl !== undefined && !isHttpUrl(sdkBaseUrl)) {
    return { ok: false, reason: `${sdkBaseUrlEnv} must be an http:// or https:// URL (got "${sdkBaseUrl}")` };
  }
  const baseUrl = llm.baseUrl ?? sdkBaseUrl;
  let transport: Transport;
  let endpoint: string;
  if (client === 'ollama') {
    endpoint = baseUrl ?? secret ?? defaults.endpoint;
    transport = new OllamaTransport(endpoint);
  } else if (client === 'anthropic') {
    if (secret === undefined && baseUrl === undefined) {
      return {
        ok: false,
        reason:
          `--llm-client anthropic needs an API key: set ANTHROPIC_API_KEY ` +
          `(or give ANTHROPIC_BASE_URL / --llm-base-url for a server that ` +
          `needs no key)`,
      };
    }
    endpoint = baseUrl ?? defaults.endpoint;
    transport = new AnthropicTransport({ baseUrl, apiKey: secret ?? NO_KEY });
  } else {
    if (secret === undefined && baseUrl === undefined) {
      return {
        ok: false,
        reason:
          `--llm-client ${client} needs an API key: set ${defaults.env} (or ` +
          `give --llm-base-url / FAULT_LLM_BASE_URL for a server that needs ` +
          `no key)`,
      };
    }
    endpoint = baseUrl ?? defaults.endpoint;
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

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
