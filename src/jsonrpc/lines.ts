/**
 * Newline-delimited messages (MCP's stdio transport) read from a peer we do not trust, bounded per
 * line: a line longer than the bound is never held whole. Its bytes are counted and dropped as they
 * arrive, and the line is reported once it ends, with its first and last bytes (where a JSON-RPC
 * id usually is). Each byte is looked at once: no re-splitting of a growing buffer, so a long line
 * costs linear time and at most `maxLineBytes` of memory.
 */

export interface LineReaderOptions {
  /** The longest line delivered whole, in bytes (without its line break). */
  maxLineBytes: number;
  /** One line, decoded as UTF-8, without its trailing `\n` or `\r\n`. */
  onLine: (line: string) => void;
  /** A line over the bound ended (or the stream ended inside it): its size, first and last bytes. */
  onOversize: (line: OversizeLine) => void;
}

export interface OversizeLine {
  bytes: number;
  head: string;
  tail: string;
}

export interface LineReader {
  feed(chunk: Buffer): void;
  /** The stream ended: a last line without its line break is delivered too. */
  end(): void;
}

/** How much of an oversize line's beginning and end is kept to describe it. */
const EDGE_BYTES = 256;
const NEWLINE = 0x0a;

export function createLineReader(options: LineReaderOptions): LineReader {
  let parts: Buffer[] = [];
  let size = 0;
  /** Set while inside a line over the bound: what is kept of it. */
  let oversize: { bytes: number; head: Buffer; tail: Buffer } | undefined;

  const keep = (piece: Buffer): void => {
    if (piece.length === 0) return;
    if (oversize) {
      oversize.bytes += piece.length;
      oversize.tail = piece.length >= EDGE_BYTES ? Buffer.from(piece.subarray(-EDGE_BYTES)) : Buffer.concat([oversize.tail, piece]).subarray(-EDGE_BYTES);
      return;
    }
    if (size + piece.length <= options.maxLineBytes) {
      // A copy: the chunk's memory may be reused by the stream once this returns.
      parts.push(Buffer.from(piece));
      size += piece.length;
      return;
    }
    const head = Buffer.concat([...parts, piece], Math.min(EDGE_BYTES, size + piece.length)); // copies the first bytes only
    oversize = { bytes: size + piece.length, head, tail: Buffer.from(piece.subarray(-EDGE_BYTES)) };
    parts = [];
    size = 0;
  };
  const finishLine = (): void => {
    if (oversize) {
      const { bytes, head, tail } = oversize;
      oversize = undefined;
      options.onOversize({ bytes, head: head.toString('utf8'), tail: tail.toString('utf8') });
      return;
    }
    let line = Buffer.concat(parts, size).toString('utf8');
    parts = [];
    size = 0;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    options.onLine(line);
  };
  return {
    feed(chunk) {
      let start = 0;
      for (let cut = chunk.indexOf(NEWLINE, start); cut !== -1; cut = chunk.indexOf(NEWLINE, start)) {
        keep(chunk.subarray(start, cut));
        finishLine();
        start = cut + 1;
      }
      keep(chunk.subarray(start));
    },
    end() {
      if (size > 0 || oversize) finishLine();
    },
  };
}
