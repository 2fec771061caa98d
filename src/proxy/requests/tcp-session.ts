/**
 * A connection of a protocol-aware mapping that speaks neither HTTP/1.1 nor RESP (TLS, a database,
 * HTTP/2): the request faults act on its messages. A message starts when the connection opens and
 * when the client sends after the server spoke; a delay counts from each chunk's arrival, order kept.
 *
 *   latency            the message reaches the target `delay` ms late
 *   timeout            the message and what follows never reach the target; closed after `hang`
 *   connection_refused the connection is reset, nothing forwarded
 *   connection_drop    after_bytes of the answer reach the client, then the connection closes;
 *                      with after_ms, it closes that long after the message, the answer withheld
 *
 * The opening's message is drawn before anything is dialled, so a refusal or a hang drawn for it
 * never reaches the remote (a refused SYN costs the server nothing, as a real refusal). Otherwise
 * the TCP path opens at once, or after the drawn latency (a server may speak first), and network
 * faults act as on any mapping; a later message resets or hangs a connection already open.
 */
import type net from 'node:net';
import type { ClientEnd, ClientEndSink } from '../client-end.js';
import type { RequestFaultList } from './fault-list.js';
import { sessionForwarder, type Forwarder } from './forwarder.js';
import { SessionTimers } from './timers.js';

export interface TcpSessionOptions {
  socket: net.Socket;
  index: number;
  faults: RequestFaultList;
  clock(): number;
  openUpstream(sink: ClientEndSink): ClientEnd | undefined;
}

export class TcpSession implements ClientEndSink {
  private readonly socket: net.Socket;
  private readonly forwarder: Forwarder;
  /** The server sent bytes since the client last did: the client's next bytes start a message. */
  private serverSpoke = false;
  private delay = 0;
  private hung = false;
  private withheld = false;
  private cutAfter: number | undefined;
  private serverEnded = false;
  private readonly timers = new SessionTimers();
  private done = false;

  constructor(private readonly options: TcpSessionOptions) {
    this.socket = options.socket;
    this.forwarder = sessionForwarder(this.socket, options, this, () => !this.hung);
  }

  start(): void {
    this.socket.on('data', (chunk: Buffer) => this.onClientData(chunk));
    this.socket.on('end', () => this.forwarder.finish());
    this.socket.on('error', () => this.socket.destroy());
    this.socket.on('drain', () => this.forwarder.upstream?.drained());
    this.socket.once('close', () => this.finish());
    // The first message is drawn now, before anything is dialled; the client's first bytes continue it.
    this.startMessage();
    if (this.done || this.hung) return;
    if (this.delay > 0) this.timers.later(this.delay, () => this.open());
    else if (!this.open()) return;
    this.socket.resume();
  }

  /** Opens the TCP path (the proxy stopping closes the client instead). */
  private open(): boolean {
    if (this.done || this.forwarder.openOnce()) return true;
    this.socket.destroy();
    return false;
  }

  private onClientData(chunk: Buffer): void {
    if (this.done || this.hung) return;
    const arrival = this.options.clock();
    if (this.serverSpoke) {
      this.serverSpoke = false;
      this.startMessage();
      if (this.done || this.hung) return;
    }
    this.forwarder.send(chunk, arrival + this.delay);
  }

  private startMessage(): void {
    this.delay = 0;
    for (const { spec } of this.options.faults.draw(this.options.index, 'tcp', '', '')) {
      switch (spec.type) {
        case 'latency':
          this.delay += spec.delay;
          break;
        case 'timeout':
          this.hung = true;
          this.socket.pause();
          if (spec.hang !== undefined) this.timers.later(spec.hang, () => this.socket.destroy());
          return;
        case 'connection_refused':
          this.done = true;
          this.socket.resetAndDestroy();
          return;
        case 'connection_drop':
          if (spec.after_ms !== undefined) {
            this.withheld = true;
            this.timers.later(spec.after_ms, () => this.socket.destroy());
          } else this.cutAfter ??= spec.after_bytes;
          break;
        default:
          break; // not expressible on an opaque stream: refused when set on such a mapping
      }
    }
  }

  write(data: Buffer): boolean {
    this.serverSpoke = true;
    if (this.withheld || this.done) return true;
    if (this.cutAfter === undefined) return this.socket.write(data);
    const part = data.subarray(0, this.cutAfter);
    this.cutAfter -= part.length;
    if (part.length > 0) this.socket.write(part);
    if (this.cutAfter === 0) {
      this.done = true;
      this.socket.end(() => this.socket.destroy());
    }
    return true;
  }

  end(): void {
    this.serverEnded = true;
    if (!this.done) this.socket.end();
  }

  closed(): void {
    closeAfterServer(this.socket, this.serverEnded);
  }

  private finish(): void {
    this.done = true;
    this.timers.clear();
    this.forwarder.close();
  }
}

/**
 * The TCP path behind a session closed: after a clean end from the server the client gets what
 * was written, then the close; otherwise it is cut off at once, as by a real drop.
 */
export function closeAfterServer(socket: net.Socket, serverEnded: boolean): void {
  if (!serverEnded) socket.destroy();
  else if (socket.writableFinished) socket.destroy();
  else socket.once('finish', () => socket.destroy());
}
