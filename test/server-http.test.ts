/**
 * The built CLI over streamable HTTP: the SDK client with the bearer token lists tools and calls
 * one; requests without the token are refused (401); a foreign Origin or Host is refused (403), and an
 * Origin on another port too. Without --token a token is generated and printed once (--no-token: none);
 * SIGTERM and SIGINT exit 143 and 130.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixturePath } from './helpers/repo.js';
import { testSchemaValidator, textOf } from './helpers/mcp.js';
import { HANG_GUARD_MS, quietFor } from './helpers/wait.js';
import { startCliProcess, type RunningCli } from './helpers/processes.js';

// The shared server lists code: with its listing thread, as users run it. The servers of the token
// and signal tests never list code and keep the suite's default (test/helpers/isolate.ts: off, ~1 s
// of CPU saved per server).

const TOKEN = 'test-token-4f7a';
let server: RunningCli;
let url: URL;

before(async () => {
  server = startCliProcess(['mcp', '--transport', 'http', '--port', '0', '--token', TOKEN], {
    FAULTLINE_LISTING_THREAD: 'on',
  });
  url = new URL((await server.waitFor(/listening on (http:\/\/\S+)/))[1]!);
});

after(async () => {
  await server?.stop();
});

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

function post(headers: Record<string, string>, path = url.pathname, body = INITIALIZE): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('the SDK client with the token lists tools and calls one', async () => {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  });
  const client = new Client({ name: 'http-test', version: '0' }, { jsonSchemaValidator: testSchemaValidator });
  await client.connect(transport, { timeout: HANG_GUARD_MS });
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'fault_list_function_names'));
    const result = await client.callTool({
      name: 'fault_list_function_names',
      arguments: { file: fixturePath('code', 'sample.py') },
    });
    assert.equal(result.isError, undefined, textOf(result));
    assert.ok(Array.isArray(JSON.parse(textOf(result))));
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }
});

test('a request without the token, or with a wrong one, is refused with 401', async () => {
  const missing = await post({});
  assert.equal(missing.status, 401);
  assert.match(String(missing.headers['www-authenticate']), /Bearer/);
  const wrong = await post({ authorization: 'Bearer not-the-token' });
  assert.equal(wrong.status, 401);
});

test('a foreign Origin or Host is refused with 403 (DNS rebinding)', async () => {
  const auth = { authorization: `Bearer ${TOKEN}` };
  assert.equal((await post({ ...auth, origin: 'https://evil.example' })).status, 403);
  assert.equal((await post({ ...auth, host: `evil.example:${url.port}` })).status, 403);
  const local = await post({ ...auth, origin: `http://localhost:${url.port}` });
  assert.equal(local.status, 200, local.body);
  // Another port on loopback is another site (a dev server's page), not this server.
  const otherPort = Number(url.port) === 3000 ? 3001 : 3000;
  for (const origin of [`http://localhost:${otherPort}`, 'http://localhost', 'https://127.0.0.1'])
    assert.equal((await post({ ...auth, origin })).status, 403, origin);
});

/** Starts `faultline mcp --transport http` with `args`; its URL, its stderr so far, and a stop by signal giving the
 * exit code. A start that fails kills the server (startCliProcess's waitFor), leaving nothing running. */
async function startServer(args: string[], env: NodeJS.ProcessEnv = {}) {
  const server = startCliProcess(['mcp', '--transport', 'http', '--port', '0', ...args], {
    FAULTLINE_TOKEN: undefined,
    ...env,
  });
  // The listening line, the targets line and the token line are written together, before any request is served.
  const listening = await server.waitFor(/listening on (http:\/\/\S+)\ntargets allowed/);
  return { url: new URL(listening[1]!), stderr: server.stderr, stop: server.stop };
}

async function initializeStatus(at: URL, headers: Record<string, string>): Promise<number> {
  const response = await fetch(at, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: INITIALIZE,
  });
  await response.body?.cancel();
  return response.status;
}

test('with no token flag a token is generated and printed once; SIGTERM exits 143, SIGINT 130', async () => {
  const server = await startServer([]);
  let stopped = false;
  try {
    const printed = /token \(generated[^)]*\): (\S+)\n/.exec(server.stderr());
    assert.ok(printed, server.stderr());
    assert.equal(server.stderr().split(printed[1]!).length, 2, 'the token is printed once');
    assert.equal(await initializeStatus(server.url, {}), 401);
    assert.equal(await initializeStatus(server.url, { authorization: `Bearer ${printed[1]}` }), 200);
    stopped = true;
    assert.equal(await server.stop('SIGTERM'), 143);
  } finally {
    if (!stopped) await server.stop('SIGKILL');
  }
  const interrupted = await startServer(['--no-token']);
  assert.doesNotMatch(interrupted.stderr(), /token \(generated/);
  assert.equal(await initializeStatus(interrupted.url, {}), 200, '--no-token serves without one');
  assert.equal(await interrupted.stop('SIGINT'), 130);
});

test('FAULTLINE_TOKEN chooses the token: nothing generated, nothing printed', async () => {
  const server = await startServer([], { FAULTLINE_TOKEN: 'from-env-7' });
  try {
    assert.doesNotMatch(server.stderr(), /generated|from-env-7/);
    assert.equal(await initializeStatus(server.url, {}), 401);
    assert.equal(await initializeStatus(server.url, { authorization: 'Bearer from-env-7' }), 200);
  } finally {
    await server.stop('SIGTERM');
  }
});

test('other paths are 404 and unreadable bodies are JSON-RPC parse errors', async () => {
  const auth = { authorization: `Bearer ${TOKEN}` };
  assert.equal((await post(auth, '/elsewhere')).status, 404);
  const garbled = await post(auth, url.pathname, '{not json');
  assert.equal(garbled.status, 400);
  assert.equal((JSON.parse(garbled.body) as { error: { code: number } }).error.code, -32700);
  const noSession = await post(auth, url.pathname, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
  assert.equal(noSession.status, 400);
});

// Sessions past the cap (which one makes room, 503 when all are active) are http-sessions.test.ts's,
// with an injected clock.

test('a client that goes away mid-call cancels the call: a scenario stops loading the endpoint', async () => {
  let hits = 0;
  const app = createHttpServer((_req, res) => {
    hits++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
  try {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const init = await post(auth);
    const session = String(init.headers['mcp-session-id']);
    await post(
      { ...auth, 'mcp-session-id': session },
      url.pathname,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    );
    const call = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: {
        ...auth,
        'mcp-session-id': session,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
    });
    call.on('error', () => undefined);
    call.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'fault_run_latency_impact_scenario',
          arguments: { url: appUrl, duration: '20s', latency: 1, num_clients: 2, rps: 10 },
        },
      }),
    );
    for (let waited = 0; hits < 10; waited += 50) {
      assert.ok(waited < 60_000, `the scenario never loaded the endpoint (${hits} requests)`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    call.destroy();
    // At 20 requests/s a run that went on adds one every 50 ms: the cancellation has landed once 3 s
    // pass without one (a busy machine has stalled a live run for over a second; the 20 s run never
    // gives 3 s without a request), and nothing comes in the 3 s after that.
    await quietFor(() => hits, 3000, HANG_GUARD_MS);
    const afterCancel = hits;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.ok(hits - afterCancel <= 1, `the load went on after the client left: ${hits - afterCancel} more requests`);
  } finally {
    app.closeAllConnections();
    await new Promise<void>((resolve) => app.close(() => resolve()));
  }
});
