/**
 * What the registry and the scenario tools do with arguments beyond the schema: unknown ones are
 * refused by name, another fault type's fields are accepted and reported as ignored; and the
 * scenario tools' own checks (credentials in the url, a run its connections limited).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { fixturePath } from './helpers/repo.js';
import { UsageError } from '../src/commands/run-command.js';
import { envFlag } from '../src/commands/flag-values.js';

let app: Server;
let url: string;

before(async () => {
  app = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
});

after(async () => {
  app.closeAllConnections();
  await new Promise<void>((resolve) => app.close(() => resolve()));
});

test('an unknown argument is refused by name, listing what the tool accepts', async () => {
  const { client, close } = await connectInMemory();
  try {
    const result = (await client.callTool({
      name: 'fault_list_function_names',
      arguments: { file: fixturePath('code', 'sample.py'), fil: 'x' },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(textOf(result), /unknown argument "fil"; fault_list_function_names accepts: file/);
    const typo = (await client.callTool({
      name: 'fault_run_latency_impact_scenario',
      arguments: { url, num_client: 3 },
    })) as CallToolResult;
    assert.equal(typo.isError, true);
    assert.match(textOf(typo), /unknown argument "num_client"/);
  } finally {
    await close();
  }
});

test("another fault type's fields are accepted, ignored and reported (fault's shared parameter set)", async () => {
  const { client, close } = await connectInMemory();
  try {
    const result = (await client.callTool({
      name: 'fault_run_latency_impact_scenario',
      arguments: { url, latency: 5, duration: '500ms', rate: 0, unit: '', probability: 0 },
    })) as CallToolResult;
    assert.equal(result.isError, undefined, textOf(result));
    assert.deepEqual((result.structuredContent as { ignoredArguments: string[] }).ignoredArguments.sort(), [
      'probability',
      'rate',
      'unit',
    ]);
    assert.match(textOf(result), /Ignored arguments \(they belong to other fault types\): /);
  } finally {
    await close();
  }
});

test('credentials in the url are refused before anything uses the url', async () => {
  const { client, close } = await connectInMemory();
  try {
    const result = (await client.callTool({
      name: 'fault_run_blackhole_impact_scenario',
      arguments: { url: url.replace('http://', 'http://user:secret@') },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(textOf(result), /^url: credentials in the URL are not supported/);
    assert.doesNotMatch(textOf(result), /secret/);
  } finally {
    await close();
  }
});

test('the report says when the connections, not the fault, limited the run', async () => {
  const { client, close } = await connectInMemory();
  try {
    const result = (await client.callTool({
      name: 'fault_run_latency_impact_scenario',
      // Connections open on demand, so only a max_connections cap below what the rate needs
      // (30/s × 100 ms ≈ 3 in flight) makes requests wait.
      arguments: {
        url,
        latency: 100,
        duration: '1s',
        num_clients: 1,
        rps: 30,
        max_connections: 1,
        slos: ['errors < 50%'],
      },
    })) as CallToolResult;
    assert.equal(result.isError, undefined, textOf(result));
    const load = (
      result.structuredContent as {
        run: { load: { saturation: { waitedPercent: number; connectionsNeeded: number } | null } };
      }
    ).run.load;
    assert.ok(load.saturation, 'saturation is reported');
    assert.ok(load.saturation.connectionsNeeded >= 2, JSON.stringify(load.saturation));
    assert.match(textOf(result), /The connections were the bottleneck/);
  } finally {
    await close();
  }
});

test('yes/no environment variables: 0 and false mean no, anything unclear is an error', () => {
  for (const no of ['', '0', 'false', 'No', 'off']) assert.equal(envFlag('X', { X: no }), false, no);
  for (const yes of ['1', 'true', 'YES', 'on']) assert.equal(envFlag('X', { X: yes }), true, yes);
  assert.equal(envFlag('X', {}), false);
  assert.throws(
    () => envFlag('X', { X: 'maybe' }),
    (error: unknown) => error instanceof UsageError && /X=maybe is not a yes\/no value/.test(error.message),
  );
});
