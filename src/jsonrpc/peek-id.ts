/**
 * The `id` of a JSON-RPC message found without parsing it: one pass over the text (or its bytes,
 * chunk by chunk), tracking only nesting and strings, so a message too large or too deeply nested
 * to parse still says which request it answers. Memory stays constant whatever the message.
 *
 * Only a top-level `"id"` member counts (an "id" inside the result is not the message's); a key
 * written with escapes is not recognised, and an id longer than MAX_ID_CHARS is not kept.
 */

export type MessageId = string | number | null;

export interface IdScanner {
  /** Feeds the next piece of the message: text, or UTF-8 bytes (never both in one scan). */
  feed(chunk: string | Uint8Array): void;
  /** The top-level id seen so far (the last one, as JSON.parse keeps the last), or undefined. */
  readonly id: MessageId | undefined;
}

const MAX_ID_CHARS = 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Where the scan is among the top-level object's members. */
type Phase = 'start' | 'key' | 'key-text' | 'colon' | 'value' | 'string-value' | 'scalar' | 'after' | 'done';

export function createIdScanner(): IdScanner {
  return new TopLevelIdScanner();
}

class TopLevelIdScanner implements IdScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private phase: Phase = 'start';
  private key: number[] = [];
  private keyIsId = false;
  /** The characters (or bytes) of the id value being read. */
  private capture: number[] | undefined;
  private fromBytes = false;
  private found: MessageId | undefined;

  get id(): MessageId | undefined {
    return this.found;
  }

  feed(chunk: string | Uint8Array): void {
    if (typeof chunk !== 'string') this.fromBytes = true;
    for (let i = 0; i < chunk.length && this.phase !== 'done'; i++) {
      const code = typeof chunk === 'string' ? chunk.charCodeAt(i) : chunk[i]!;
      if (this.inString) this.stringStep(code);
      else if (this.depth > 1) this.nestedStep(code);
      else this.memberStep(code);
    }
  }

  /** Inside a string: only its end matters, and the characters of a top-level key or id. */
  private stringStep(code: number): void {
    if (this.escaped) this.escaped = false;
    else if (code === BACKSLASH) this.escaped = true;
    else if (code === QUOTE) this.inString = false;
    if (this.phase === 'key-text') {
      if (this.inString) this.key.push(code);
      else {
        this.keyIsId = this.key.length === 2 && this.key[0] === 0x69 /* i */ && this.key[1] === 0x64; /* d */
        this.phase = 'colon';
      }
    } else if (this.phase === 'string-value') {
      this.collect(code);
      if (!this.inString) {
        this.keep();
        this.phase = 'after';
      }
    }
  }

  /** Inside a member's nested value: only nesting and strings are followed. */
  private nestedStep(code: number): void {
    if (code === QUOTE) this.inString = true;
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) this.depth++;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) this.depth--;
  }

  /** At the top-level object's own level: keys, colons, values, commas. */
  private memberStep(code: number): void {
    const space = code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
    switch (this.phase) {
      case 'start':
        if (code === OPEN_BRACE) {
          this.depth = 1;
          this.phase = 'key';
        } else if (!space) this.phase = 'done'; // not an object
        return;
      case 'key':
        if (code === QUOTE) {
          this.inString = true;
          this.key = [];
          this.phase = 'key-text';
        } else if (code === CLOSE_BRACE) this.phase = 'done';
        return;
      case 'colon':
        if (code === COLON) this.phase = 'value';
        return;
      case 'value':
        return this.valueStart(code, space);
      case 'scalar':
        if (code === COMMA || code === CLOSE_BRACE || space) {
          this.keep();
          this.phase = code === COMMA ? 'key' : code === CLOSE_BRACE ? 'done' : 'after';
        } else this.collect(code);
        return;
      case 'after':
        if (code === COMMA) this.phase = 'key';
        else if (code === CLOSE_BRACE) this.phase = 'done';
        return;
      default:
        return;
    }
  }

  private valueStart(code: number, space: boolean): void {
    if (space) return;
    if (code === QUOTE) {
      this.inString = true;
      this.capture = this.keyIsId ? [code] : undefined;
      this.phase = 'string-value';
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      this.depth++;
      this.phase = 'after';
    } else {
      this.capture = this.keyIsId ? [code] : undefined;
      this.phase = 'scalar';
    }
  }

  private collect(code: number): void {
    if (this.capture && this.capture.length <= MAX_ID_CHARS) this.capture.push(code);
  }

  /** The captured id value, parsed (it is small): a string, a number or null. */
  private keep(): void {
    const capture = this.capture;
    this.capture = undefined;
    if (!capture || capture.length > MAX_ID_CHARS) return;
    const text = this.fromBytes ? Buffer.from(capture).toString('utf8') : String.fromCharCode(...capture);
    try {
      const value = JSON.parse(text) as unknown;
      if (value === null || typeof value === 'string' || typeof value === 'number') this.found = value;
    } catch {
      // not a scalar JSON value: no id
    }
  }
}

/** The top-level id of a whole message's text (see createIdScanner). */
export function peekId(text: string): MessageId | undefined {
  const scanner = createIdScanner();
  scanner.feed(text);
  return scanner.id;
}
