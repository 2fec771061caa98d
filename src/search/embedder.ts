/**
 * Embedders turn chunk texts and queries into vectors. Two kinds, one interface:
 * - the configured LLM provider's embedding model (src/llm: OpenAI, OpenRouter, Gemini's
 *   OpenAI-compatible endpoint, Ollama), in batches;
 * - the local hashed embedder, when no provider is configured (src/search/hashed-embedder.ts).
 *
 * An embedder's `id` names the index it writes (one per tree and embedder), because vectors from
 * different models cannot be compared; its dimension is checked against what the model returns
 * and against the existing index, never assumed.
 */
import type { LlmConfig } from '../config.js';
import type { LlmProvider } from '../llm/provider.js';
import { autoClient, nonEmpty } from '../llm/provider-env.js';
import { IndexError } from './errors.js';
import { HashedEmbedder } from './hashed-embedder.js';

export interface Embedder {
  /** Stable, filename-safe: `hashed-v1-512`, `openai-text-embedding-3-small`. */
  readonly id: string;
  /** For people: which model, and what kind of search it gives. */
  readonly description: string;
  /** Known up front, or learnt from the first reply when neither the user nor a default says. */
  readonly dimension: number | undefined;
  /** One vector per text, in order (not necessarily unit length: stores normalise). */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Texts per embedding request: few enough for every provider's batch limit. */
export const EMBED_BATCH = 64;

export class ProviderEmbedder implements Embedder {
  readonly id: string;
  readonly description: string;
  private learntDimension: number | undefined;

  constructor(private readonly provider: LlmProvider) {
    const { client, embedModel } = provider.info;
    this.id = slug(`${client}-${embedModel}`);
    this.description = `${client} embedding model ${embedModel}`;
    this.learntDimension = provider.info.embedDim;
  }

  get dimension(): number | undefined {
    return this.learntDimension;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += EMBED_BATCH) {
      const batch = await this.provider.embed(texts.slice(start, start + EMBED_BATCH), { signal });
      for (const vector of batch) {
        this.learntDimension ??= vector.length;
        if (vector.length !== this.learntDimension) {
          throw new IndexError(
            `${this.description} returned vectors of dimension ${vector.length} after ${this.learntDimension}; ` +
              "set --llm-embed-model-dim / FAULT_AGENT_EMBED_MODEL_DIMENSION to the model's dimension",
          );
        }
        vectors.push(Float32Array.from(vector));
      }
    }
    return vectors;
  }
}

/** Whether the settings name an embedding provider (selectEmbedder then loads src/llm). */
export function asksForProvider(llm: LlmConfig, env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    llm.client !== undefined ||
    llm.baseUrl !== undefined ||
    autoClient(env, nonEmpty(env.OPENAI_BASE_URL)) !== undefined
  );
}

/**
 * The provider's embedder when one is configured, else the local hashed one. A provider the user
 * asked for (`--llm-client`, `--llm-base-url`) that cannot be used is an error, not a silent
 * fallback to a different kind of search.
 */
export async function selectEmbedder(llm: LlmConfig, env: NodeJS.ProcessEnv = process.env): Promise<Embedder> {
  // Nothing asks for a provider: the local embedder, without loading the providers (and zod),
  // which a search from a fresh process would otherwise spend most of its time on.
  if (!asksForProvider(llm, env)) return new HashedEmbedder();
  const { createProvider } = await import('../llm/select.js');
  const choice = createProvider(llm, env);
  // Anthropic has no embedding API: its users get the local embedder, and the index stats say why.
  if (choice.ok && choice.provider.info.client === 'anthropic')
    return new HashedEmbedder('anthropic has no embedding API');
  if (choice.ok) return new ProviderEmbedder(choice.provider);
  if (llm.client !== undefined || llm.baseUrl !== undefined) throw new IndexError(`cannot embed: ${choice.reason}`);
  return new HashedEmbedder();
}

/** Lower-case letters, digits, dots and dashes only: safe in file and collection names. */
export function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9.]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'x'
  );
}
