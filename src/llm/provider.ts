/**
 * The provider interface every LLM user sees, built on a small transport per API.
 *
 *   tool / indexer ──▶ LlmProvider ──▶ Transport (openai | ollama) ──▶ HTTP
 *                       deadline, cancellation,
 *                       retries, JSON extraction,
 *                       validation, one repair
 *
 * Transports only translate one request and its errors; everything that decides whether a reply
 * is usable lives here, once.
 */
import { z } from 'zod';
import type { LlmClient } from '../config.js';
import { LlmError, excerpt } from './errors.js';
import { extractJson, jsonCandidates } from './extract-json.js';
import { DEFAULT_RETRY, withDeadline, withRetries, type RetryOptions } from './retry.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Asks the endpoint to constrain its reply to a JSON schema, where it can. */
export interface JsonFormat {
  name: string;
  schema: z.core.$ZodType;
}

/** One API's way of sending a chat or an embedding request. Errors come out as LlmErrors. */
export interface Transport {
  chat(model: string, messages: ChatMessage[], format: JsonFormat | undefined, signal: AbortSignal): Promise<string>;
  embed(model: string, texts: string[], signal: AbortSignal): Promise<number[][]>;
}

export interface ProviderInfo {
  client: LlmClient;
  /** Where requests go (base URL or Ollama host), for messages and reports. */
  endpoint: string;
  promptModel: string;
  embedModel: string;
  /** The embedding dimension we insist on; undefined when neither the user nor a default says. */
  embedDim: number | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface StructuredOptions<T> extends CallOptions {
  /** Names the schema for the endpoint (OpenAI requires a name; letters, digits, _ and -). */
  name: string;
  /**
   * A check the schema cannot express (e.g. "the new code parses"); a returned message counts as
   * a validation failure and is shown to the model in the repair attempt.
   */
  check?: ((value: T) => string | undefined | Promise<string | undefined>) | undefined;
}

export interface ProviderOptions {
  /** Bounds one call: text(), structured() or embed(), with its retries and repair. */
  timeoutMs: number;
  retry?: RetryOptions | undefined;
}

export class LlmProvider {
  private readonly retry: RetryOptions;

  constructor(
    readonly info: ProviderInfo,
    private readonly transport: Transport,
    private readonly options: ProviderOptions,
  ) {
    this.retry = options.retry ?? DEFAULT_RETRY;
  }

  /** A plain text completion. */
  async text(messages: ChatMessage[], options: CallOptions = {}): Promise<string> {
    return withDeadline(this.options.timeoutMs, options.signal, this.describe('the request'), (signal) =>
      this.chat(messages, undefined, signal),
    );
  }

  /**
   * A reply validated against `schema`. The schema is sent as the endpoint's structured-output
   * format and also written into the prompt (for endpoints that ignore the format). A reply that
   * fails extraction, validation or `check` gets one repair attempt showing the model what was
   * wrong; a second failure is an LlmError `invalid_reply` quoting the reply.
   */
  async structured<T>(messages: ChatMessage[], schema: z.core.$ZodType<T>, options: StructuredOptions<T>): Promise<T> {
    const format: JsonFormat = { name: options.name, schema };
    const conversation = withSchemaInstruction(messages, schema);
    return withDeadline(this.options.timeoutMs, options.signal, this.describe('the request'), async (signal) => {
      const first = await this.chat(conversation, format, signal);
      const firstVerdict = await judge(first, schema, options.check);
      if (firstVerdict.ok) return firstVerdict.value;

      const repair: ChatMessage[] = [
        ...conversation,
        { role: 'assistant', content: first },
        { role: 'user', content: repairInstruction(firstVerdict.problem) },
      ];
      const second = await this.chat(repair, format, signal);
      const secondVerdict = await judge(second, schema, options.check);
      if (secondVerdict.ok) return secondVerdict.value;
      throw new LlmError(
        'invalid_reply',
        `${this.describe('the reply')} was unusable twice (once after ` +
          `being shown the problem): ${secondVerdict.problem}; ` +
          `the reply began ${excerpt(second)}`,
      );
    });
  }

