/**
 * Toolsets and the tools/list budget: `--toolsets` / FAULTLINE_TOOLSETS choose which families the
 * server offers (unknown names are a usage error listing the accepted ones); every tool carries a
 * family; tools/list stays lean; an environment variable set to "" counts as unset.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_TOOLSETS, OPT_IN_TOOLSETS, TOOLSETS, makeConfig } from '../src/config.js';
import { toolsetList } from '../src/commands/parsers.js';
import { compactSchema } from '../src/tools/define.js';
import { connectInMemory, connectStdio } from './helpers/mcp.js';
import { runCliBatch } from './helpers/cli-batch.js';
import type { CliOutcome } from './helpers/processes.js';

// The servers this file spawns only list tools, never code: they keep the suite's default of no
// listing thread (test/helpers/isolate.ts; ~1 s of CPU per server).

/**
 * Bytes of tools/list JSON per tool, on average: at most 3 KB (measured 2.68 KB for 26 tools; the
 * six scenario tools 4.4–4.9 KB each, every other family 2.2 KB on average). Lower these as the
 * schemas shrink; never raise them.
 */
const AVERAGE_BUDGET_BYTES = 3_000;
const NON_SCENARIO_BUDGET_BYTES = 2_500;
/** No single tool may cost more than this. */
const MAX_TOOL_BYTES = 5_500;

test('tools/list stays within its byte budget, with units and defaults still in the descriptions', async () => {
  const { client, close } = await connectInMemory();
  try {
    const { tools } = await client.listTools();
    const sizes = tools.map((tool) => ({ name: tool.name, bytes: Buffer.byteLength(JSON.stringify(tool)) }));
    const average = (list: typeof sizes) => list.reduce((sum, item) => sum + item.bytes, 0) / list.length;
    assert.ok(average(sizes) <= AVERAGE_BUDGET_BYTES, `average ${Math.round(average(sizes))} bytes per tool`);
    const others = sizes.filter((item) => !item.name.includes('_impact_scenario'));
    assert.ok(
      average(others) <= NON_SCENARIO_BUDGET_BYTES,
      `average ${Math.round(average(others))} bytes per non-scenario tool`,
    );
    for (const item of sizes) assert.ok(item.bytes <= MAX_TOOL_BYTES, `${item.name}: ${item.bytes} bytes`);
    // Lean, not mute: units and defaults are still said.
    const latency = tools.find((tool) => tool.name === 'fault_run_latency_impact_scenario')!;
    const props = latency.inputSchema.properties as Record<string, { description: string }>;
    assert.match(props.latency!.description, /milliseconds.*default/);
    assert.match(props.duration!.description, /default/);
    assert.match(props.timeout!.description, /seconds.*default/);
  } finally {
    await close();
  }
});

test('compactSchema drops only what says nothing', () => {
  const compacted = compactSchema(
    {
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        m: { type: 'integer', minimum: 1, maximum: 10 },
        h: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: { type: 'string' } },
        o: {
          anyOf: [
            { type: 'object', properties: { a: { type: 'number' } }, additionalProperties: {} },
            { type: 'null' },
          ],
          description: 'x',
        },
      },
    },
    'output',
  );
  assert.deepEqual(compacted, {
    type: 'object',
    properties: {
      n: { type: 'integer' },
      m: { type: 'integer', minimum: 1, maximum: 10 },
      h: { type: 'object', additionalProperties: { type: 'string' } },
      o: { type: ['object', 'null'], properties: { a: { type: 'number' } }, description: 'x' },
    },
  });
  // Input schemas keep their anyOf untouched (the lint forbids it there anyway).
  const input = { anyOf: [{ type: 'string' }, { type: 'null' }] };
  assert.deepEqual(compactSchema(input, 'input'), input);
});

test('toolsets: the config chooses the families tools/list offers', async () => {
  const { client, close } = await connectInMemory(makeConfig({ toolsets: ['code', 'review'] }));
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes('fault_list_function_names'));
    assert.ok(names.includes('fault_score_performance'));
    assert.ok(!names.some((name) => name.includes('scenario') && name.startsWith('fault_run')), names.join(','));
    assert.ok(!names.includes('fault_search_code'));
    // A tool outside the chosen families is not callable either.
    const result = await client
      .callTool({ name: 'fault_search_code', arguments: { query: 'x' } })
      .catch((error: Error) => ({ isError: true, error }));
    assert.equal((result as { isError?: boolean }).isError, true);
  } finally {
    await close();
  }
});

