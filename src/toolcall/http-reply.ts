/**
 * Writing to the HTTP proxy's clients: the upstream's head copied (the headers a client needs),
 * bodies passed through at the pace the client reads them, JSON answers and errors.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const RESPONSE_HEADERS = ['content-type', 'mcp-session-id', 'www-authenticate'];

export function copyHead(reply: IncomingMessage, res: ServerResponse): void {
  if (res.headersSent) return;
  for (const name of RESPONSE_HEADERS) {
    const value = reply.headers[name];
    if (value !== undefined) res.setHeader(name, value);
  }
  res.statusCode = reply.statusCode ?? 502;
  if (isSse(reply)) {
    res.setHeader('cache-control', 'no-cache');
    res.flushHeaders(); // the client sees the stream open before the first event
  }
}

/** Passes a body through as it comes, reading on only as fast as the client takes it. */
export async function pipeTo(reply: AsyncIterable<Buffer>, res: ServerResponse): Promise<void> {
  for await (const chunk of reply) {
    if (res.writableEnded || !(await writeChunk(res, chunk))) break;
  }
  res.end();
}

/** Writes a chunk and waits while the client's buffer is full; false when the client went away. */
export async function writeChunk(res: ServerResponse, chunk: Buffer | string): Promise<boolean> {
  if (res.write(chunk)) return true;
  return untilDrained(res);
}

/** Resolves true when `res` can take more, false when it closed first. */
export function untilDrained(res: ServerResponse): Promise<boolean> {
  if (!res.writableNeedDrain) return Promise.resolve(!res.destroyed);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

export function isSse(reply: IncomingMessage): boolean {
  return headerOf(reply, 'content-type').includes('text/event-stream');
}

export function headerOf(reply: IncomingMessage, name: string): string {
  const value = reply.headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

export function jsonError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', id: null, error: { code: -32603, message } });
}
