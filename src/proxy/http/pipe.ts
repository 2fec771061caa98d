/**
 * An in-memory socket pair: what one end writes, the other reads, with backpressure. The HTTP
 * stage's upstream client talks through one end while the other end is handed to the proxy's
 * TCP path as if it were a client connection, so an HTTP mapping's upstream traffic goes through
 * the same connect code (TLS origination, lookup policy) and the same network-fault links as a
 * plain mapping, without a loopback hop.
 */
import { Duplex } from 'node:stream';

export class PipeEnd extends Duplex {
  peer!: PipeEnd;
  /** Shown in proxy events in place of a socket address (copied from the real client). */
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  private blockedWrite: (() => void) | undefined;

  constructor() {
    super({ allowHalfOpen: true });
  }

  override _read(): void {
    const resume = this.peer.blockedWrite;
    this.peer.blockedWrite = undefined;
    resume?.();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.peer.destroyed) return callback();
    if (this.peer.push(chunk)) callback();
    else this.blockedWrite = () => callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.peer.destroyed) this.peer.push(null);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const blocked = this.blockedWrite;
    this.blockedWrite = undefined;
    blocked?.();
    if (!this.peer.destroyed) this.peer.destroy();
    callback(error);
  }

  // The socket methods node:http's client and agent call; meaningless in memory.
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  setTimeout(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

export function pipePair(): [PipeEnd, PipeEnd] {
  const a = new PipeEnd();
  const b = new PipeEnd();
  a.peer = b;
  b.peer = a;
  return [a, b];
}
