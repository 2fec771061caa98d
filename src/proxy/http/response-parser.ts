/**
 * Reads HTTP/1.x responses from the upstream byte stream, for the HTTP stage that writes requests
 * straight into the TCP path (no node:http client in between): the head, then the body as slices
 * of what arrived, framed the way RFC 9112 §6.3 says.
 *
 *   HEAD request, 1xx, 204, 304  no body (an interim 1xx is skipped: the proxy answers Expect itself)
 *   Transfer-Encoding … chunked  chunked (decoded; trailers dropped), the connection closes after
 *                                when Content-Length came too
 *   Content-Length               that many bytes (every copy must agree, digits only)
 *   neither                      until the upstream closes
 *
 * Strict where a lax reading would let an upstream desynchronise the stream: bad status lines,
 * header names, lengths or chunk sizes, and obsolete line folding are errors (HttpParseError);
 * the head is bounded.
 */

/** The largest response head accepted (node's default --max-http-header-size is 16 KiB; some upstreams send more). */
export const MAX_RESPONSE_HEAD = 64 * 1024;

export class HttpParseError extends Error {}

export interface ResponseHead {
  status: number;
  statusMessage: string;
  /** Name, value, name, value… as received. */
  rawHeaders: string[];
  /** The upstream connection can carry the next request after this response. */
  keepAlive: boolean;
}

export interface ResponseEvents {
  head(head: ResponseHead): void;
  body(chunk: Buffer): void;
  end(): void;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: (.*))?$/;
const DIGITS = /^\d{1,15}$/;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** Where the line starting at `at` ends (its CRLF, or the text's end). */
function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\r\n', at);
  return end === -1 ? text.length : end;
}

/** Whether the comma-separated `list` (already lower-cased) holds `token`. */
function listHas(list: string, token: string): boolean {
  for (let at = 0; at < list.length; ) {
    let end = list.indexOf(',', at);
    if (end === -1) end = list.length;
    if (list.slice(at, end).trim() === token) return true;
    at = end + 1;
  }
  return false;
}

export class ResponseParser {
  private state: 'idle' | 'head' | 'sized' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'until-close' =
    'idle';
  private headBytes: Buffer[] = [];
  private headLength = 0;
  private left = 0;
  private line = '';
  private headOnly = false;

  constructor(private readonly events: ResponseEvents) {}

  /** A request was sent: its response comes next (`method` decides whether it has a body). */
  expect(method: string): void {
    this.state = 'head';
    this.headOnly = method === 'HEAD';
    this.headBytes = [];
    this.headLength = 0;
  }

  feed(data: Buffer): void {
    let at = 0;
    while (at < data.length) {
      switch (this.state) {
        case 'idle':
          throw new HttpParseError('the upstream sent bytes no request asked for');
        case 'head':
          at = this.readHead(data, at);
          break;
        case 'sized':
        case 'chunk-data': {
          const take = Math.min(this.left, data.length - at);
          this.events.body(data.subarray(at, at + take));
          this.left -= take;
          at += take;
          if (this.left === 0) {
            if (this.state === 'sized') this.finishMessage();
            else this.state = 'chunk-end';
          }
          break;
        }
        case 'until-close':
          this.events.body(at === 0 ? data : data.subarray(at));
          return;
        default:
          at = this.readChunkLine(data, at);
      }
    }
  }

  /** The upstream closed: ends a body read until close; an error mid-message. */
  finish(): void {
    if (this.state === 'until-close') this.finishMessage();
    else if (this.state !== 'idle') throw new HttpParseError('the upstream closed mid-response');
  }

  private readHead(data: Buffer, at: number): number {
    if (this.headLength === 0) {
      // The usual case, a whole head in one chunk: read it where it lies, nothing copied or held.
      const blank = data.indexOf(HEAD_END, at);
      if (blank !== -1 && blank - at <= MAX_RESPONSE_HEAD) {
        this.onHead(data.toString('latin1', at, blank));
        return blank + 4;
      }
    }
    const part = data.subarray(at);
    // The blank line may straddle chunks: look for it across the last three bytes held too.
    const held = this.headLength;
    this.headBytes.push(part);
    this.headLength += part.length;
    const whole = this.headBytes.length === 1 ? part : Buffer.concat(this.headBytes, this.headLength);
    const blank = whole.indexOf(HEAD_END, Math.max(0, held - 3));
    if (blank === -1) {
      if (this.headLength > MAX_RESPONSE_HEAD)
        throw new HttpParseError(`a response head above ${MAX_RESPONSE_HEAD} bytes`);
      this.headBytes = [whole];
      return data.length;
    }
    if (blank > MAX_RESPONSE_HEAD) throw new HttpParseError(`a response head above ${MAX_RESPONSE_HEAD} bytes`);
    this.headBytes = [];
    this.headLength = 0;
    this.onHead(whole.toString('latin1', 0, blank));
    return at + (blank + 4 - held);
  }

