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
 * Framing, id peeking and parsing are the wire layer's (src/jsonrpc/): lines split within
 * MAX_LINE_BYTES (ndjson.ts), a longer line answered with the top-level id found by scanning it
 * as it passes (peek-id.ts: constant memory, never parsed), and every line parsed with the size
 * and depth bounds every other reader uses (message.ts).
 *
 * Pair it with `protectStdout()` (./stdout-guard.ts) so nothing else writes to the real stdout.
 */
import type { Readable } from 'node:stream';
import type { ProtocolOutput } from './stdout-guard.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineSplitter } from '../jsonrpc/ndjson.js';
import { createIdScanner, peekId, type IdScanner } from '../jsonrpc/peek-id.js';
import { DEFAULT_MAX_JSON_DEPTH, readJson } from '../jsonrpc/message.js';

/** Longest line accepted; a longer one is answered with an error and discarded. */
const MAX_LINE_BYTES = 32 * 1024 * 1024;
const TOO_LONG = `Invalid Request: message longer than ${MAX_LINE_BYTES} bytes`;
/** How long in-flight requests may run on after stdin closes. */
export const DRAIN_MS = 5_000;

export class LineJsonRpcTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly lines = new LineSplitter({
    maxBytes: MAX_LINE_BYTES,
    onLine: (line) => this.handleLine(line),
    oversizeStart: () => this.startDiscarding(),
    oversizeChunk: (bytes) => this.scanDiscarded(bytes),
    oversizeEnd: () => this.endDiscarding(),
  });
  /** While discarding a line too long to read: its top-level id as scanned so far, and whether it was answered. */
  private discardScanner: IdScanner | undefined;
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
    this.lines.reset();
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.lines.feed(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };

  /**
   * A line past MAX_LINE_BYTES is never parsed, but its request is still answered with its own id
   * when the line has a top-level one, so the client does not wait out its timeout: as soon as the
   * scan passes the id (at once when clients write it first), else when the line ends.
   */
  private startDiscarding(): void {
    this.discardScanner = createIdScanner();
    this.discardAnswered = false;
  }

  private scanDiscarded(bytes: Buffer): void {
    const scanner = this.discardScanner;
    if (!scanner || this.discardAnswered) return;
    scanner.feed(bytes);
    const id = scanner.id;
    // Only an id that is complete answers early: a scalar is kept once its value ended.
    if (typeof id === 'string' || typeof id === 'number') {
      this.discardAnswered = true;
      this.reply(id, -32600, TOO_LONG, false);
    }
  }

  private endDiscarding(): void {
    if (!this.discardAnswered) {
      this.discardScanner?.feed('\n'); // ends a number written last, as the line break does
      const id = this.discardScanner?.id;
      this.reply(typeof id === 'string' || typeof id === 'number' ? id : null, -32600, TOO_LONG, false);
    }
    this.discardScanner = undefined;
  }

  private handleLine(line: string): void {
    if (line.trim() === '') return;
    const read = readJson(line, { maxChars: MAX_LINE_BYTES, maxDepth: DEFAULT_MAX_JSON_DEPTH });
    if (!read.ok) {
      // Not JSON has no id to answer (JSON-RPC's id null); too deep to parse is JSON whose id can be peeked.
      const syntax = read.reason === 'syntax';
      const id = syntax ? undefined : peekId(line);
      const answerTo = typeof id === 'string' || typeof id === 'number' ? id : null;
      this.reply(answerTo, syntax ? -32700 : -32600, `${syntax ? 'Parse error' : 'Invalid Request'}: ${read.problem}`);
      return;
    }
    const value = read.value;
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
