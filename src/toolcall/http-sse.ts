/**
 * An upstream SSE stream relayed event by event through the plane (the shared SSE reader,
 * bounded per event and, while an event is incomplete, against the proxy's byte budget).
 * Each event carrying a JSON-RPC message is read within the plane's bounds and goes through the
 * session; anything else (other data, comments, retry hints) is passed on as it came.
 */
import type { ServerResponse } from 'node:http';
import { isMessageObject, readJson, type JsonRpcMessage } from '../jsonrpc/message.js';
import { peekId } from '../jsonrpc/peek-id.js';
import { createSseReader, formatSseEvent, type SseEvent } from '../jsonrpc/sse.js';
import { untilDrained } from './http-reply.js';
import type { ByteBudget } from './http-upstream.js';
import type { PlaneSession } from './session.js';

/** How a relayed stream ended: normally, with the source failing (`failure`), or past a bound (`oversize`). */
export interface SseEnd {
  failure?: unknown;
  oversize?: string;
}

export interface SseDelivery {
  /** A JSON-RPC message of the event (its id and name given for the event written back). */
  message(message: JsonRpcMessage, event: SseEvent): Promise<void>;
  /** An event to pass on unread (not JSON-RPC, or beyond the plane's bounds in fail-safe mode). */
  raw(event: SseEvent): void;
  /** A comment or retry line to pass on (keep-alives). */
  line?(text: string): void;
  /** Resolves when the receiving side can take the next event (backpressure). */
  ready?(): Promise<unknown>;
}

/** Reads `source` as SSE and delivers its events in order, each delivery awaited before the next. */
export async function readSseStream(
  source: AsyncIterable<Uint8Array | string>,
  session: PlaneSession,
  budget: ByteBudget,
  deliver: SseDelivery,
): Promise<SseEnd> {
  const limits = session.plane.limits;
  const events: SseEvent[] = [];
  let oversize: string | undefined;
  const reader = createSseReader({
    onEvent: (event) => events.push(event),
    maxEventChars: limits.maxChars,
    onOversize: (chars) => (oversize = `an event of more than ${chars} characters`),
    onRetry: (ms) => deliver.line?.(`retry: ${ms}\n\n`),
    onComment: (comment) => deliver.line?.(`:${comment}\n\n`),
  });
  let held = 0; // bytes of the event being read, reserved from the budget until it completes
  const drain = async (): Promise<void> => {
    while (events.length > 0) {
      budget.release(held);
      held = 0;
      await deliverEvent(events.shift()!, session, deliver);
      await deliver.ready?.();
    }
  };
  try {
    for await (const chunk of source) {
      if (!budget.reserve(chunk.length)) {
        oversize = `an event that would take the proxy's replies held at once past ${budget.total} bytes`;
        break;
      }
      held += chunk.length;
      reader.feed(chunk);
      await drain();
      if (oversize !== undefined) break;
    }
    if (oversize === undefined) {
      reader.end();
      await drain();
    }
  } catch (error) {
    // The client or the upstream went away: the stream simply ends; the caller tells which.
    return { failure: error ?? new Error('the stream failed') };
  } finally {
    budget.release(held);
  }
  if (oversize === undefined) return {};
  session.plane.internalErrors += 1; // an event the proxy could not relay
  return { oversize };
}

async function deliverEvent(event: SseEvent, session: PlaneSession, deliver: SseDelivery): Promise<void> {
  if (event.data === '') return deliver.raw(event);
  const read = readJson(event.data, session.plane.limits);
  if (read.ok && isMessageObject(read.value)) return deliver.message(read.value, event);
  const beyond = read.ok ? undefined : session.plane.beyondBounds(event.data);
  if (beyond !== undefined) return session.serverUnreadable(peekId(event.data), beyond, () => deliver.raw(event));
  return deliver.raw(event);
}

/** Writes one JSON-RPC message as an SSE event (`id` only on the answer that replaces the upstream's event). */
export function writeMessageEvent(res: ServerResponse, message: JsonRpcMessage, id?: string, event = 'message'): void {
  if (res.writableEnded) return;
  res.write(formatSseEvent({ id, event, data: JSON.stringify(message) }));
}

export function writeRawEvent(res: ServerResponse, event: SseEvent): void {
  if (res.writableEnded) return;
  res.write(formatSseEvent({ id: event.id, event: event.event, data: event.data }));
}

/** Delivery onto a client's SSE response: answers keep the upstream event's id; notifications made here get none. */
export function toSseResponse(res: ServerResponse, session: PlaneSession): SseDelivery {
  return {
    message: (message, event) =>
      session.fromServer(message, (out) =>
        writeMessageEvent(
          res,
          out,
          out === message || out.id === message.id ? event.id : undefined,
          event.event ?? 'message',
        ),
      ),
    raw: (event) => writeRawEvent(res, event),
    line: (text) => {
      if (!res.writableEnded) res.write(text);
    },
    ready: () => untilDrained(res),
  };
}
