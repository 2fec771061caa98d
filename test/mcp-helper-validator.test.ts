/**
 * The test clients' shared output-schema validator (test/helpers/mcp.ts): it compiles a schema
 * once per process, and a result that breaks its tool's outputSchema still fails the call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { testSchemaValidator } from './helpers/mcp.js';

const schema = () => ({
  type: 'object' as const,
  properties: { count: { type: 'integer' } },
  required: ['count'],
});

test('the shared validator compiles an equal schema once and still refuses what breaks it', () => {
  const first = testSchemaValidator.getValidator(schema());
  assert.equal(testSchemaValidator.getValidator(schema()), first, 'an equal schema was compiled again');
  assert.notEqual(testSchemaValidator.getValidator({ ...schema(), required: [] }), first);
  assert.deepEqual(first({ count: 3 }), { valid: true, data: { count: 3 }, errorMessage: undefined });
  const refused = first({ count: 'three' });
  assert.equal(refused.valid, false);
  assert.match(refused.errorMessage ?? '', /count/);
});

test("a client with the shared validator refuses a result that breaks its tool's outputSchema", async () => {
  // A low-level server: McpServer would refuse the bad result itself, before the client sees it.
  const server = new Server({ name: 'bad-output', version: '0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: 'count', inputSchema: { type: 'object' }, outputSchema: schema() }],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: 'text', text: 'x' }],
    structuredContent: { count: request.params.arguments?.good ? 1 : 'one' },
  }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 't', version: '0' }, { jsonSchemaValidator: testSchemaValidator });
  await client.connect(clientSide);
  try {
    await client.listTools();
    const good = await client.callTool({ name: 'count', arguments: { good: true } });
    assert.deepEqual(good.structuredContent, { count: 1 });
    await assert.rejects(client.callTool({ name: 'count', arguments: {} }), /does not match|count/);
  } finally {
    await client.close();
    await server.close();
  }
});
