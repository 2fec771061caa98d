/**
 * The client side of a TCP path when a protocol stage (HTTP, RESP, or the request gate of an
 * opaque stream) stands between the client socket and the links. It looks like a socket to the
 * connection and its links, without being a stream: the stage pushes request bytes in, and the
 * downstream link's writes go to the stage's `sink`.
 *
 *   stage.push(bytes) ──▶ ClientEnd ──'data'──▶ upstream link ──▶ target
 *   stage.sink.write  ◀── ClientEnd ◀─write()── downstream link ◀── target
 *
 * Backpressure both ways: push() returns false while the upstream link has paused this end (the
 * stage waits for 'flowing'); the sink's write returns false while the client is full (the stage
 * calls drained() when it can take more).
 */
import { EventEmitter } from 'node:events';

/** Where the downstream link's bytes go (the stage's response side). */
export interface ClientEndSink {
  write(data: Buffer): boolean;
  /** The target's end of stream, after every byte. */
  end(): void;
  /** The TCP path closed (target gone, connect failed, or the proxy stopping). */
  closed(): void;
}

export class ClientEnd extends EventEmitter {
  destroyed = false;
  private paused = true;
  private readonly queue: Buffer[] = [];
  private ended = false;
  private endEmitted = false;

  constructor(
    private readonly sink: ClientEndSink,
    /** Shown in proxy events (the real client's address). */
    readonly remoteAddress: string | undefined,
    readonly remotePort: number | undefined,
  ) {
    super();
  }

  /** Request bytes from the stage; false when the stage should wait for 'flowing'. */
  push(data: Buffer): boolean {
    if (this.destroyed || this.ended) return false;
    if (this.paused || this.queue.length > 0) this.queue.push(data);
    else this.emit('data', data);
    return !this.paused;
  }

  /** The client's end of requests (sent on after every pushed byte). */
  pushEnd(): void {
    if (this.ended) return;
    this.ended = true;
    this.flush();
  }

  /** The stage can take more downstream bytes. */
  drained(): void {
    if (!this.destroyed) this.emit('drain');
  }

  // The link's side (as its source).
  pause(): this {
    this.paused = true;
    return this;
  }

  resume(): this {
    this.paused = false;
    this.flush();
    if (!this.paused && !this.destroyed) this.emit('flowing');
    return this;
  }

  // The link's side (as its destination).
  write(data: Buffer): boolean {
    if (this.destroyed) return true;
    return this.sink.write(data);
  }

  end(): this {
    if (!this.destroyed) this.sink.end();
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.queue.length = 0;
    this.sink.closed();
    process.nextTick(() => this.emit('close', false));
    return this;
  }

  private flush(): void {
    while (!this.paused && !this.destroyed && this.queue.length > 0) this.emit('data', this.queue.shift()!);
    if (this.ended && !this.endEmitted && this.queue.length === 0 && !this.paused && !this.destroyed) {
      this.endEmitted = true;
      this.emit('end');
    }
  }
}
