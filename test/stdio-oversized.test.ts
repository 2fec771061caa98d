/**
 * The stdio transport and a message past its line bound: the line is never parsed, yet the
 * request is answered with its own id (read from the line's first or last bytes) so the client
 * does not wait out its timeout, and the lines after it are read as usual.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineJsonRpcTransport } from '../src/transports/stdio.js';

const LIMIT = 32 * 1024 * 1024;

async function feed(
  lines: ReadonlyArray<(write: (text: string) => void) => void>,
): Promise<{ answers: Array<{ id: unknown; error?: { code: number; message: string } }>; received: JSONRPCMessage[] }> {
  const input = new PassThrough();
  const written: string[] = [];
  const output = { write: (data: string) => (written.push(data), true), once: () => undefined };
  const transport = new LineJsonRpcTransport(input, output);
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => received.push(message);
  await transport.start();
  const ended = once(input, 'end');
  const write = (text: string) => void input.write(text);
  for (const line of lines) line(write);
  input.end();
  await ended;
  await transport.close();
  return {
    answers: written
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: unknown }),
    received,
  };
}

/** One line of `before` + LIMIT+1 bytes of a string value + `after`, written in 1 MiB chunks. */
const oversized = (before: string, after: string) => (write: (text: string) => void) => {
  write(before);
  const chunk = 'a'.repeat(1024 * 1024);
  for (let sent = 0; sent <= LIMIT; sent += chunk.length) write(chunk);
  write(after + '\n');
};

const initialize = (write: (text: string) => void) =>
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }) + '\n',
  );
const ping = (write: (text: string) => void) =>
  write(JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }) + '\n');

describe('stdio: a message longer than the line bound', () => {
  test('is answered with the id it carries last (as the SDK writes it), and the next line is read', async () => {
    const { answers, received } = await feed([
      initialize,
      oversized('{"method":"tools/call","params":{"name":"x","arguments":{"text":"', '"}},"jsonrpc":"2.0","id":41}'),
      ping,
    ]);
    assert.deepEqual(
      answers.map((answer) => [answer.id, answer.error?.code]),
      [[41, -32600]],
    );
    assert.match(answers[0]!.error!.message, /message longer than 33554432 bytes/);
    assert.deepEqual(
      received.map((message) => ('id' in message ? message.id : undefined)),
      [0, 99],
    );
  });

  test('is answered with the id it carries first, and once', async () => {
    const { answers } = await feed([
      initialize,
      oversized('{"jsonrpc": "2.0", "id": "call-7", "method": "tools/call", "params": {"text": "', '"}}'),
    ]);
    assert.deepEqual(
      answers.map((answer) => [answer.id, answer.error?.code]),
      [['call-7', -32600]],
    );
  });

  test("an id only inside params is not taken for the request's: the answer has id null", async () => {
    const { answers } = await feed([
      initialize,
      oversized('{"jsonrpc":"2.0","method":"tools/call","params":{"text":"', '","id":5}}'),
    ]);
    assert.deepEqual(
      answers.map((answer) => [answer.id, answer.error?.code]),
      [[null, -32600]],
    );
  });
});

describe('stdio: the wire layer bounds every line (src/jsonrpc)', () => {
  test(
    'JSON nested past the depth bound is never parsed, answered with ' + 'its id; a garbled line with id null',
    async () => {
      const deep = `{"jsonrpc":"2.0","id":"deep-1","method":"tools/call","params":${'['.repeat(600)}${']'.repeat(600)}}`;
      const { answers, received } = await feed([
        initialize,
        (write) => write(`${deep}\n`),
        (write) => write('{not json\n'),
        ping,
      ]);
      assert.deepEqual(
        answers.map((answer) => [answer.id, answer.error?.code]),
        [
          ['deep-1', -32600],
          [null, -32700],
        ],
      );
      assert.match(answers[0]!.error!.message, /^Invalid Request: JSON nested deeper than 512 levels/);
      assert.match(answers[1]!.error!.message, /^Parse error: invalid JSON/);
      assert.deepEqual(
        received.map((message) => ('id' in message ? message.id : undefined)),
        [0, 99],
      );
    },
  );
});
