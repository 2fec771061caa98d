/**
 * The HTTP proxy's side towards the upstream MCP endpoint: requests over keep-alive connections,
 * the upstream's health kept in the plane (a refused connection is the upstream's failure, not the
 * proxy's), and reply bodies read within bounds — per message, and in total across every reply
 * held at once (a ByteBudget shared by the proxy), so many large replies cannot add up.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ToolPlane } from './session.js';

/** Bytes held at once by one proxy, shared by every reply it reads. */
export class ByteBudget {
  private held = 0;

  constructor(readonly total: number) {}

  reserve(bytes: number): boolean {
    if (this.held + bytes > this.total) return false;
    this.held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

export class Upstream {
  readonly url: URL;
  private readonly agent: HttpAgent;
  /** Requests whose connection failed: the upstream's failure, not the proxy's own. */
  private readonly failures = new WeakSet<object>();

  constructor(
    url: string,
    private readonly plane: ToolPlane,
    private readonly lookup: LookupFunction,
  ) {
    this.url = new URL(url);
    this.agent =
      this.url.protocol === 'https:'
        ? new HttpsAgent({ keepAlive: true, maxSockets: 256 })
        : new HttpAgent({ keepAlive: true, maxSockets: 256 });
  }

  /**
   * One request upstream. An answer (any status) says the upstream is there — it ends an outage,
   * and the `toolCalls` tool calls it carried reached it; a connection failure is the upstream's.
   */
  async send(
    method: string,
    headers: Record<string, string>,
    body: string | Buffer | undefined,
    signal: AbortSignal,
    toolCalls = 0,
  ): Promise<IncomingMessage> {
    try {
      const reply = await this.request(method, headers, body, signal);
      this.plane.upstreamReached(toolCalls);
      return reply;
    } catch (error) {
      if (typeof error === 'object' && error !== null && !signal.aborted) this.failures.add(error);
      throw error;
    }
  }

  /** Whether `error` came from a connection to the upstream that failed (refused, reset). */
  failed(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.failures.has(error);
  }

  destroy(): void {
    this.agent.destroy();
  }

  /**
   * node:http(s), not fetch: fetch cuts a body idle for 5 minutes (a GET stream may idle far
   * longer) and costs more per call.
   */
  private request(
    method: string,
    headers: Record<string, string>,
    body: string | Buffer | undefined,
    signal: AbortSignal,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
      const request = send(this.url, { method, headers, signal, agent: this.agent, lookup: this.lookup }, resolve);
      request.once('error', reject);
      request.end(body);
    });
  }
}

/** A reply body read whole, or (`complete: false`) the part read before a bound stopped the reading. */
export type BoundedBody =
  | { complete: true; body: Buffer }
  | { complete: false; head: Buffer[]; rest: AsyncIterator<Buffer>; problem: string };

/**
 * Reads a body of at most `maxBytes`, each chunk reserved from `budget` while held. Past either
 * bound it stops and hands back what it read and the rest of the stream, unread: the caller
 * passes it through or drops it. The reservation is released when this returns.
 */
export async function readBounded(
  stream: AsyncIterable<Buffer>,
  maxBytes: number,
  budget: ByteBudget,
): Promise<BoundedBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  const rest = stream[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await rest.next();
      if (next.done) return { complete: true, body: Buffer.concat(chunks, size) };
      const chunk = next.value;
      const problem =
        size + chunk.length > maxBytes
          ? `a reply of more than ${maxBytes} bytes`
          : !budget.reserve(chunk.length)
            ? `a reply that would take the proxy's replies held at once past ${budget.total} bytes`
            : undefined;
      if (problem !== undefined) return { complete: false, head: [...chunks, chunk], rest, problem };
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    budget.release(size);
  }
}
