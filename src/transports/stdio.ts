/**
 * The stdio transport: newline-delimited JSON-RPC on stdin/stdout.
 *
 * Unlike the SDK's StdioServerTransport, a line that is not JSON is answered with a JSON-RPC
 * parse error (-32700) and one that is JSON but not a JSON-RPC message with an invalid-request
 * error (-32600), as JSON-RPC 2.0 requires; the SDK's transport only reports them locally, which
 * leaves the client waiting. The server stays up either way. A request other than ping before
 * `initialize` is refused (-32600) rather than served.
 *
 * A request whose id is already in flight is refused (-32600): the SDK would otherwise let the
 * second take over the first's cancellation, leaving the first uncancellable. When stdin closes,
 * the requests in flight are answered first (at most DRAIN_MS), then the transport closes.
 *
 * Pair it with `protectStdout()` (./stdout-guard.ts) so nothing else writes to the real stdout.
 */
import type { Readable } from 'node:stream';
import type { ProtocolOutput } from './stdout-guard.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Longest line accepted; a longer one is answered with an error and discarded. */
const MAX_LINE_BYTES = 32 * 1024 * 1024;
const TOO_LONG = `Invalid Request: message longer than ${MAX_LINE_BYTES} bytes`;
/** How many bytes at either end of an over-long line are searched for its id. */
const ID_WINDOW_BYTES = 512;
/** How long in-flight requests may run on after stdin closes. */
export const DRAIN_MS = 5_000;

export class LineJsonRpcTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
  /** While discarding a line too long to read: its last bytes, where the id may be, and whether it was answered. */
  private discardTail: Buffer = Buffer.alloc(0);
  private discardAnswered = false;
  private closed = false;
  /** Ids of the requests received and not yet answered (nor cancelled). */
  private readonly inFlight = new Set<string | number>();
  private drainTimer: NodeJS.Timeout | undefined;
  private ending = false;

  constructor(
    private readonly input: Readable,
    private readonly output: ProtocolOutput,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
    this.input.on('end', this.onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (!('method' in message) && 'id' in message && message.id !== undefined)
      this.settled(message.id as string | number);
    return new Promise((resolve) => {
      if (this.output.write(JSON.stringify(message) + '\n')) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.input.off('end', this.onEnd);
    this.input.pause();
    this.pending = [];
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let newline = data.indexOf(0x0a);
    while (newline !== -1) {
      const tail = data.subarray(0, newline);
      if (this.discarding) this.endDiscarding(tail);
      else this.handleLine(Buffer.concat([...this.pending, tail]).toString('utf8'));
      this.pending = [];
      this.pendingBytes = 0;
      data = data.subarray(newline + 1);
      newline = data.indexOf(0x0a);
    }
    if (data.length === 0) return;
    if (this.discarding) {
      this.discardTail = lastBytes([this.discardTail, data]);
      return;
    }
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes > MAX_LINE_BYTES) this.startDiscarding();
  };

  /**
   * A line past MAX_LINE_BYTES is never parsed, but its request is still answered with its own id
   * when the id can be read from the line's first or last bytes (clients write it first or last),
   * so the client does not wait out its timeout: at once when the id is at the start, else when
   * the line ends.
   */
  private startDiscarding(): void {
    const head = Buffer.concat(this.pending).subarray(0, ID_WINDOW_BYTES).toString('utf8');
    this.discardTail = lastBytes(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    this.discarding = true;
    const id = leadingIdOf(head);
    this.discardAnswered = id !== undefined;
    if (id !== undefined) this.reply(id, -32600, TOO_LONG, false);
  }

  private endDiscarding(rest: Buffer): void {
    this.discarding = false;
    if (!this.discardAnswered)
      this.reply(
        trailingIdOf(lastBytes([this.discardTail, rest]).toString('utf8').replace(/\r$/, '')) ?? null,
        -32600,
        TOO_LONG,
        false,
      );
    this.discardTail = Buffer.alloc(0);
  }

  private handleLine(raw: string): void {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.reply(null, -32700, `Parse error: ${(error as Error).message}`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.reply(idOf(value), -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response');
      return;
    }
    const message = parsed.data;
    if ('method' in message && 'id' in message) {
      // Requests other than ping wait for initialize (the MCP lifecycle); the SDK's server would
      // serve them, so a client that skipped the handshake would never learn of a version mismatch.
      if (message.method === 'initialize') this.initializeSeen = true;
      else if (!this.initializeSeen && message.method !== 'ping') {
        this.reply(message.id, -32600, `Invalid Request: ${message.method} before initialize`, false);
        return;
      }
      if (this.inFlight.has(message.id)) {
        this.reply(
          message.id,
          -32600,
          `Invalid Request: id ${JSON.stringify(message.id)} is already used by a request in flight; use a new id`,
          false,
        );
        return;
      }
      this.inFlight.add(message.id);
    } else if ('method' in message && message.method === 'notifications/cancelled') {
      // The SDK sends no answer for a cancelled request: it is no longer in flight.
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === 'string' || typeof id === 'number') queueMicrotask(() => this.settled(id));
    }
    this.onmessage?.(message);
  }

  private initializeSeen = false;

  private settled(id: string | number): void {
    if (!this.inFlight.delete(id)) return;
    if (this.ending && this.inFlight.size === 0) void this.close();
  }

  private reply(id: string | number | null, code: number, message: string, settles = true): void {
    this.onerror?.(new Error(message));
    // JSON-RPC 2.0 answers a message it cannot read with `id: null`; the SDK's type requires an id.
    const error = JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n';
    // Written directly: an answer about a duplicate id must not settle the original request.
    if (!settles) {
      if (!this.closed) this.output.write(error);
      return;
    }
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage);
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onEnd = (): void => {
    // Answer what is in flight first (bounded): a client that writes its requests and closes
    // stdin still gets every answer that comes within DRAIN_MS.
    if (this.inFlight.size === 0) {
      void this.close();
      return;
    }
    this.ending = true;
    this.drainTimer = setTimeout(() => void this.close(), DRAIN_MS);
  };
}

function idOf(value: unknown): string | number | null {
  if (value && typeof value === 'object' && 'id' in value) {
    const id = (value as { id: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') return id;
  }
  return null;
}

const ID_VALUE = String.raw`(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")`;
/** `{"id": 7, …` or `{"jsonrpc": "2.0", "id": 7, …`: the id among the first members. */
const LEADING_ID = new RegExp(
  String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*` + ID_VALUE + String.raw`\s*[,}]`,
);
/** `…, "id": 7}` as the last member: one closing brace after it, so it is the top level's. */
const TRAILING_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*` + ID_VALUE + String.raw`\s*\}\s*$`);

function leadingIdOf(head: string): string | number | undefined {
  const match = LEADING_ID.exec(head);
  return match ? (JSON.parse(match[1]!) as string | number) : undefined;
}

function trailingIdOf(tail: string): string | number | undefined {
  const match = TRAILING_ID.exec(tail);
  return match ? (JSON.parse(match[1]!) as string | number) : undefined;
}

/** The last ID_WINDOW_BYTES of the chunks, copied (the chunks themselves are let go). */
function lastBytes(chunks: readonly Buffer[]): Buffer {
  const kept: Buffer[] = [];
  let bytes = 0;
  for (let index = chunks.length - 1; index >= 0 && bytes < ID_WINDOW_BYTES; index--) {
    kept.unshift(chunks[index]!);
    bytes += chunks[index]!.length;
  }
  const joined = Buffer.concat(kept);
  return Buffer.from(joined.subarray(Math.max(0, joined.length - ID_WINDOW_BYTES)));
}
