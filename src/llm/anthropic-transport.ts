/**
 * Transport for Anthropic's Messages API on the official `@anthropic-ai/sdk`.
 *
 * - Structured output goes through tool use: one tool whose `input_schema` is the JSON schema,
 *   forced with `tool_choice`; the tool call's input is handed on as JSON text, and LlmProvider
 *   validates and repairs it like any other reply (a server that ignores the tool and answers in
 *   text, fenced JSON included, is handled the same way).
 * - The system prompt is a top-level field, not a message.
 * - The SDK's retries are off (LlmProvider retries within its one deadline); the reply body is
 *   bounded (boundedFetch).
 * - Anthropic has no embedding API: embed() says so; the indexer uses the local embedder.
 *
 * The package is loaded on the first request, not at start-up.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { boundedFetch } from './bounded-fetch.js';
import { LlmError } from './errors.js';
import type { ChatMessage, JsonFormat, Transport } from './provider.js';

export interface AnthropicTransportOptions {
  /** Undefined: the SDK's default (https://api.anthropic.com). */
  baseUrl: string | undefined;
  apiKey: string;
}

type AnthropicSdk = typeof import('@anthropic-ai/sdk').default;

/** Messages need a max_tokens; enough for a rewritten function or a list of findings. */
const MAX_TOKENS = 8192;

let sdk: Promise<AnthropicSdk> | undefined;

export class AnthropicTransport implements Transport {
  private client: Anthropic | undefined;

  constructor(private readonly options: AnthropicTransportOptions) {}

  private async sdk(): Promise<{ client: Anthropic; Anthropic: AnthropicSdk }> {
    sdk ??= import('@anthropic-ai/sdk').then((module) => module.default);
    const AnthropicClass = await sdk;
    this.client ??= new AnthropicClass({
      apiKey: this.options.apiKey,
      ...(this.options.baseUrl !== undefined ? { baseURL: this.options.baseUrl } : {}),
      maxRetries: 0,
      // Our deadline (LlmProvider) always fires first.
      timeout: 24 * 3600_000,
      fetch: boundedFetch(),
    });
    return { client: this.client, Anthropic: AnthropicClass };
  }

  async chat(
    model: string,
    messages: ChatMessage[],
    format: JsonFormat | undefined,
    signal: AbortSignal,
  ): Promise<string> {
    const { client, Anthropic: AnthropicClass } = await this.sdk();
    const system = messages
      .filter((message) => message.role === 'system')
      .map((message) => message.content)
      .join('\n\n');
    const turns = messages
      .filter((message) => message.role !== 'system')
      .map((message) => ({ role: message.role as 'user' | 'assistant', content: message.content }));
    const inputSchema = format ? toolSchema(format.schema) : undefined;
    const tool =
      format && inputSchema
        ? { name: format.name, description: 'Record the answer.', input_schema: inputSchema }
        : undefined;
    let reply;
    try {
      reply = await client.messages.create(
        {
          model,
          max_tokens: MAX_TOKENS,
          messages: turns,
          ...(system !== '' ? { system } : {}),
          ...(tool ? { tools: [tool], tool_choice: { type: 'tool' as const, name: tool.name } } : {}),
        },
        { signal },
      );
    } catch (error) {
      throw this.translate(AnthropicClass, error);
    }
    const content: unknown = (reply as { content?: unknown }).content;
    if (!Array.isArray(content)) return '';
    const used = content.find((block) => block?.type === 'tool_use');
    if (used !== undefined) return JSON.stringify(used.input ?? null);
    return content
      .filter((block) => block?.type === 'text' && typeof block.text === 'string')
      .map((block) => block.text as string)
      .join('');
  }

  embed(): Promise<number[][]> {
    return Promise.reject(
      new LlmError('not_configured', 'Anthropic has no embedding API; the local embedder is used for code search'),
    );
  }

  /** SDK errors → LlmError; an abort is passed through untouched for the deadline to name. */
  private translate(AnthropicClass: AnthropicSdk, error: unknown): unknown {
    const where = this.options.baseUrl ?? 'api.anthropic.com';
    if (error instanceof AnthropicClass.APIUserAbortError) return error;
    if (error instanceof LlmError) return error;
    if (error instanceof AnthropicClass.APIConnectionError) {
      if (error.cause instanceof LlmError) return error.cause;
      const cause = (error.cause as Error | undefined)?.message ?? error.message;
      return new LlmError('network', `could not reach ${where}: ${cause}`);
    }
    if (error instanceof AnthropicClass.APIError && error.status !== undefined) {
      const retryAfter = Number(error.headers?.get('retry-after'));
      return new LlmError(
        'http',
        `${where} answered HTTP ${error.status}: ${error.message}`,
        error.status,
        Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
      );
    }
    return new LlmError('network', `request to ${where} failed: ${(error as Error).message}`);
  }
}

/**
 * Tool input must be an object schema; for any other root the schema stays in the prompt only
 * (LlmProvider writes it there) and the reply is read as text.
 */
function toolSchema(schema: z.core.$ZodType): { type: 'object'; [key: string]: unknown } | undefined {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json.type === 'object' ? (json as { type: 'object' }) : undefined;
}
