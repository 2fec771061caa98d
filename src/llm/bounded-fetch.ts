/**
 * A `fetch` for the LLM SDKs that refuses a reply body over a size cap while it streams in, so a
 * runaway or hostile endpoint costs at most the cap in memory (unbounded, a 454 MB reply costs
 * 454 MB of RSS). Every transport hands this to its SDK as its `fetch`.
 *
 * It also judges a successful (2xx) reply before the SDK parses it. Every call we make (chat
 * without streaming, embeddings) answers one JSON document, so a 2xx with an empty body or a body
 * that is not JSON is no reply from a model: an `invalid_reply`, which is not retried. Left to the
 * SDKs, both became a JSON SyntaxError that each transport read as a broken connection
 * (`network`) and retried three times; the Anthropic SDK even handed an HTML page back as an
 * empty answer.
 */
import { LlmError } from './errors.js';

/** 1 MiB: far above any review reply, far below what hurts the server. */
export const MAX_REPLY_BYTES = 1024 * 1024;

export function boundedFetch(maxBytes: number = MAX_REPLY_BYTES, base: typeof fetch = fetch): typeof fetch {
  const tooLarge = (what: string): LlmError =>
    new LlmError('invalid_reply', `the reply body is ${what}, over the ${maxBytes}-byte cap on LLM replies`);
  return async (input, init) => {
    const response = await base(input, init);
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(`${declared} bytes`);
    }
    if (response.body === null) {
      if (response.ok) throw notJson(response.status, '');
      return response;
    }
    let seen = 0;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(tooLarge(`more than ${maxBytes} bytes`));
          else controller.enqueue(chunk);
        },
      }),
    );
    const bounded = new Response(limited, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // Error replies go to the SDK as they are: it reads their status and message.
    if (!response.ok) return bounded;
    // The SDKs read the whole body anyway; reading it here (bounded) costs nothing more.
    const text = await bounded.text();
    try {
      JSON.parse(text);
    } catch {
      throw notJson(response.status, text);
    }
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** A 2xx whose body is empty or not JSON, named with what it began with. */
function notJson(status: number, text: string): LlmError {
  const start = text.trim().slice(0, 80);
  if (start === '')
    return new LlmError(
      'invalid_reply',
      `the server answered HTTP ${status} with an empty body, not a reply from a model`,
    );
  return new LlmError(
    'invalid_reply',
    `the server's answer (HTTP ${status}) is not JSON, so not a reply ` +
      `from a model (is the base URL the API's, e.g. ending in /v1 for ` +
      `OpenAI-compatible servers?); it began ${JSON.stringify(start)}`,
  );
}
