/**
 * The built CLI over stdio: closing stdin answers what is in
 * flight before exiting, and a duplicate in-flight request id is refused while cancellation
 * still reaches the original call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cliPath, fixturePath } from './helpers/repo.js';
import { quietFor } from './helpers/wait.js';

// The server of the first test lists code: with its listing thread, as users run it. The others
// never list code and keep the suite's default (test/helpers/isolate.ts: off, ~1 s of CPU each).

const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
};
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };

function spawnServer(listingThread: 'on' | 'off' = 'off') {
  const child = spawn(process.execPath, [cliPath, 'mcp'], {
    env: { ...process.env, FAULTLINE_LISTING_THREAD: listingThread },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: Array<Record<string, unknown>> = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) messages.push(JSON.parse(line) as Record<string, unknown>);
  });
  const send = (message: unknown): void => void child.stdin.write(JSON.stringify(message) + '\n');
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, messages, send, exited };
}

test('closing stdin answers the calls in flight before exiting', async () => {
  const server = spawnServer('on');
  server.send(INIT);
  server.send(INITIALIZED);
  const file = fixturePath('code', 'broken.py');
  for (let id = 1; id <= 5; id++)
    server.send({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'fault_list_function_names', arguments: { file } },
    });
  server.child.stdin.end();
  const code = await server.exited;
  assert.equal(code, 0);
  const answered = server.messages.filter((m) => typeof m.id === 'number' && m.id >= 1).map((m) => m.id);
  assert.deepEqual(answered.sort(), [1, 2, 3, 4, 5]);
});

test(
  'on stdio, SIGTERM exits 143 and SIGINT 130 (a signal is not a ' + 'clean end, as docs/configuration.md says)',
  async () => {
    for (const [signal, expected] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const server = spawnServer();
      server.send(INIT);
      for (let waited = 0; !server.messages.some((m) => m.id === 0); waited += 20) {
        assert.ok(waited < 30_000, 'initialize answered');
        await new Promise((r) => setTimeout(r, 20));
      }
      server.child.kill(signal);
      assert.equal(await server.exited, expected, signal);
    }
  },
);

test('a duplicate in-flight id is refused and the cancel reaches the original call', async () => {
  let hits = 0;
  const target: Server = createServer((_req, res) => {
    hits++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
  const server = spawnServer();
  try {
    server.send(INIT);
    server.send(INITIALIZED);
    const call = {
      jsonrpc: '2.0',
      id: 'dup',
      method: 'tools/call',
      params: {
        name: 'fault_run_latency_impact_scenario',
        arguments: { url, duration: '60s', num_clients: 1, rps: 20 },
      },
    };
    server.send(call);
    const deadline = Date.now() + 60_000;
    while (hits < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(hits >= 5, 'the scenario started loading');
    server.send(call);
    while (!server.messages.some((m) => m.id === 'dup') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const refusal = server.messages.find((m) => m.id === 'dup') as { error?: { code: number; message: string } };
    assert.equal(refusal?.error?.code, -32600);
    assert.match(refusal.error!.message, /already used by a request in flight/);
    server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'dup' } });
    // At 20 requests/s a load still running adds one every 50 ms: wait for 3 s without any
    // (however long a busy machine takes to act on the cancel; it has stalled a live load for over a
    // second; the 60 s run would never give 3 s without one), then 3 s more.
    await quietFor(() => hits, 3000, 60_000);
    const afterCancel = hits;
    await new Promise((r) => setTimeout(r, 3000));
    assert.ok(hits - afterCancel <= 2, `load stopped after the cancel (${hits - afterCancel} more requests)`);
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    target.closeAllConnections();
    target.close();
  }
});
