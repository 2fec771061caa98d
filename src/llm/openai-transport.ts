/**
 * Transport for OpenAI-compatible endpoints (OpenAI, OpenRouter, Gemini's compatibility layer,
 * self-hosted servers) on the official `openai` package.
 *
 * Traps handled here (each seen against real servers):
 * - the SDK asks for base64 embeddings by default and returns empty vectors from servers that
 *   answer with float arrays, so we always ask for `encoding_format: 'float'`;
 * - the SDK's own retries are off: LlmProvider retries, within its one deadline.
 *
 * The `openai` package is loaded on the first request, not at start-up: it costs ~70 ms to load,
 * and a server whose LLM tools are never called should not pay it before answering initialize.
 */
import type OpenAI from 'openai';
import { boundedFetch } from './bounded-fetch.js';
import { LlmError } from './errors.js';
import type { ChatMessage, JsonFormat, Transport } from './provider.js';

export interface OpenAiTransportOptions {
  baseUrl: string;
  apiKey: string;
  /** Extra headers, e.g. OpenRouter's attribution headers. */
  headers?: Record<string, string> | undefined;
}

type OpenAiSdk = typeof import('openai').default;
type ZodResponseFormat = typeof import('openai/helpers/zod').zodResponseFormat;

let sdk: Promise<{ OpenAI: OpenAiSdk; zodResponseFormat: ZodResponseFormat }> | undefined;
function loadSdk(): Promise<{ OpenAI: OpenAiSdk; zodResponseFormat: ZodResponseFormat }> {
  sdk ??= Promise.all([import('openai'), import('openai/helpers/zod')]).then(([openai, helpers]) => ({
    OpenAI: openai.default,
    zodResponseFormat: helpers.zodResponseFormat,
  }));
  return sdk;
}

export class OpenAiTransport implements Transport {
  private client: OpenAI | undefined;
  /**
   * Some compatible servers reject `response_format: json_schema` with a 4xx. After the first such
   * refusal we stop sending it; the schema is in the prompt anyway and the reply is validated.
   */
  private jsonSchemaRefused = false;

  constructor(private readonly options: OpenAiTransportOptions) {}

  private async sdk(): Promise<{ client: OpenAI; OpenAI: OpenAiSdk; zodResponseFormat: ZodResponseFormat }> {
    const { OpenAI, zodResponseFormat } = await loadSdk();
    this.client ??= new OpenAI({
      baseURL: this.options.baseUrl,
      apiKey: this.options.apiKey,
      defaultHeaders: this.options.headers,
      maxRetries: 0,
      // Our deadline (LlmProvider) always fires first; this only keeps the SDK from imposing its own.
      timeout: 24 * 3600_000,
      fetch: boundedFetch(),
    });
    return { client: this.client, OpenAI, zodResponseFormat };
  }

  async chat(
    model: string,
    messages: ChatMessage[],
    format: JsonFormat | undefined,
    signal: AbortSignal,
  ): Promise<string> {
    const useSchema = format !== undefined && !this.jsonSchemaRefused;
    const { client, OpenAI, zodResponseFormat } = await this.sdk();
    let completion;
    try {
      completion = await client.chat.completions.create(
        {
          model,
          messages,
          ...(useSchema ? { response_format: zodResponseFormat(format.schema, format.name) } : {}),
        },
        { signal },
      );
    } catch (error) {
      const translated = this.translate(OpenAI, error);
      if (
        useSchema &&
        translated instanceof LlmError &&
        translated.kind === 'http' &&
        (translated.status === 400 || translated.status === 422)
      ) {
        this.jsonSchemaRefused = true;
        return this.chat(model, messages, format, signal);
      }
      throw translated;
    }
    return replyText(completion);
  }

  async embed(model: string, texts: string[], signal: AbortSignal): Promise<number[][]> {
    const { client, OpenAI } = await this.sdk();
    let response;
    try {
      response = await client.embeddings.create({ model, input: texts, encoding_format: 'float' }, { signal });
    } catch (error) {
      throw this.translate(OpenAI, error);
    }
    return [...response.data].sort((a, b) => a.index - b.index).map((item) => item.embedding);
  }

  /** SDK errors → LlmError; an abort is passed through untouched for the deadline to name. */
  private translate(OpenAI: OpenAiSdk, error: unknown): unknown {
    if (error instanceof OpenAI.APIUserAbortError) return error;
    if (error instanceof OpenAI.APIConnectionError) {
      // boundedFetch's own verdicts (too large, empty, not JSON) arrive wrapped as the cause.
      if (error.cause instanceof LlmError) return error.cause;
      const cause = (error.cause as Error | undefined)?.message ?? error.message;
      return new LlmError('network', `could not reach ${this.options.baseUrl}: ${cause}`);
    }
    if (error instanceof OpenAI.APIError && error.status !== undefined) {
      const retryAfter = Number(error.headers?.get('retry-after'));
      return new LlmError(
        'http',
        `${this.options.baseUrl} answered HTTP ${error.status}: ${error.message}`,
        error.status,
        Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
      );
    }
    if (error instanceof LlmError) return error;
    return new LlmError('network', `request to ${this.options.baseUrl} failed: ${(error as Error).message}`);
  }
}

/**
 * The assistant text of a completion, from whatever a compatible server sent: no `choices`, an
 * empty or non-array `choices`, or null content is '' (an empty reply, which the caller's repair
 * turn and validation treat as unusable, never as "no change"); content sent as an array of text
 * parts is joined; content of any other type is an `invalid_reply` naming what came.
 */
export function replyText(completion: unknown): string {
  // The SDK hands back a body that is not JSON (an HTML page from a wrong base URL, a proxy's
  // error text) as a string: that is no reply from a model, and asking it again cannot help.
  if (typeof completion === 'string') {
    const start = completion.trim().slice(0, 80);
    throw new LlmError(
      'invalid_reply',
      `the server's answer is not a chat completion (is the base URL ` +
        `the API's, e.g. ending in /v1?); it began ${start === '' ? '(empty)' : JSON.stringify(start)}`,
    );
  }
  const choices = (completion as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return '';
  const message = (choices[0] as { message?: { content?: unknown; refusal?: unknown } } | undefined)?.message;
  if (typeof message?.refusal === 'string' && message.refusal !== '')
    throw new LlmError('invalid_reply', `the model refused: ${message.refusal}`);
  const content = message?.content;
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.every((part) => typeof part?.text === 'string'))
    return content.map((part) => part.text as string).join('');
  throw new LlmError(
    'invalid_reply',
    `the reply's message content is ${Array.isArray(content) ? 'an array' : typeof content}, not text`,
  );
}
