/**
 * Every tool's published name, title, description, annotations and schemas: a snapshot (a schema
 * change is a visible diff; regenerate with UPDATE_SNAPSHOTS=1) and a lint for portability.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig, TOOLSETS } from '../src/config.js';
import { connectInMemory } from './helpers/mcp.js';
import { lintTool } from './helpers/schema-lint.js';
import { repoRoot } from './helpers/repo.js';

const SNAPSHOT = `${repoRoot}test/__snapshots__/tools.json`;

async function listTools(config = makeConfig()): Promise<Tool[]> {
  const { client, close } = await connectInMemory(config);
  try {
    return (await client.listTools()).tools;
  } finally {
    await close();
  }
}

test('tools/list matches the snapshot', async () => {
  const published = JSON.stringify(await listTools(), null, 2) + '\n';
  if (process.env.UPDATE_SNAPSHOTS === '1' || !existsSync(SNAPSHOT)) {
    if (process.env.CI && !existsSync(SNAPSHOT))
      assert.fail(`${SNAPSHOT} is missing; run UPDATE_SNAPSHOTS=1 npm test and commit it`);
    writeFileSync(SNAPSHOT, published);
  }
  assert.equal(
    published,
    readFileSync(SNAPSHOT, 'utf8'),
    'a tool schema changed: review, then UPDATE_SNAPSHOTS=1 npm test',
  );
});

test('every tool of every toolset, the opt-in ones too, passes the portability lint', async () => {
  const tools = await listTools(makeConfig({ toolsets: [...TOOLSETS] }));
  assert.ok(tools.some((tool) => tool.name === 'recommend_fis_experiments'));
  assert.ok(tools.length > 0);
  assert.deepEqual(tools.flatMap(lintTool), []);
  assert.equal(new Set(tools.map((tool) => tool.name)).size, tools.length, 'tool names are unique');
});

test('the lint catches each kind of problem it claims to', () => {
  const bad = {
    name: 'x'.repeat(65),
    description: 'd',
    inputSchema: {
      type: 'object',
      $schema: 'http://json-schema.org/draft-07/schema#',
      properties: {
        a: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        b: { type: 'string', format: 'uri' },
        c: { type: 'number', exclusiveMinimum: 0 },
        d: { $ref: '#/definitions/x' },
        e: { type: 'object', additionalProperties: { type: 'string' } },
        h: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } }, required: ['x', 'y'] } },
        i: { type: 'array' },
        f: { oneOf: [] },
        g: { type: 'number', exclusiveMaximum: 5 },
        format: { type: 'string' },
      },
    },
    annotations: { readOnlyHint: true },
  } as unknown as Tool;
  const problems = lintTool(bad).join('\n');
  for (const expected of [
    /at most 64/,
    /no title/,
    /destructiveHint is not set/,
    /idempotentHint is not set/,
    /openWorldHint is not set/,
    /no outputSchema/,
    /"\$schema"/,
    /"anyOf"/,
    /"oneOf"/,
    /"format"/,
    /"exclusiveMinimum"/,
    /"exclusiveMaximum"/,
    /"\$ref"/,
    /additionalProperties with a schema/,
    /properties\.e is an object without properties/,
    /properties\.h\.items requires "y", which it does not declare/,
    /properties\.i is an array without items/,
  ]) {
    assert.match(problems, expected);
  }
  assert.doesNotMatch(problems, /properties\.format uses/, 'an argument named "format" is not the keyword');
  // A structured argument with named fields is portable.
  const structured = {
    ...bad,
    inputSchema: {
      type: 'object',
      properties: { finding: { type: 'object', properties: { summary: { type: 'string' } } } },
    },
  } as unknown as Tool;
  assert.doesNotMatch(lintTool(structured).join('\n'), /finding/);
  const emptyNested = {
    ...structured,
    inputSchema: {
      type: 'object',
      properties: { finding: { type: 'object', properties: { tags: { type: 'object', properties: {} } } } },
    },
  } as unknown as Tool;
  assert.match(
    lintTool(emptyNested).join('\n'),
    /properties\.finding\.properties\.tags is an object without properties/,
  );
});
