/**
 * A `fetch` for the LLM SDKs that refuses a reply body over a size cap while it streams in, so a
 * runaway or hostile endpoint costs at most the cap in memory (an outside trial made a 454 MB
 * reply cost 454 MB of RSS). Every transport hands this to its SDK as its `fetch`.
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
    if (response.body === null) return response;
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
    return new Response(limited, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
