/**
 * An incremental HTTP/1.1 response parser: just enough to know the status, where the response
 * ends (content-length, chunked, or the connection's close) and whether the connection can be
 * reused. Bodies are skipped, never buffered. Interim 1xx responses (100 Continue, 103 Early
 * Hints) are skipped; the final response is the one reported, and so is its start (headStartedAtMs):
 * a server sends 100 Continue or 103 Early Hints before its handler has done anything, so timing
 * the first byte from them would make every response look instant.
 */

export class ResponseProtocolError extends Error {
  override readonly name = 'ResponseProtocolError';
}

/** Header blocks larger than this are refused (Node's own default limit is 16 KiB). */
const MAX_HEAD_BYTES = 64 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailers' | 'until-close' | 'done';

/** Space or tab (what String.prototype.trim would take off a header name here). */
function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

export class ResponseParser {
  status = 0;
  /** False when the server asked to close, or the response ends at the close. */
  keepAlive = true;
  private state: State = 'head';
  private head: Buffer = Buffer.alloc(0);
  private remaining = 0;
  private line = '';
  /**
   * When the first byte of the latest response head arrived (the `atMs` of the feed that carried
   * it): the final response's once its head is parsed; NaN before any byte.
   */
  headStartedAtMs = Number.NaN;

  /** @param bodyAllowed false for a HEAD request: its response never has a body. */
  constructor(private readonly bodyAllowed: boolean) {}

  get complete(): boolean {
    return this.state === 'done';
  }

  /**
   * Consumes a chunk of the connection's bytes; returns true once the response is complete.
   * Bytes after the end of the response mean the server sent something unasked for: the
   * connection is then marked not reusable. Throws ResponseProtocolError on a malformed response.
   */
  feed(chunk: Buffer, atMs = Number.NaN): boolean {
    let offset = 0;
    while (offset < chunk.length && this.state !== 'done') {
      // A head starts here: the response's own, or an interim one that the final one replaces.
      if (this.state === 'head' && this.head.length === 0) this.headStartedAtMs = atMs;
      offset = this.step(chunk, offset);
    }
    if (this.state === 'done' && offset < chunk.length) this.keepAlive = false;
    return this.state === 'done';
  }

  /** The connection closed: true when that ends the response (a close-delimited body). */
  closed(): boolean {
    if (this.state === 'until-close') this.state = 'done';
    return this.state === 'done';
  }

  private step(chunk: Buffer, offset: number): number {
    switch (this.state) {
      case 'head':
        return this.readHead(chunk, offset);
      case 'length': {
        const take = Math.min(this.remaining, chunk.length - offset);
        this.remaining -= take;
        if (this.remaining === 0) this.state = 'done';
        return offset + take;
      }
      case 'chunk-size':
      case 'chunk-crlf':
      case 'trailers':
        return this.readLine(chunk, offset);
      case 'chunk-data': {
        const take = Math.min(this.remaining, chunk.length - offset);
        this.remaining -= take;
        if (this.remaining === 0) this.state = 'chunk-crlf';
        return offset + take;
      }
      case 'until-close':
      case 'done':
        return chunk.length;
    }
  }

  private readHead(chunk: Buffer, offset: number): number {
    const previous = this.head.length;
    this.head = previous === 0 ? chunk.subarray(offset) : Buffer.concat([this.head, chunk.subarray(offset)]);
    const end = this.head.indexOf(CRLFCRLF, Math.max(0, previous - 3));
    if (end < 0) {
      if (this.head.length > MAX_HEAD_BYTES)
        throw new ResponseProtocolError(`response head over ${MAX_HEAD_BYTES} bytes`);
      // Copy: the chunk's memory belongs to the socket and may be reused.
      this.head = Buffer.from(this.head);
      return chunk.length;
    }
    const consumed = offset + (end + 4 - previous);
    this.startBody(this.head.toString('latin1', 0, end));
    this.head = Buffer.alloc(0);
    return consumed;
  }