test('every family name is documented in the config list; by default every one but the opt-in ones', () => {
  assert.deepEqual(
    [...TOOLSETS],
    [
      'code',
      'search',
      'review',
      'scenario',
      'http',
      'proxy',
      'toolcall',
      'probe',
      'cloud',
      'experiment',
      'fis-recommender',
    ],
  );
  assert.deepEqual([...OPT_IN_TOOLSETS], ['fis-recommender']);
  assert.deepEqual(makeConfig().toolsets, [...DEFAULT_TOOLSETS]);
  assert.deepEqual(
    [...DEFAULT_TOOLSETS],
    ['code', 'search', 'review', 'scenario', 'http', 'proxy', 'toolcall', 'probe', 'cloud', 'experiment'],
  );
});

test('--toolsets: "all" is every default family; an opt-in family comes only when named, alone or with all', () => {
  assert.deepEqual(toolsetList('all'), [...DEFAULT_TOOLSETS]);
  assert.deepEqual(toolsetList(''), [...DEFAULT_TOOLSETS]);
  assert.deepEqual(toolsetList('fis-recommender'), ['fis-recommender']);
  assert.deepEqual(toolsetList('ALL, fis-recommender'), [...DEFAULT_TOOLSETS, 'fis-recommender']);
  assert.deepEqual(toolsetList('cloud,toolplane'), ['toolcall', 'cloud']);
});

test(
  'the opt-in toolset over stdio: --toolsets fis-recommender lists ' +
    'its two tools; the default and all list neither',
  async () => {
    const only = await connectStdio(['mcp', '--toolsets', 'fis-recommender']);
    try {
      assert.deepEqual(
        (await only.client.listTools()).tools.map((tool) => tool.name),
        ['recommend_fis_experiments', 'create_fis_template'],
      );
    } finally {
      await only.close();
    }
    for (const args of [['mcp'], ['mcp', '--toolsets', 'all']]) {
      const session = await connectStdio(args);
      try {
        const names = (await session.client.listTools()).tools.map((tool) => tool.name);
        assert.ok(
          names.includes('fault_recommend_fis_experiments') && !names.includes('recommend_fis_experiments'),
          `${args.join(' ')}: ${names.join(', ')}`,
        );
      } finally {
        await session.close();
      }
    }
  },
);

test('FAULTLINE_TOOLSETS over stdio, with blank LLM variables that count as unset', async () => {
  const session = await connectStdio(['mcp'], {
    FAULTLINE_TOOLSETS: 'code',
    FAULT_AGENT_CLIENT: '',
    FAULT_LLM_TIMEOUT: ' ',
    FAULT_LLM_BASE_URL: '',
  });
  try {
    const names = (await session.client.listTools()).tools.map((tool) => tool.name).sort();
    assert.deepEqual(names, ['fault_extract_code_block', 'fault_list_function_names']);
  } finally {
    await session.close();
  }
});

test('an unknown toolset is a usage error listing the accepted ones', async () => {
  // Parsing and printing only: main() in one process for both (helpers/cli-batch.ts).
  const outcomes = await runCliBatch([
    { args: ['mcp', '--toolsets', 'code,nope'] },
    { args: ['mcp'], env: { FAULTLINE_TOOLSETS: 'nope' } },
  ]);
  for (const { code, stdout, stderr } of outcomes) {
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.match(
      stderr,
      /unknown toolset nope; accepted: code, search, review, scenario, http, proxy, toolcall, probe, cloud, experiment, fis-recommender, all/,
    );
  }
});

test('--llm-timeout takes a duration and refuses anything else', async () => {
  const [refused, help] = (await runCliBatch([
    { args: ['mcp', '--llm-timeout', 'soon'] },
    { args: ['mcp', '--help'] },
  ])) as [CliOutcome, CliOutcome];
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--llm-timeout.*expected a duration/);
  assert.match(help.stdout, /--llm-timeout/);
  assert.match(help.stdout, /--toolsets/);
});
