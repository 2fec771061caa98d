/**
 * One keep-alive HTTP/1.1 connection of the open-loop generator: it carries one request at a
 * time, (re)connects when it has no usable socket, and reports each exchange's first byte, end or
 * failure with µs-resolution timestamps (performance.now()).
 *
 * Why a raw socket and not node:http or undici: measured on this 2-core machine (closed loop,
 * 10 connections, trivial Node server in another process, 3 s runs), node:http with a keep-alive
 * Agent cost 86–125 µs of client CPU per request (8–11k req/s), undici 6.29 35–49 µs (21–28k
 * req/s), and this client 20 µs (40k req/s). On 2 cores the generator's CPU is taken from the
 * server under test, so cheaper is more accurate. Owning the socket also gives the exact moments
 * the request is written and the first response byte arrives (real TTFB), and lets an abort
 * destroy every socket and wait for it to close.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { checkServerIdentity, connect as connectTls } from 'node:tls';
import { classifySocketError, type TransportFailure } from './error-class.js';
import type { ResolvedTarget } from './options.js';
import { ResponseParser, ResponseProtocolError } from './response-parser.js';

export interface ExchangeEvents {
  /**
   * The first byte of the response arrived, `ttfbMs` after the request was written. Called again
   * when an interim 1xx response (100 Continue, 103 Early Hints) turns out to have come first: the
   * last call is the final response's first byte.
   */
  onFirstByte(ttfbMs: number): void;
  /** A socket finished connecting (TCP, and TLS when secure). */
  onConnected?(): void;
  /** A socket was opened: the first, or a new one after the last was closed or cut. */
  onSocketOpened?(): void;
  /** The response is complete. */
  onResponse(status: number, atMs: number): void;
  /** The exchange failed; the connection will reconnect for the next request. */
  onFailure(failure: TransportFailure, atMs: number): void;
}

