/** Newline-delimited framing with a bound per line: whole lines, long ones streamed, writers keep lines whole. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { LineReader, LineWriter } from '../src/jsonrpc/ndjson.js';

test(
  'lines within the bound come whole (CRLF or LF, split anywhere); ' +
    'a longer one only in pieces, and framing holds after it',
  async () => {
    const input = new PassThrough();
    const events: string[] = [];
    let streamed = 0;
    const reader = new LineReader(input, {
      maxBytes: 10,
      onLine: (line) => events.push(`line ${line}`),
      oversizeStart: (held) => events.push(`start ${held}`),
      oversizeChunk: (bytes) => (streamed += bytes.length),
      oversizeEnd: (bytes) => events.push(`end ${bytes}`),
    });
    let closed = false;
    reader.on('close', () => (closed = true));
    input.write('ab');
    input.write('c\r\nsecond\n' + 'x'.repeat(6));
    input.write('y'.repeat(20) + '\nnext\n\nlast');
    input.end();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ['line abc', 'line second', 'start 6', 'end 26', 'line next', 'line last']);
    assert.equal(streamed, 26);
    assert.ok(closed);
  },
);

test('a writer streaming a long line holds other lines until it ends', () => {
  const out: string[] = [];
  const writer = new LineWriter({ write: (data: string | Uint8Array) => out.push(String(data)) > 0 });
  writer.line('a');
  writer.streamStart();
  writer.streamChunk(Buffer.from('lo'));
  writer.line('b');
  writer.streamChunk(Buffer.from('ng'));
  writer.streamEnd();
  writer.line('c');
  assert.equal(out.join(''), 'a\nlong\nb\nc\n');
});
