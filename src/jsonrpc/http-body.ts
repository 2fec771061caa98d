/**
 * The one bounded way an HTTP door faultline serves reads a request body, and turns it into an
 * object (size and nesting checked before JSON.parse, by message.ts's readJson).
 *
 * A body over the bound is not read further: the answer (413) carries `Connection: close` and the
 * connection ends after it, since the rest of that body would otherwise be read as the next
 * request (or, unread, leave the next request on the socket unanswered).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_MAX_JSON_DEPTH, readJson } from './message.js';

export type BodyReading = { ok: true; bytes: Buffer } | { ok: false; status: 413; problem: string };

export type JsonBodyReading = { ok: true; value: unknown } | { ok: false; status: 400 | 413; problem: string };

/**
 * The request's body, at most `maxBytes`. Past that, `res` is marked `Connection: close` and the
 * reading is a 413 for the caller to answer (with its own body shape).
 */
export async function readBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<BodyReading> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      res.setHeader('connection', 'close');
      return { ok: false, status: 413, problem: `Request body over ${maxBytes} bytes` };
    }
    chunks.push(chunk);
  }
  return { ok: true, bytes: Buffer.concat(chunks, size) };
}

/**
 * The request's body as JSON, within `maxBytes` and `maxDepth` levels of nesting (default
 * DEFAULT_MAX_JSON_DEPTH). An empty body reads as `empty` when given, else as a parse error.
 */
export async function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  limits: { maxBytes: number; maxDepth?: number; empty?: unknown },
): Promise<JsonBodyReading> {
  const body = await readBody(req, res, limits.maxBytes);
  if (!body.ok) return body;
  const text = body.bytes.toString('utf8');
  if (limits.empty !== undefined && text.trim() === '') return { ok: true, value: limits.empty };
  const read = readJson(text, { maxChars: limits.maxBytes, maxDepth: limits.maxDepth ?? DEFAULT_MAX_JSON_DEPTH });
  return read.ok ? read : { ok: false, status: 400, problem: read.problem };
}
