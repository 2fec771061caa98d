/**
 * Server-sent events, read and written. MCP's streamable HTTP answers a POST with JSON or with an
 * SSE stream of JSON-RPC messages; the probe and the tool-call HTTP proxy both read such streams.
 * Reading is eventsource-parser's (the SDK's own dependency), bounded per event so a stream that
 * never ends an event cannot grow memory without bound.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export type SseEvent = EventSourceMessage;

export interface SseReader {
  /** Feeds a chunk of the body (text or bytes; bytes are decoded as UTF-8 across chunks). */
  feed(chunk: string | Uint8Array): void;
  /** The body ended: an event left without its closing blank line is delivered, as browsers do not but servers that end
   * the body expect. */
  end(): void;
}

export interface SseReaderOptions {
  onEvent: (event: SseEvent) => void;
  /** One event (its fields together) larger than this many characters is cut off and reported. */
  maxEventChars: number;
  /** Called once when an event passes the bound; the reader then ignores the rest of the body. */
  onOversize?: (chars: number) => void;
  /** A `retry:` field (the reconnection delay a server asks for, in ms). */
  onRetry?: (ms: number) => void;
  /** A comment line (`: …`), which servers send to keep an idle stream open. */
  onComment?: (comment: string) => void;
}

export function createSseReader(options: SseReaderOptions): SseReader {
  const decoder = new TextDecoder();
  let overflowed = false;
  const parser = createParser({
    onEvent: options.onEvent,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    ...(options.onComment ? { onComment: options.onComment } : {}),
    onError: (error) => {
      if (error.type !== 'max-buffer-size-exceeded' || overflowed) return;
      overflowed = true;
      options.onOversize?.(options.maxEventChars);
    },
    maxBufferSize: options.maxEventChars,
  });
  return {
    feed(chunk) {
      if (overflowed) return;
      parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    },
    end() {
      if (overflowed) return;
      const rest = decoder.decode();
      if (rest) parser.feed(rest);
      parser.reset({ consume: true });
    },
  };
}

/** One event in SSE's wire form. Data with line breaks is split across `data:` lines, as the format asks. */
export function formatSseEvent(event: { id?: string | undefined; event?: string | undefined; data: string }): string {
  const lines: string[] = [];
  if (event.id !== undefined) lines.push(`id: ${event.id}`);
  if (event.event !== undefined) lines.push(`event: ${event.event}`);
  for (const line of event.data.split(/\r\n|\r|\n/)) lines.push(`data: ${line}`);
  return `${lines.join('\n')}\n\n`;
}
