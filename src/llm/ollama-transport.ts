/**
 * Transport for Ollama's native API (/api/chat, /api/embed) on the official `ollama` package.
 * Structured output uses `format` set to the JSON schema, which Ollama turns into a grammar.
 *
 * The package only aborts streamed requests, so each call gets a client whose fetch carries our
 * signal; a client is a plain object, cheap to make.
 */
import type { Ollama } from 'ollama';
import { z } from 'zod';
import { boundedFetch } from './bounded-fetch.js';
import { LlmError } from './errors.js';
import type { ChatMessage, JsonFormat, Transport } from './provider.js';

/** What the fetch saw of one request's reply that the package's errors do not carry. */
interface SeenHeaders {
  retryAfterSeconds?: number;
}

/** The `ollama` package, loaded on the first request rather than at start-up. */
let ollamaModule: Promise<typeof import('ollama')> | undefined;

export class OllamaTransport implements Transport {
  constructor(private readonly host: string) {}

  async chat(
    model: string,
    messages: ChatMessage[],
    format: JsonFormat | undefined,
    signal: AbortSignal,
  ): Promise<string> {
    const seen: SeenHeaders = {};
    try {
      const response = await (await this.client(signal, seen)).chat({
        model,
        messages,
        stream: false,
        ...(format ? { format: z.toJSONSchema(format.schema) as object } : {}),
        // Deterministic sampling is what Ollama recommends for schema-constrained output.
        options: { temperature: 0 },
      });
      const content: unknown = response?.message?.content;
      if (content === undefined || content === null) return '';
      if (typeof content !== 'string')
        throw new LlmError('invalid_reply', `the reply's message content is ${typeof content}, not text`);
      return content;
    } catch (error) {
      throw this.translate(error, signal, seen);
    }
  }

  async embed(model: string, texts: string[], signal: AbortSignal): Promise<number[][]> {
    const seen: SeenHeaders = {};
    try {
      const response = await (await this.client(signal, seen)).embed({ model, input: texts });
      return response.embeddings;
    } catch (error) {
      throw this.translate(error, signal, seen);
    }
  }

  /**
   * The package's errors carry the status but not the headers, so the fetch notes Retry-After
   * itself: a 429 or 503 from Ollama (or a proxy in front of it) is then retried when the server
   * asked, as with the other providers.
   */
  private async client(signal: AbortSignal, seen: SeenHeaders): Promise<Ollama> {
    ollamaModule ??= import('ollama');
    const { Ollama } = await ollamaModule;
    const bounded = boundedFetch();
    return new Ollama({
      host: this.host,
      fetch: async (input, init) => {
        const response = await bounded(input, { ...init, signal });
        if (response.ok) return response;
        const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
        if (Number.isFinite(retryAfter) && retryAfter >= 0) seen.retryAfterSeconds = retryAfter;
        return asOllamaError(response);
      },
    });
  }

  private translate(error: unknown, signal: AbortSignal, seen: SeenHeaders): unknown {
    if (signal.aborted || error instanceof LlmError) return error;
    const status = (error as { status_code?: unknown }).status_code;
    if (typeof status === 'number') {
      return new LlmError(
        'http',
        `Ollama at ${this.host} answered HTTP ${status}: ${(error as Error).message}`,
        status,
        seen.retryAfterSeconds,
      );
    }
    const cause = ((error as Error).cause as Error | undefined)?.message;
    return new LlmError('network', `could not reach Ollama at ${this.host}: ${cause ?? (error as Error).message}`);
  }
}

/**
 * An error reply in Ollama's own shape, `{"error": "text"}`, whatever came: the package
 * console.logs "Getting text from response" (to stdout, where `faultline index` prints its JSON)
 * for any other content type, and turns an error that is an object (a proxy's
 * `{"error":{"message":…}}`) into "[object Object]".
 */
async function asOllamaError(response: Response): Promise<Response> {
  const text = await response.text().catch(() => '');
  let message = text.trim();
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (typeof error === 'string') message = error;
    else if (typeof (error as { message?: unknown })?.message === 'string')
      message = (error as { message: string }).message;
  } catch {
    // not JSON: the text itself (an HTML page, a proxy's message)
  }
  if (message.length > 500) message = `${message.slice(0, 500)}…`;
  const headers = new Headers(response.headers);
  headers.set('content-type', 'application/json');
  headers.delete('content-length');
  return new Response(JSON.stringify({ error: message || `HTTP ${response.status} ${response.statusText}`.trim() }), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
