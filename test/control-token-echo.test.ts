/**
 * An experiment's control plane sends the token of its `token_env` to its `url`, which an agent may
 * point at any local listener: the outside trial used one that echoes the Authorization header in
 * its error, and the tool's answer carried `Bearer <FAULTLINE_ADMIN_TOKEN>` back to the agent. The
 * token never comes back in an answer. SDK client, built CLI over stdio, a real echoing listener.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, textOf } from './helpers/mcp.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

test("a control plane that echoes the request's token: the token does not reach the caller", async () => {
  const seen: Array<string | undefined> = [];
  const echo = http.createServer((request, response) => {
    seen.push(request.headers.authorization);
    request.resume();
    response.statusCode = request.url === '/chaos/status' ? 200 : 400;
    response.setHeader('content-type', 'application/json');
    const said = `you sent ${request.headers.authorization}`;
    response.end(JSON.stringify(request.url === '/chaos/status' ? { note: said, faults: [] } : { error: said }));
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  const session = await connectStdio(['mcp'], { FAULTLINE_ADMIN_TOKEN: 'admin-secret-1234', FAULTLINE_OTHER: 'x' });
  try {
    const experiment = {
      title: 'echo',
      duration: '1s',
      control: { monkey: { url } },
      method: [{ at: '0s', for: '500ms', via: 'monkey', fault: { type: 'latency', delayMs: 10, target: 'db' } }],
    };
    const result = (await session.client.callTool(
      { name: 'fault_run_experiment', arguments: { experiment } },
      undefined,
      { timeout: HANG_GUARD_MS },
    )) as CallToolResult;
    const text = textOf(result);
    assert.ok(seen.includes('Bearer admin-secret-1234'), `the plane was asked with the token: ${text.slice(0, 300)}`);
    assert.match(text, /you sent Bearer \[token\]/, 'what the plane said is still shown');
    assert.doesNotMatch(text, /admin-secret-1234/, 'the token is not in the answer');
  } finally {
    await session.close();
    await new Promise((resolve) => echo.close(resolve));
  }
});

test("token_env may not name the server's credentials for its other doors (the MCP token, Prometheus's)", async () => {
  const seen: string[] = [];
  const listener = http.createServer((request, response) => {
    seen.push(request.url ?? '');
    response.end('{}');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  const session = await connectStdio(['mcp'], {
    FAULTLINE_TOKEN: 'mcp-secret',
    FAULTLINE_PROMETHEUS_TOKEN: 'prom-secret',
  });
  try {
    for (const name of ['FAULTLINE_TOKEN', 'FAULTLINE_PROMETHEUS_TOKEN', 'FAULTLINE_PROMETHEUS_PASSWORD']) {
      const experiment = {
        title: 'other doors',
        duration: '1s',
        control: { monkey: { url, token_env: name } },
        method: [{ at: '0s', for: '500ms', via: 'monkey', fault: { type: 'latency', delayMs: 10, target: 'db' } }],
      };
      const result = (await session.client.callTool(
        { name: 'fault_run_experiment', arguments: { experiment } },
        undefined,
        { timeout: HANG_GUARD_MS },
      )) as CallToolResult;
      assert.equal(result.isError, true, name);
      assert.match(textOf(result), new RegExp(`control\\.monkey\\.token_env: ${name} is not a variable`), name);
    }
    assert.deepEqual(seen, [], 'nothing was sent');
  } finally {
    await session.close();
    await new Promise((resolve) => listener.close(resolve));
  }
});
