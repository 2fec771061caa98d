/**
 * The stdio transport: newline-delimited JSON-RPC on stdin/stdout.
 *
 * Unlike the SDK's StdioServerTransport, a line that is not JSON is answered with a JSON-RPC
 * parse error (-32700) and one that is JSON but not a JSON-RPC message with an invalid-request
 * error (-32600), as JSON-RPC 2.0 requires; the SDK's transport only reports them locally, which
 * leaves the client waiting. The server stays up either way. A request other than ping before
 * `initialize` is refused (-32600) rather than served.
 *
 * Pair it with `protectStdout()` (./stdout-guard.ts) so nothing else writes to the real stdout.
 */
import type { Readable } from 'node:stream';
import type { ProtocolOutput } from './stdout-guard.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Longest line accepted; a longer one is answered with an error and discarded. */
const MAX_LINE_BYTES = 32 * 1024 * 1024;

export class LineJsonRpcTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
  private closed = false;

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
    return new Promise((resolve) => {
      if (this.output.write(JSON.stringify(message) + '\n')) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
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
      if (this.discarding) this.discarding = false;
      else this.handleLine(Buffer.concat([...this.pending, tail]).toString('utf8'));
      this.pending = [];
      this.pendingBytes = 0;
      data = data.subarray(newline + 1);
      newline = data.indexOf(0x0a);
    }
    if (data.length === 0 || this.discarding) return;
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.pending = [];
      this.pendingBytes = 0;
      this.discarding = true;
      this.reply(null, -32600, `Invalid Request: message longer than ${MAX_LINE_BYTES} bytes`);
    }
  };

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
    // Requests other than ping wait for initialize (the MCP lifecycle); the SDK's server would
    // serve them, so a client that skipped the handshake would never learn of a version mismatch.
    const message = parsed.data as { method?: unknown; id?: unknown };
    if (message.method === 'initialize') this.initializeSeen = true;
    else if (!this.initializeSeen && typeof message.method === 'string' && message.id !== undefined && message.method !== 'ping') {
      this.reply(idOf(value), -32600, `Invalid Request: ${message.method} before initialize`);
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private initializeSeen = false;

  private reply(id: string | number | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    // JSON-RPC 2.0 answers a message it cannot read with `id: null`; the SDK's type requires an id.
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage);
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onEnd = (): void => {
    void this.close();
  };
}

function idOf(value: unknown): string | number | null {
  if (value && typeof value === 'object' && 'id' in value) {
    const id = (value as { id: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') return id;
  }
  return null;
}