/**
 * Where every plain connection's reads land (net's `onread`). One buffer is enough: each read is
 * handed to its connection's parser synchronously, and the parser copies what it keeps (a partial
 * response head) before returning.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

export class HttpConnection {
  /** The socket the next request goes on; null when a new one must be opened. */
  private socket: Socket | null = null;
  /** Non-null while an exchange is in progress. */
  private parser: ResponseParser | null = null;
  private writtenAtMs = 0;
  /** The start of the response head last reported through onFirstByte (NaN: none yet). */
  private reportedHeadAtMs = Number.NaN;
  /** Every socket this connection opened that has not emitted 'close' yet. */
  private readonly live = new Set<Socket>();

  constructor(
    private readonly target: ResolvedTarget,
    private readonly request: Buffer,
    private readonly events: ExchangeEvents,
  ) {}

  /** Starts an exchange; the connection must be idle. Opens a socket first when needed. */
  send(): void {
    this.parser = new ResponseParser(this.target.method !== 'HEAD');
    this.reportedHeadAtMs = Number.NaN;
    // A socket the server half-closed while idle cannot carry a request: open a fresh one.
    if (this.socket !== null && (this.socket.destroyed || !this.socket.writable)) this.drop(this.socket);
    if (this.socket === null) this.socket = this.open();
    else this.write(this.socket);
  }

  /**
   * Opens the socket ahead of the first request; resolves once it connected or could not (a
   * failure is left to the first request, which opens a socket again).
   */
  preconnect(): Promise<void> {
    if (this.socket !== null) return Promise.resolve();
    const socket = (this.socket = this.open());
    return new Promise((resolve) => {
      const done = (): void => {
        socket.off(this.target.secure ? 'secureConnect' : 'connect', done);
        socket.off('close', done);
        resolve();
      };
      socket.once(this.target.secure ? 'secureConnect' : 'connect', done);
      socket.once('close', done);
    });
  }

  /** Gives up on the exchange in progress (a timeout): its socket cannot be reused. */
  abandon(): void {
    this.parser = null;
    if (this.socket !== null) this.drop(this.socket);
  }

  /** Destroys every socket and resolves once each has closed. */
  async close(): Promise<void> {
    this.parser = null;
    this.socket = null;
    await Promise.all(
      [...this.live].map(
        (socket) =>
          new Promise<void>((resolve) => {
            socket.once('close', () => resolve());
            socket.destroy();
          }),
      ),
    );
  }

  private open(): Socket {
    const { target } = this;
    const socket: Socket = target.secure
      ? connectTls({
          host: target.connectHost,
          port: target.connectPort,
          servername: target.servername,
          rejectUnauthorized: target.rejectUnauthorized,
          ca: target.ca,
          ALPNProtocols: ['http/1.1'],
          // The certificate must name the URL's host, not connectTo's (e.g. a proxy's 127.0.0.1).
          checkServerIdentity: (_host, cert) => checkServerIdentity(target.hostname, cert),
          ...(target.lookup ? { lookup: target.lookup } : {}),
        })
      : connectTcp({
          host: target.connectHost,
          port: target.connectPort,
          ...(target.lookup ? { lookup: target.lookup } : {}),
          // Reads land in one buffer shared by every plain connection, handed over synchronously:
          // no allocation per read and no trip through the Readable stream ('data' events).
          onread: {
            buffer: READ_BUFFER,
            callback: (length: number): boolean => {
              this.onData(socket, READ_BUFFER.subarray(0, length));
              return true; // keep reading
            },
          },
        });
    socket.setNoDelay(true);
    this.live.add(socket);
    this.events.onSocketOpened?.();
    socket.once(target.secure ? 'secureConnect' : 'connect', () => {
      this.events.onConnected?.();
      if (socket === this.socket && this.parser !== null) this.write(socket);
    });
    if (target.secure) socket.on('data', (chunk: Buffer) => this.onData(socket, chunk));
    socket.on('error', (error: Error) => this.onError(socket, error));
    socket.on('close', () => {
      this.live.delete(socket);
      this.onClose(socket);
    });
    return socket;
  }

  private write(socket: Socket): void {
    this.writtenAtMs = performance.now();
    socket.write(this.request);
  }

  private drop(socket: Socket): void {
    if (socket === this.socket) this.socket = null;
    socket.destroy();
  }

  private onData(socket: Socket, chunk: Buffer): void {
    const parser = this.parser;
    if (socket !== this.socket || parser === null) {
      this.drop(socket); // bytes nobody asked for: the connection's framing can't be trusted
      return;
    }
    const now = performance.now();
    let complete: boolean;
    try {
      complete = parser.feed(chunk, now);
    } catch (error) {
      if (!(error instanceof ResponseProtocolError)) throw error;
      this.reportFirstByte(parser);
      this.fail(socket, { errorClass: 'other', detail: error.message }, now);
      return;
    }
    this.reportFirstByte(parser);
    if (!complete) return;
    this.parser = null;
    if (!parser.keepAlive) this.drop(socket);
    this.events.onResponse(parser.status, now);
  }

  /** Reports the start of the latest response head once (a later, final head reports again). */
  private reportFirstByte(parser: ResponseParser): void {
    const startedAt = parser.headStartedAtMs;
    if (Number.isNaN(startedAt) || startedAt === this.reportedHeadAtMs) return;
    this.reportedHeadAtMs = startedAt;
    this.events.onFirstByte(startedAt - this.writtenAtMs);
  }

  private onError(socket: Socket, error: Error): void {
    if (socket === this.socket && this.parser !== null)
      this.fail(socket, classifySocketError(error), performance.now());
    else if (socket === this.socket) this.socket = null;
  }

  private onClose(socket: Socket): void {
    if (socket !== this.socket) return;
    this.socket = null;
    const parser = this.parser;
    if (parser === null) return; // an idle keep-alive socket closed by the server
    this.parser = null;
    const now = performance.now();
    if (parser.closed()) this.events.onResponse(parser.status, now);
    else
      this.events.onFailure({ errorClass: 'reset', detail: 'connection closed before the response was complete' }, now);
  }

  private fail(socket: Socket, failure: TransportFailure, atMs: number): void {
    this.parser = null;
    this.drop(socket);
    this.events.onFailure(failure, atMs);
  }
}