  /**
   * Several calls that make one answer (a reply and its repair) under the one timeout a single
   * structured() call has; `work` passes the signal it gets to each call.
   */
  conversation<T>(options: CallOptions, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(this.options.timeoutMs, options.signal, this.describe('the conversation'), work);
  }

  /** One vector per text, in order, each of the expected dimension. */
  async embed(texts: string[], options: CallOptions = {}): Promise<number[][]> {
    if (texts.length === 0) return [];
    const vectors = await withDeadline(
      this.options.timeoutMs,
      options.signal,
      this.describe('the embedding request'),
      (signal) => withRetries(() => this.transport.embed(this.info.embedModel, texts, signal), this.retry, signal),
    );
    if (vectors.length !== texts.length) {
      throw new LlmError(
        'invalid_reply',
        `${this.describe('the embedding reply', 'embed')} has ${vectors.length} vectors for ${texts.length} inputs`,
      );
    }
    const expected = this.info.embedDim ?? vectors[0]?.length ?? 0;
    const wrong = vectors.find((vector) => vector.length !== expected);
    if (wrong !== undefined || expected === 0) {
      const got = wrong?.length ?? expected;
      throw new LlmError(
        'dimension_mismatch',
        `${this.describe('the embedding model', 'embed')} returned vectors of dimension ${got}, expected ${expected}` +
          (this.info.embedDim !== undefined
            ? " (set --llm-embed-model-dim / FAULT_AGENT_EMBED_MODEL_DIMENSION to the model's dimension)"
            : ''),
      );
    }
    return vectors;
  }

  private chat(messages: ChatMessage[], format: JsonFormat | undefined, signal: AbortSignal): Promise<string> {
    return withRetries(() => this.transport.chat(this.info.promptModel, messages, format, signal), this.retry, signal);
  }

  private describe(what: string, model: 'prompt' | 'embed' = 'prompt'): string {
    const name = model === 'prompt' ? this.info.promptModel : this.info.embedModel;
    return `${what} (${this.info.client} model ${name})`;
  }
}

type Verdict<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The first JSON value in the reply that fits the schema, then the check; else what was wrong with the first. */
async function judge<T>(
  reply: string,
  schema: z.core.$ZodType<T>,
  check: StructuredOptions<T>['check'],
): Promise<Verdict<T>> {
  let firstProblem: string | undefined;
  for (const candidate of jsonCandidates(reply)) {
    const parsed = z.safeParse(schema, candidate);
    if (!parsed.success) {
      firstProblem ??= describeIssues(parsed.error);
      continue;
    }
    const problem = check ? await check(parsed.data) : undefined;
    return problem === undefined ? { ok: true, value: parsed.data } : { ok: false, problem };
  }
  if (firstProblem !== undefined) return { ok: false, problem: firstProblem };
  const extracted = extractJson(reply);
  return { ok: false, problem: extracted.ok ? 'no JSON value in the reply fits the schema' : extracted.reason };
}

/** "score: Too big: expected number to be <=1; explanation: …" — short enough to quote back. */
function describeIssues(error: z.ZodError): string {
  const parts = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    return `${path}: ${issue.message}`;
  });
  if (error.issues.length > 5) parts.push(`and ${error.issues.length - 5} more`);
  return `the JSON does not match the schema (${parts.join('; ')})`;
}

function withSchemaInstruction(messages: ChatMessage[], schema: z.core.$ZodType): ChatMessage[] {
  const instruction =
    'Reply with one JSON value, and nothing else, that matches this JSON Schema:\n' +
    JSON.stringify(z.toJSONSchema(schema));
  const last = messages[messages.length - 1];
  if (last?.role === 'user')
    return [...messages.slice(0, -1), { role: 'user', content: `${last.content}\n\n${instruction}` }];
  return [...messages, { role: 'user', content: instruction }];
}

function repairInstruction(problem: string): string {
  return (
    `Your reply could not be used: ${problem}. Reply again with only ` +
    `the corrected JSON value, matching the schema.`
  );
}
