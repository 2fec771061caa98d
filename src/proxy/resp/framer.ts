/**
 * Where each Redis (RESP) value ends in a byte stream, without decoding or buffering it: the RESP
 * stage forwards bytes as they come and only needs the boundaries (and a command's first words).
 *
 *   commands: *2\r\n$3\r\nGET\r\n$1\r\nk\r\n   or inline: GET k\r\n
 *   replies:  RESP2 (+ - : $ *) and RESP3 (_ , # ! = ( % ~ > |); a push (>) is out of band, and
 *             an attribute (|) belongs to the reply after it
 *
 * Parsing is incremental: a value may span any number of chunks and a chunk hold many values;
 * state is a stack of the element counts still due in each open aggregate. Lines (type headers,
 * simple strings, inline commands) are bounded; anything that is not RESP throws RespError, and
 * the stage then passes the rest of the connection through untouched.
 *
 * Not handled (RespError): RESP3 streamed strings and aggregates (`$?`, `*?`), which Redis does
 * not send.
 */

/** The longest line accepted (Redis's own inline limit is 64 KiB). */
export const MAX_RESP_LINE = 64 * 1024;
/** The longest aggregate or bulk length accepted (Redis's proto-max-bulk-len default is 512 MB). */
const MAX_LENGTH = 2 ** 32;
/** Words kept of a command (its name and first argument, enough for CLIENT REPLY), and their length. */
const WORDS_KEPT = 2;
const WORD_BYTES = 64;

export class RespError extends Error {}

export interface RespValueEnd {
  /** Offset in the chunk just after the value's last byte. */
  end: number;
  /** A RESP3 push (out-of-band data, not the reply to a command). */
  push: boolean;
  /** Commands: the first words, the name upper-cased (e.g. ["CLIENT", "REPLY"]). */
  words: string[];
}

const LINE_TYPES = new Set(['+', '-', ':', ',', '#', '_', '(']);
const BULK_TYPES = new Set(['$', '!', '=']);
const AGGREGATE_TYPES = new Set(['*', '>', '~', '%', '|']);

export class RespFramer {
  /** Elements still due in each open aggregate, innermost last. */
  private readonly stack: number[] = [];
  private state: 'type' | 'line' | 'bulk' | 'inline' = 'type';
  private type = '';
  private line = '';
  private bulkLeft = 0;
  private words: string[] = [];
  private push = false;
  /** Index of the element being read inside the top-level array (commands: which word it is). */
  private element = -1;
  private word: string | undefined;

  constructor(private readonly side: 'commands' | 'replies') {}

  /** Whether part of a value has been read and its end has not. */
  get inValue(): boolean {
    return this.state !== 'type' || this.stack.length > 0;
  }

  /** The first words of the command being read, as far as read. */
  get wordsSoFar(): readonly string[] {
    return this.words;
  }

  /** Whether the value being read is a RESP3 push. */
  get inPush(): boolean {
    return this.push;
  }

  /** Reads `chunk`, calling `onEnd` for each top-level value that ends in it, in order. */
  feed(chunk: Buffer, onEnd: (value: RespValueEnd) => void): void {
    let at = 0;
    while (at < chunk.length) {
      switch (this.state) {
        case 'type':
          at = this.readType(chunk, at);
          break;
        case 'line':
        case 'inline': {
          const newline = chunk.indexOf(0x0a, at);
          const stop = newline === -1 ? chunk.length : newline;
          this.line += chunk.toString('latin1', at, stop);
          if (this.line.length > MAX_RESP_LINE) throw new RespError(`a RESP line longer than ${MAX_RESP_LINE} bytes`);
          if (newline === -1) return;
          at = newline + 1;
          const text = this.line.endsWith('\r') ? this.line.slice(0, -1) : this.line;
          this.line = '';
          if (this.state === 'inline') {
            this.state = 'type';
            const words = text.trim().split(/\s+/).filter(Boolean);
            if (words.length === 0) break; // an empty line between inline commands is allowed
            this.words = words.slice(0, WORDS_KEPT).map((w, i) => (i === 0 ? w.toUpperCase() : w));
            this.finishTop(at, onEnd);
          } else if (this.endLine(text)) this.valueDone(at, onEnd);
          break;
        }
        case 'bulk': {
          const take = Math.min(this.bulkLeft, chunk.length - at);
          if (this.word !== undefined && this.word.length < WORD_BYTES)
            this.word += chunk.toString('latin1', at, at + Math.min(take, WORD_BYTES));
          this.bulkLeft -= take;
          at += take;
          if (this.bulkLeft === 0) {
            this.state = 'type';
            if (this.word !== undefined) {
              // The payload's own CRLF was read with it; keep only the payload.
              this.words.push(
                this.words.length === 0
                  ? this.word.replace(/\r?\n?$/, '').toUpperCase()
                  : this.word.replace(/\r?\n?$/, ''),
              );
              this.word = undefined;
            }
            this.valueDone(at, onEnd);
          }
          break;
        }
      }
    }
  }

  private readType(chunk: Buffer, at: number): number {
    const type = String.fromCharCode(chunk[at]!);
    if (this.stack.length === 0) {
      this.words = [];
      this.push = type === '>';
      this.element = -1;
      if (this.side === 'commands' && type !== '*') {
        this.state = 'inline';
        return at; // the line starts with this byte
      }
    } else if (this.stack.length === 1) this.element++;
    if (!LINE_TYPES.has(type) && !BULK_TYPES.has(type) && !AGGREGATE_TYPES.has(type))
      throw new RespError(`not RESP: unexpected byte 0x${chunk[at]!.toString(16)}`);
    this.type = type;
    this.state = 'line';
    return at + 1;
  }

  /** Handles a type's line; true when the value is complete with it. */
  private endLine(text: string): boolean {
    this.state = 'type';
    if (LINE_TYPES.has(this.type)) return true;
    if (!/^-?\d+$/.test(text)) throw new RespError(`not RESP: bad length ${JSON.stringify(text.slice(0, 20))}`);
    const length = Number(text);
    if (length > MAX_LENGTH) throw new RespError(`a RESP length of ${length}`);
    if (length < 0) {
      if (length !== -1) throw new RespError(`a RESP length of ${length}`);
      return true; // null bulk string or array
    }
    if (BULK_TYPES.has(this.type)) {
      this.state = 'bulk';
      this.bulkLeft = length + 2;
      const keepsWord = this.side === 'commands' && this.stack.length === 1 && this.element < WORDS_KEPT;
      this.word = keepsWord ? '' : undefined;
      return false;
    }
    if (this.side === 'commands' && this.stack.length > 0) throw new RespError('not a command: nested aggregates');
    const count = this.type === '%' || this.type === '|' ? length * 2 : length;
    if (count === 0) return true;
    this.stack.push(this.type === '|' ? -count : count);
    return false;
  }

  /** A value just ended at `at`: closes the aggregates it completes, and reports a top-level one. */
  private valueDone(at: number, onEnd: (value: RespValueEnd) => void): void {
    while (this.stack.length > 0) {
      const top = this.stack.length - 1;
      const left = this.stack[top]!;
      // An attribute's count is kept negative: its end is not the end of a value.
      const remaining = left < 0 ? left + 1 : left - 1;
      if (remaining !== 0) {
        this.stack[top] = remaining;
        return;
      }
      this.stack.pop();
      if (left < 0) return; // the attribute is over; the value it annotates follows
    }
    this.finishTop(at, onEnd);
  }

  private finishTop(at: number, onEnd: (value: RespValueEnd) => void): void {
    onEnd({ end: at, push: this.push, words: this.words });
  }
}