  /** Reads the head's lines where they lie in `text` (no split: this runs once per response, on the hot path). */
  private onHead(text: string): void {
    const firstEnd = lineEnd(text, 0);
    const statusLine = text.slice(0, firstEnd);
    const status = STATUS_LINE.exec(statusLine);
    if (!status) throw new HttpParseError(`not an HTTP/1.x status line: ${JSON.stringify(statusLine.slice(0, 40))}`);
    const code = Number(status[2]);
    const rawHeaders: string[] = [];
    const lengths: string[] = [];
    let codings = '';
    let connection = '';
    for (let at = firstEnd + 2; at < text.length; ) {
      const end = lineEnd(text, at);
      const colon = text.indexOf(':', at);
      const name = colon > at && colon < end ? text.slice(at, colon) : '';
      if (!TOKEN.test(name))
        throw new HttpParseError(`a bad response header line: ${JSON.stringify(text.slice(at, end).slice(0, 40))}`);
      const value = text.slice(colon + 1, end).trim();
      at = end + 2;
      rawHeaders.push(name, value);
      // Only the three framing headers matter here: tell them by length before lower-casing.
      const length = name.length;
      if (length !== 14 && length !== 17 && length !== 10) continue;
      const lower = name.toLowerCase();
      if (lower === 'content-length') {
        if (DIGITS.test(value)) lengths.push(value);
        else for (const v of value.split(',')) lengths.push(v.trim());
      } else if (lower === 'transfer-encoding') codings += `${codings ? ',' : ''}${value.toLowerCase()}`;
      else if (lower === 'connection') connection += `,${value.toLowerCase()}`;
    }
    if (code < 200) {
      // 100 Continue, 103 Early Hints: interim, the real response follows. 101 is not asked for here.
      if (code === 101) throw new HttpParseError('101 Switching Protocols to a request that did not ask to upgrade');
      return;
    }
    const http10 = status[1] === '0';
    let keepAlive = http10 ? listHas(connection, 'keep-alive') : !listHas(connection, 'close');
    if (this.headOnly || code === 204 || code === 304) {
      this.emitHead(code, status[3] ?? '', rawHeaders, keepAlive);
      return this.finishMessage();
    }
    if (codings) {
      const last = codings
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean)
        .at(-1);
      if (last === 'chunked') {
        // Both framings at once: the chunked one wins, and the connection cannot be trusted after.
        if (lengths.length > 0) keepAlive = false;
        this.emitHead(code, status[3] ?? '', rawHeaders, keepAlive);
        this.state = 'chunk-size';
        return;
      }
      this.emitHead(code, status[3] ?? '', rawHeaders, false);
      this.state = 'until-close';
      return;
    }
    if (lengths.length > 0) {
      if (!lengths.every((value) => DIGITS.test(value) && value === lengths[0]))
        throw new HttpParseError(`a bad content-length: ${JSON.stringify(lengths.join(', '))}`);
      this.emitHead(code, status[3] ?? '', rawHeaders, keepAlive);
      this.left = Number(lengths[0]);
      if (this.left === 0) this.finishMessage();
      else this.state = 'sized';
      return;
    }
    this.emitHead(code, status[3] ?? '', rawHeaders, false);
    this.state = 'until-close';
  }

  private emitHead(status: number, statusMessage: string, rawHeaders: string[], keepAlive: boolean): void {
    this.events.head({ status, statusMessage, rawHeaders, keepAlive });
  }

  /** A chunk-size line, the CRLF after a chunk's data, or a trailer line. */
  private readChunkLine(data: Buffer, at: number): number {
    const newline = data.indexOf(0x0a, at);
    this.line += data.toString('latin1', at, newline === -1 ? data.length : newline);
    if (this.line.length > 4096) throw new HttpParseError('a chunk line above 4096 bytes');
    if (newline === -1) return data.length;
    if (!this.line.endsWith('\r')) throw new HttpParseError('a chunk line not ended by CRLF');
    const line = this.line.slice(0, -1);
    this.line = '';
    if (this.state === 'chunk-end') {
      if (line !== '') throw new HttpParseError('chunk data longer than its size');
      this.state = 'chunk-size';
    } else if (this.state === 'chunk-size') {
      const size = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/.exec(line);
      if (!size) throw new HttpParseError(`a bad chunk size: ${JSON.stringify(line.slice(0, 20))}`);
      this.left = parseInt(size[1]!, 16);
      this.state = this.left === 0 ? 'trailers' : 'chunk-data';
    } else if (line === '') this.finishMessage();
    return newline + 1;
  }

  private finishMessage(): void {
    this.state = 'idle';
    this.events.end();
  }
}
