/**
 * Newline-delimited JSON-RPC (MCP's stdio framing), read and written with a bound per line.
 *
 * LineSplitter (fed chunk by chunk) and LineReader (a splitter on a stream) hand each line within
 * `maxBytes` over whole. A longer line is never held: once it
 * passes the bound, its bytes are handed on in pieces as they arrive (oversizeStart, oversizeChunk,
 * oversizeEnd), so the caller can pass it through or drop it while memory stays at one chunk.
 * Bytes are split at `\n` before decoding (UTF-8 never has a 0x0A byte inside a character), so a
 * long line costs one pass, not a re-scan per chunk; a `\r` before the `\n` is dropped.
 * describeOversize turns the pieces of a long line into its size, head and tail (the probe's
 * finding), for a caller that only reports it.
 *
 * LineWriter writes whole lines, and keeps them whole while a long line is being streamed through
 * in pieces: lines written meanwhile wait and follow it. It says when its output is full, so the
 * side feeding it can pause until it drains (a slow reader never makes the proxy hold a stream).
 */
import { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';

export interface LineReaderOptions {
  maxBytes: number;
  onLine(line: string): void;
  /** A line passed maxBytes: what follows until its end comes through oversizeChunk. */
  oversizeStart(heldBytes: number): void;
  oversizeChunk(bytes: Buffer): void;
  /** The long line ended; `bytes` is its whole length. */
  oversizeEnd(bytes: number): void;
}

/**
 * Splits bytes into lines within the bound: fed chunk by chunk (by LineReader from a stream, or by
 * a caller that counts the bytes first). Each byte is looked at once.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;
  private oversize = false;
  private oversizeBytes = 0;

  constructor(private readonly options: LineReaderOptions) {}

  feed(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      this.take(chunk.subarray(start, newline < 0 ? chunk.length : newline));
      if (newline < 0) return;
      this.endLine();
      start = newline + 1;
    }
  }

  /** The input ended: a last line without its line break is delivered too. */
  end(): void {
    this.endLine();
  }

  /** Drops what is held of an unfinished line. */
  reset(): void {
    this.parts = [];
    this.held = 0;
    this.oversize = false;
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.oversize) {
      this.oversizeBytes += piece.length;
      this.options.oversizeChunk(piece);
      return;
    }
    if (this.held + piece.length <= this.options.maxBytes) {
      // A copy: a stream may reuse a chunk's memory once its handler returns.
      this.parts.push(Buffer.from(piece));
      this.held += piece.length;
      return;
    }
    this.oversize = true;
    this.oversizeBytes = this.held + piece.length;
    this.options.oversizeStart(this.held);
    for (const part of this.parts) this.options.oversizeChunk(part);
    this.parts = [];
    this.held = 0;
    this.options.oversizeChunk(piece);
  }

  private endLine(): void {
    if (this.oversize) {
      this.oversize = false;
      this.options.oversizeEnd(this.oversizeBytes);
      return;
    }
    if (this.held === 0) return;
    let line = Buffer.concat(this.parts, this.held).toString('utf8');
    this.parts = [];
    this.held = 0;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    this.options.onLine(line);
  }
}

/** A line over the bound, described by its size and its first and last bytes (where an id usually is). */
export interface OversizeLine {
  bytes: number;
  head: string;
  tail: string;
}

/** How much of an oversize line's beginning and end is kept to describe it. */
const EDGE_BYTES = 256;

/** The oversize callbacks of a reader that only describes a long line once it ends (never holding it). */
export function describeOversize(
  onOversize: (line: OversizeLine) => void,
): Pick<LineReaderOptions, 'oversizeStart' | 'oversizeChunk' | 'oversizeEnd'> {
  let head = Buffer.alloc(0);
  let tail = Buffer.alloc(0);
  return {
    oversizeStart: () => {
      head = Buffer.alloc(0);
      tail = Buffer.alloc(0);
    },
    oversizeChunk: (bytes) => {
      if (head.length < EDGE_BYTES) head = Buffer.concat([head, bytes.subarray(0, EDGE_BYTES - head.length)]);
      tail =
        bytes.length >= EDGE_BYTES
          ? Buffer.from(bytes.subarray(-EDGE_BYTES))
          : Buffer.concat([tail, bytes]).subarray(-EDGE_BYTES);
    },
    oversizeEnd: (bytes) => onOversize({ bytes, head: head.toString('utf8'), tail: tail.toString('utf8') }),
  };
}

/** A LineSplitter on a stream. Emits 'close' once, when the input ends or close() is called (as readline's interface
 * does). */
export class LineReader extends EventEmitter {
  private readonly splitter: LineSplitter;
  private closed = false;
  private readonly onData = (chunk: Buffer | string): void => {
    if (!this.closed) this.splitter.feed(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };
  private readonly onEnd = (): void => {
    if (!this.closed) this.splitter.end();
    this.close();
  };

  constructor(
    private readonly input: Readable,
    options: LineReaderOptions,
  ) {
    super();
    this.splitter = new LineSplitter(options);
    input.on('data', this.onData);
    input.once('end', this.onEnd);
    input.once('close', this.onEnd);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.input.pause(); // as readline does: a flowing stdin would keep the process alive
    this.splitter.reset();
    this.emit('close');
  }
}

export class LineWriter {
  private streaming = false;
  private waiting: string[] = [];
  private full = false;
  private drainWaiters: Array<() => void> = [];

  constructor(private readonly output: Pick<Writable, 'write'> & Partial<Pick<Writable, 'once'>>) {}

  /** The output said it is full (a write returned false) and has not drained since. */
  get isFull(): boolean {
    return this.full;
  }

  /** Calls `then` once the output has room again (at once when it has). */
  whenDrained(then: () => void): void {
    if (!this.full) return then();
    this.drainWaiters.push(then);
    if (this.drainWaiters.length > 1) return;
    if (typeof this.output.once !== 'function') return this.drained();
    this.output.once('drain', () => this.drained());
  }

  /** Writes one line (the newline added). */
  line(text: string): void {
    if (this.streaming) this.waiting.push(text);
    else this.write(text + '\n');
  }

  /** Starts a line written in pieces; other lines wait until streamEnd. */
  streamStart(): void {
    this.streaming = true;
  }

  streamChunk(bytes: Buffer): void {
    this.write(bytes);
  }

  streamEnd(): void {
    this.write('\n');
    this.streaming = false;
    const waiting = this.waiting;
    this.waiting = [];
    for (const text of waiting) this.write(text + '\n');
  }

  private write(data: string | Buffer): void {
    if (this.output.write(data) === false) this.full = true;
  }

  private drained(): void {
    this.full = false;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const then of waiters) then();
  }
}
