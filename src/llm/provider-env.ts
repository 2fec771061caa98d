/**
 * Which environment variables pick an LLM provider, and the choice they make when no
 * `--llm-client` is given: a leaf module (no imports) so that code which only needs to know
 * whether a provider could be configured (the index's embedder choice) does not load the
 * providers, their SDK adapters and zod.
 */
import type { LlmClient } from '../config.js';

/** The env var holding each provider's API key (for Ollama: the host). */
export const PROVIDER_KEY_ENV: Readonly<Record<LlmClient, string>> = {
  openai: 'OPENAI_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
  gemini: 'GEMINI_API_KEY',
  ollama: 'OLLAMA_HOST',
  anthropic: 'ANTHROPIC_API_KEY',
};

/** The order in which set keys pick the provider. */
const AUTO_ORDER: readonly LlmClient[] = ['openai', 'openrouter', 'gemini', 'anthropic', 'ollama'];

/** A blank variable counts as unset. */
export function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** The provider the environment picks: the first key set, else openai for a bare base URL. */
export function autoClient(env: NodeJS.ProcessEnv, baseUrl: string | undefined): LlmClient | undefined {
  const found = AUTO_ORDER.find((client) => nonEmpty(env[PROVIDER_KEY_ENV[client]]) !== undefined);
  if (found) return found;
  return baseUrl !== undefined ? 'openai' : undefined;
}
