/**
 * The owner's Prometheus credentials (FAULTLINE_PROMETHEUS_TOKEN) go only to the Prometheus the
 * owner named (FAULTLINE_PROMETHEUS_URL): the outside trial had an agent's experiment give its own
 * `url` (a listener on loopback) and the listener received `Bearer <the owner's token>`. Two real
 * HTTP listeners answering as Prometheus, the SDK client against the built CLI over stdio.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, textOf } from './helpers/mcp.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

/** A listener answering every query with `up 1`, keeping the Authorization header of each request. */
async function prometheus(): Promise<{ url: string; seen: Array<string | undefined>; close(): Promise<void> }> {
  const seen: Array<string | undefined> = [];
  const server = http.createServer((request, response) => {
    seen.push(request.headers.authorization);
    request.resume();
    response.setHeader('content-type', 'application/json');
    const now = Date.now() / 1000;
    response.end(
      JSON.stringify({
        status: 'success',
        data: { resultType: 'vector', result: [{ metric: { __name__: 'up' }, value: [now, '1'] }] },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test(
  "the owner's Prometheus token goes to the owner's Prometheus " + 'only, never to a url the experiment gives',
  async () => {
    const owners = await prometheus();
    const elsewhere = await prometheus();
    // A server that fails to start must not leave the two listeners holding the file open.
    const session = await connectStdio(['mcp'], {
      FAULTLINE_PROMETHEUS_URL: owners.url,
      FAULTLINE_PROMETHEUS_TOKEN: 'owner-secret-token',
    }).catch(async (error: unknown) => {
      await owners.close();
      await elsewhere.close();
      throw error;
    });
    try {
      const run = async (entry: Record<string, unknown>) =>
        textOf(
          (await session.client.callTool(
            {
              name: 'fault_run_experiment',
              arguments: {
                experiment: { title: 'creds', duration: '2s', expect: [{ prometheus: 'up', above: 0, ...entry }] },
              },
            },
            undefined,
            { timeout: HANG_GUARD_MS },
          )) as CallToolResult,
        );
      const stolen = await run({ url: elsewhere.url, every: '500ms' });
      assert.ok(elsewhere.seen.length > 0, `the experiment's url was asked: ${stolen.slice(0, 300)}`);
      assert.deepEqual(new Set(elsewhere.seen), new Set([undefined]), 'no credentials to a url the experiment picked');
      const own = await run({ every: '500ms' });
      assert.ok(owners.seen.length > 0, `the owner's Prometheus was asked: ${own.slice(0, 300)}`);
      assert.deepEqual(new Set(owners.seen), new Set(['Bearer owner-secret-token']), "the owner's own gets them");
      const before = owners.seen.length;
      await run({ url: `${owners.url}/`, every: '500ms' });
      assert.ok(owners.seen.length > before, 'the same server spelt with a slash was asked');
      assert.deepEqual(new Set(owners.seen), new Set(['Bearer owner-secret-token']));
    } finally {
      await session.close();
      await owners.close();
      await elsewhere.close();
    }
  },
);