  private startBody(head: string): void {
    // Called once per response at up to tens of thousands a second: scan the head in place,
    // and look closely only at the three headers that matter (by the length of their names).
    const statusEnd = head.indexOf('\r\n');
    const statusText = statusEnd < 0 ? head : head.slice(0, statusEnd);
    const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(statusText);
    if (!statusLine)
      throw new ResponseProtocolError(`malformed status line ${JSON.stringify(statusText.slice(0, 80))}`);
    const status = Number(statusLine[2]);
    let contentLength: number | undefined;
    let chunked = false;
    let connection = '';
    for (let start = statusEnd < 0 ? head.length : statusEnd + 2; start < head.length; ) {
      let end = head.indexOf('\r\n', start);
      if (end < 0) end = head.length;
      const colon = head.indexOf(':', start);
      if (colon <= start || colon >= end)
        throw new ResponseProtocolError(
          `malformed header line ${JSON.stringify(head.slice(start, Math.min(end, start + 80)))}`,
        );
      let nameStart = start;
      let nameEnd = colon;
      while (nameStart < nameEnd && isBlank(head.charCodeAt(nameStart))) nameStart++;
      while (nameEnd > nameStart && isBlank(head.charCodeAt(nameEnd - 1))) nameEnd--;
      const nameLength = nameEnd - nameStart;
      if (nameLength === 14 || nameLength === 17 || nameLength === 10) {
        const name = head.slice(nameStart, nameEnd).toLowerCase();
        const value = head.slice(colon + 1, end).trim();
        if (name === 'content-length') {
          if (!/^\d+$/.test(value) || (contentLength !== undefined && contentLength !== Number(value))) {
            throw new ResponseProtocolError(`invalid content-length ${JSON.stringify(value)}`);
          }
          contentLength = Number(value);
        } else if (name === 'transfer-encoding') {
          chunked = value
            .toLowerCase()
            .split(',')
            .some((coding) => coding.trim() === 'chunked');
        } else if (name === 'connection') {
          connection = value.toLowerCase();
        }
      }
      start = end + 2;
    }
    if (status >= 100 && status < 200) {
      if (status === 101) throw new ResponseProtocolError('unexpected 101 Switching Protocols');
      return; // interim response: the final one follows in state 'head'
    }
    this.status = status;
    const http10 = statusLine[1] === '0';
    this.keepAlive = http10 ? /\bkeep-alive\b/.test(connection) : !/\bclose\b/.test(connection);
    if (!this.bodyAllowed || status === 204 || status === 304) {
      this.state = 'done';
    } else if (chunked) {
      this.state = 'chunk-size';
    } else if (contentLength !== undefined) {
      this.remaining = contentLength;
      this.state = contentLength === 0 ? 'done' : 'length';
    } else {
      this.keepAlive = false;
      this.state = 'until-close';
    }
  }

  /** Reads one CRLF-terminated line (chunk size, the CRLF after data, or a trailer). */
  private readLine(chunk: Buffer, offset: number): number {
    const newline = chunk.indexOf(0x0a, offset);
    const end = newline < 0 ? chunk.length : newline;
    this.line += chunk.toString('latin1', offset, end);
    if (this.line.length > MAX_HEAD_BYTES) throw new ResponseProtocolError('chunked framing line too long');
    if (newline < 0) return chunk.length;
    const line = this.line.replace(/\r$/, '');
    this.line = '';
    if (this.state === 'chunk-size') {
      const size = /^([0-9a-fA-F]+)\s*(?:;.*)?$/.exec(line);
      if (!size) throw new ResponseProtocolError(`malformed chunk size ${JSON.stringify(line.slice(0, 40))}`);
      this.remaining = parseInt(size[1]!, 16);
      this.state = this.remaining === 0 ? 'trailers' : 'chunk-data';
    } else if (this.state === 'chunk-crlf') {
      if (line !== '') throw new ResponseProtocolError('chunk data longer than its size');
      this.state = 'chunk-size';
    } else if (line === '') {
      this.state = 'done'; // the empty line after the (usually absent) trailers
    }
    return newline + 1;
  }
}
