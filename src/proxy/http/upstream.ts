/**
 * One client connection's upstream leg on an HTTP mapping: requests are written as bytes straight
 * into the mapping's TCP path (so TLS origination and the network faults act on it, as on any
 * mapping) and responses read back with ResponseParser, one exchange at a time.
 *
 *   exchange ─▶ head + body bytes ─▶ ClientEnd ─▶ upstream link ─▶ target
 *   exchange ◀─ head, body slices  ◀─ parser ◀─ downstream link ◀─ target
 *
 * The TCP path opens on the first request and again after the upstream closed or said it would
 * (Connection: close, a body read until close): a fault that answers by itself never opens one.
 */
import type http from 'node:http';
import type { ClientEnd, ClientEndSink } from '../client-end.js';
import { HttpParseError, ResponseParser, type ResponseHead } from './response-parser.js';

export interface ExchangeHandlers {
  head(head: ResponseHead): void;
  /** A slice of the body; false asks the upstream to wait for drained(). */
  body(chunk: Buffer): boolean;
  end(): void;
  /** The upstream could not be reached, closed, or sent something that is not HTTP. */
  fail(error: Error): void;
}

interface Exchange {
  method: string;
  head: Buffer;
  req: http.IncomingMessage;
  framing: 'none' | 'raw' | 'chunked';
  handlers: ExchangeHandlers;
  /**
   * While the request's head or body is still being sent: stops sending it (next()). An upstream that answered
   * before the whole request was sent (a 401 or 413 before the body, a 408) has a connection whose framing is
   * broken: the rest of this body must never go on it, read as the next request's bytes.
   */
  abandon?: () => void;
}

export class HttpUpstream implements ClientEndSink {
  private path: ClientEnd | undefined;
  private readonly parser: ResponseParser;
  private current: Exchange | undefined;
  private readonly queue: Exchange[] = [];
  /** The upstream said it closes after the current response. */
  private closing = false;
  private full = false;

  constructor(private readonly open: (sink: ClientEndSink) => ClientEnd | undefined) {
    this.parser = new ResponseParser({
      head: (head) => {
        if (!head.keepAlive) this.closing = true;
        this.current?.handlers.head(head);
      },
      body: (chunk) => {
        if (this.current && !this.current.handlers.body(chunk)) this.full = true;
      },
      end: () => this.exchangeDone(),
    });
  }

  /**
   * Sends a request: `head` is its request line and headers; its body is read from `req`
   * (re-chunked when it came chunked). Requests wait for the one before to be answered.
   */
  request(
    method: string,
    head: Buffer,
    req: http.IncomingMessage,
    framing: Exchange['framing'],
    handlers: ExchangeHandlers,
  ): void {
    this.queue.push({ method, head, req, framing, handlers });
    if (!this.current) this.next();
  }

  /** The client can take more of the body. */
  drained(): void {
    if (!this.full) return;
    this.full = false;
    this.path?.drained();
  }

  /** Drops the upstream leg (the client left). */
  close(): void {
    this.queue.length = 0;
    this.current = undefined;
    this.drop();
  }

  /** Lets the TCP path go (its close then reports nothing: it is no longer ours). */
  private drop(): void {
    const path = this.path;
    this.path = undefined;
    path?.destroy();
  }

  private next(): void {
    const exchange = this.queue.shift();
    this.current = exchange;
    if (!exchange) return;
    if (!this.path || this.path.destroyed) {
      this.closing = false;
      this.path = this.open(this);
      if (!this.path) return this.fail(new Error('the proxy is stopping'));
    }
    const end = this.path;
    this.parser.expect(exchange.method);
    if (exchange.framing === 'none') {
      end.push(exchange.head);
      return;
    }
    // The head waits for the body's first bytes, which node:http hands over on the next tick when
    // they came in the same read: then a small request goes upstream in one write, not two (each
    // write is a syscall, and the upstream reads twice). A body not there by that tick (a slow
    // client, Expect: 100-continue) leaves the head to go on alone at once, as before.
    let head: Buffer | undefined = exchange.head;
    const { req } = exchange;
    const send = (bytes: Buffer): boolean => {
      if (head && bytes.length > JOIN_BODY_BYTES)
        end.push(head); // a copy would cost more than the write
      else if (head) bytes = Buffer.concat([head, bytes]);
      head = undefined;
      return end.push(bytes);
    };
    const onData = (chunk: Buffer): void => {
      const framed =
        exchange.framing === 'chunked'
          ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, CRLF])
          : chunk;
      if (!send(framed)) {
        req.pause();
        end.once('flowing', () => req.resume());
      }
    };
    const onEnd = (): void => {
      req.off('data', onData);
      if (exchange.framing === 'chunked' && !end.destroyed) send(LAST_CHUNK);
      exchange.abandon = undefined;
    };
    req.on('data', onData);
    req.once('end', onEnd);
    exchange.abandon = () => {
      exchange.abandon = undefined;
      head = undefined;
      req.off('data', onData);
      req.off('end', onEnd);
      req.resume(); // node:http discards the rest for the client's connection
    };
    // Queued after the tick on which req.on('data') lets the body flow, so a body already read goes first.
    process.nextTick(() => {
      if (head) send(EMPTY);
    });
  }

  private exchangeDone(): void {
    const done = this.current;
    this.current = undefined;
    // A response whose last write filled the client never says 'drain' once ended: the link must
    // not stay paused for the next exchange (whose own writes apply backpressure again).
    this.drained();
    if (done?.abandon) {
      // Answered before its request was all sent: the rest goes nowhere, and the connection neither.
      done.abandon();
      this.closing = true;
    }
    if (this.closing) this.drop();
    done?.handlers.end();
    this.next();
  }

  private fail(error: Error): void {
    const failed = [...(this.current ? [this.current] : []), ...this.queue.splice(0)];
    this.current?.abandon?.();
    this.current = undefined;
    for (const exchange of failed) exchange.handlers.fail(error);
  }

  // ── the TCP path's sink ─────────────────────────────────────────────────────────────────

  write(data: Buffer): boolean {
    try {
      this.parser.feed(data);
    } catch (error) {
      if (!(error instanceof HttpParseError)) throw error;
      this.drop();
      this.fail(error);
      return true;
    }
    return !this.full;
  }

  end(): void {
    const ended = this.path;
    try {
      this.parser.finish();
    } catch (error) {
      if (error instanceof HttpParseError) this.fail(error);
    }
    // The upstream closed its side (e.g. its keep-alive timeout between requests): the next
    // request needs a new connection, never this half-closed one.
    if (this.path === ended) this.drop();
  }

  closed(): void {
    if (!this.path) return;
    this.path = undefined;
    if (this.current || this.queue.length > 0) this.fail(new Error('the upstream closed the connection'));
  }
}

const CRLF = Buffer.from('\r\n');
const EMPTY = Buffer.alloc(0);
/** Body bytes up to which the first ones are joined to the head in one write. */
const JOIN_BODY_BYTES = 16 * 1024;
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

/** The request line and headers as bytes (one line per value of a repeated header). */
export function requestHead(method: string, url: string, headers: http.OutgoingHttpHeaders): Buffer {
  let text = `${method} ${url} HTTP/1.1\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) text += `${name}: ${item}\r\n`;
    else text += `${name}: ${value}\r\n`;
  }
  return Buffer.from(`${text}\r\n`, 'latin1');
}
