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

/** The `ollama` package, loaded on the first request rather than at start-up. */
let ollamaModule: Promise<typeof import('ollama')> | undefined;

export class OllamaTransport implements Transport {
  constructor(private readonly host: string) {}

  async chat(model: string, messages: ChatMessage[], format: JsonFormat | undefined, signal: AbortSignal): Promise<string> {
    try {
      const response = await (await this.client(signal)).chat({
        model,
        messages,
        stream: false,
        ...(format ? { format: z.toJSONSchema(format.schema) as object } : {}),
        // Deterministic sampling is what Ollama recommends for schema-constrained output.
        options: { temperature: 0 },
      });
      const content: unknown = response?.message?.content;
      if (content === undefined || content === null) return '';
      if (typeof content !== 'string') throw new LlmError('invalid_reply', `the reply's message content is ${typeof content}, not text`);
      return content;
    } catch (error) {
      throw this.translate(error, signal);
    }
  }

  async embed(model: string, texts: string[], signal: AbortSignal): Promise<number[][]> {
    try {
      const response = await (await this.client(signal)).embed({ model, input: texts });
      return response.embeddings;
    } catch (error) {
      throw this.translate(error, signal);
    }
  }

  private async client(signal: AbortSignal): Promise<Ollama> {
    ollamaModule ??= import('ollama');
    const { Ollama } = await ollamaModule;
    const bounded = boundedFetch();
    return new Ollama({ host: this.host, fetch: (input, init) => bounded(input, { ...init, signal }) });
  }

  private translate(error: unknown, signal: AbortSignal): unknown {
    if (signal.aborted || error instanceof LlmError) return error;
    const status = (error as { status_code?: unknown }).status_code;
    if (typeof status === 'number') {
      return new LlmError('http', `Ollama at ${this.host} answered HTTP ${status}: ${(error as Error).message}`, status);
    }
    const cause = ((error as Error).cause as Error | undefined)?.message;
    return new LlmError('network', `could not reach Ollama at ${this.host}: ${cause ?? (error as Error).message}`);
  }
}
