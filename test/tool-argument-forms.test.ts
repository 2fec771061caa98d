/**
 * The forms an argument may take, the same for every tool (src/tools/arguments.ts): `""` for an
 * optional argument is its default, a numeric string is the number, an enum matches in any case;
 * a structured argument is an object and its JSON (or, for a plan, YAML) text gives the same
 * result; `__proto__`, `constructor` and `prototype` are refused as keys. Driven through real MCP
 * clients against real local servers.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { commandsAllowed, connectInMemory, textOf } from './helpers/mcp.js';
import { mcpTargetPath } from './helpers/repo.js';
import { spawnRawServer } from './helpers/raw-stdio.js';
import { startOkApp, type OkApp } from './helpers/ok-app.js';

// This file lists code through the servers it spawns: with their listing thread, as users run them
// (test/helpers/isolate.ts turns it off for the rest of the suite).
process.env.FAULTLINE_LISTING_THREAD = 'on';

let app: OkApp;
let url: string;
before(async () => {
  app = await startOkApp();
  url = app.url;
});
after(() => app.close());

type Structured = Record<string, unknown>;
const structured = (result: CallToolResult) => result.structuredContent as Structured;

/** fault's documented payload template for its scenario tools, verbatim but for the url. */
const faultTemplate = (target: string) => ({
  url: target,
  method: '',
  body: '',
  latency: 0,
  deviation: 0,
  per_read_write_op: false,
  direction: '',
  side: '',
  duration: '',
  num_clients: '',
  rps: '',
  timeout: 10,
  proxies: [],
});

test("fault's payload template runs: every empty string takes its default", async () => {
  const { client, close } = await connectInMemory();
  try {
    // Verbatim (latency 0, as the template ships), and as a user fills it in (a latency).
    const [verbatim, filled] = (await Promise.all([
      client.callTool({ name: 'fault_run_latency_impact_scenario', arguments: faultTemplate(url) }),
      client.callTool({ name: 'fault_run_latency_impact_scenario', arguments: { ...faultTemplate(url), latency: 20 } }),
    ])) as CallToolResult[];
    for (const result of [verbatim!, filled!]) {
      assert.equal(result.isError, undefined, textOf(result));
      const s = structured(result);
      assert.equal(s.method, 'GET');
      assert.equal(s.hasBody, false);
      assert.equal(s.timeoutMs, 10_000);
      assert.equal(s.routedThroughProxy, true);
      assert.match(textOf(result), /load for 10s with 10 clients @ 2 RPS/);
      // Default side and direction: server + ingress (the responses).
      assert.match((s.fault as { description: string }).description, /Latency: ➡️🖧/);
    }
    // A zero latency measures nothing: said so, never "passed" (inconclusive; or failed, with that
    // said too, when a busy machine makes the endpoint alone miss an SLO).
    const noOp = /the latency fault adds nothing/;
    const verbatimResult = structured(verbatim!) as { verdict: string; verdictReasons: string[] };
    assert.notEqual(verbatimResult.verdict, 'passed');
    assert.ok(
      verbatimResult.verdictReasons.some((reason) => noOp.test(reason)),
      JSON.stringify(verbatimResult.verdictReasons),
    );
    // Filled in, the fault acts: no such reason, and a verdict on the SLOs.
    const filledResult = structured(filled!) as { verdict: string; verdictReasons: string[] };
    assert.notEqual(filledResult.verdict, 'inconclusive', JSON.stringify(filledResult.verdictReasons));
    assert.ok(
      !filledResult.verdictReasons.some((reason) => noOp.test(reason)),
      JSON.stringify(filledResult.verdictReasons),
    );
  } finally {
    await close();
  }
});

test(
  'numeric strings are numbers and enums match in any case; ' + 'anything else is refused naming the argument',
  async () => {
    const { client, close } = await connectInMemory();
    try {
      const result = (await client.callTool({
        name: 'fault_run_latency_impact_scenario',
        arguments: {
          url,
          duration: '300ms',
          num_clients: ' 2 ',
          rps: '5',
          timeout: '3',
          latency: '1.5',
          direction: 'Egress',
          side: 'SERVER',
          seed: '7',
        },
      })) as CallToolResult;
      assert.equal(result.isError, undefined, textOf(result));
      assert.equal(structured(result).timeoutMs, 3000);
      assert.match(textOf(result), /with 2 clients @ 5 RPS/);
      assert.match((structured(result).fault as { description: string }).description, /Latency: ⬅️🖧.*Mean: 1\.50 ms/);
      assert.equal((structured(result).fault as { seed: number }).seed, 7);

      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ url, num_clients: 'two' }, /^num_clients: must be a number \(got "two"\)/],
        [{ url, rps: '0x10' }, /^rps: must be a number \(got "0x10"\)/],
        [{ url, num_clients: '1.5' }, /^num_clients: must be an integer \(got 1\.5\)/],
        [{ url, num_clients: '0' }, /^num_clients: must be at least 1 \(got 0\)/],
        [{ url, direction: 'sideways' }, /^direction: must be one of ingress, egress, both \(got "sideways"\)/],
        [{ url, per_read_write_op: 'yes' }, /^per_read_write_op: must be true or false \(got "yes"\)/],
        [{ url, headers: 'X-A: 1' }, /^headers: must be an array/],
        [{ url: '' }, /^url/],
        [{}, /^url: is required/],
      ];
      for (const [args, message] of cases) {
        const refused = (await client.callTool({
          name: 'fault_run_latency_impact_scenario',
          arguments: args,
        })) as CallToolResult;
        assert.equal(refused.isError, true, JSON.stringify(args));
        assert.match(textOf(refused), message);
        assert.equal(refused.structuredContent, undefined);
      }
      // The LLM tools check their arguments like every other tool, before anything else.
      const review = (await client.callTool({
        name: 'fault_score_performance',
        arguments: { snippet: 'def f(): pass', lang: 7 },
      })) as CallToolResult;
      assert.match(textOf(review), /^lang: must be a string \(got 7\)/);
    } finally {
      await close();
    }
  },
);

/** GET through a held proxy's first address: the status answered. */
function statusThrough(address: string): Promise<number> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(':')),
    Number(address.slice(address.lastIndexOf(':') + 1)),
  ];
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

test("held proxies' faults: objects, JSON text of the list, or of each item, act the same", async () => {
  const { client, close } = await connectInMemory();
  const faults = [{ type: 'error', statusCode: 500 }];
  const forms: unknown[] = [
    faults,
    JSON.stringify(faults),
    faults.map((fault) => JSON.stringify(fault)),
    // "" and numeric strings inside: the default probability, the number.
    [{ type: 'error', statusCode: 500, probability: '' }],
    [{ type: 'error', statusCode: 500, probability: '1' }],
  ];
  try {
    const seen: string[][] = [];
    for (const form of forms) {
      const started = (await client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: [`0=${url.slice('http://'.length, -1)}`], faults: form },
      })) as CallToolResult;
      assert.equal(started.isError, undefined, `${JSON.stringify(form)}: ${textOf(started)}`);
      const status = structured(started) as { id: string; listening: Array<{ address: string }>; faults: string[] };
      assert.equal(await statusThrough(status.listening[0]!.address), 500, JSON.stringify(form));
      seen.push(status.faults);
      await client.callTool({ name: 'fault_proxy_stop', arguments: { id: status.id } });
    }
    assert.deepEqual(seen.slice(0, 3), [seen[0], seen[0], seen[0]]);
    assert.deepEqual(seen[0], ['{"type":"error","statusCode":500}']);
    const bad = (await client.callTool({
      name: 'fault_proxy_start',
      arguments: { proxies: ['0=127.0.0.1:1'], faults: ['{"type":'] },
    })) as CallToolResult;
    assert.match(textOf(bad), /^faults\[0\]: not JSON text/);
    // A key given twice is refused, not read as JSON.parse would (its last value), at any depth.
    for (const [faults, where] of [
      ['{"type":"error","statusCode":500,"statusCode":200}', 'faults\\[0\\]'],
      ['[{"type":"error","statusCode":500,"type":"latency"}]', 'faults'],
    ]) {
      const twice = (await client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=127.0.0.1:1'], faults: where === 'faults' ? faults : [faults] },
      })) as CallToolResult;
      assert.equal(twice.isError, true, textOf(twice));
      assert.match(textOf(twice), new RegExp(`^${where}: the key "(statusCode|type)" is given twice in one object`));
    }
    const notObject = (await client.callTool({
      name: 'fault_proxy_start',
      arguments: { proxies: ['0=127.0.0.1:1'], faults: [7] },
    })) as CallToolResult;
    assert.match(textOf(notObject), /^faults\[0\]: must be an object \(got 7\)/);
    // "" or null is an optional argument's default; for a required one it is the argument missing, said so, not as
    // text that failed to parse (set_faults' faults is required: an empty list clears them).
    for (const [empty, given] of [
      ['', 'empty text'],
      [null, 'null'],
    ] as const) {
      const missing = (await client.callTool({
        name: 'fault_proxy_set_faults',
        arguments: { id: 'proxy-1', faults: empty },
      })) as CallToolResult;
      assert.equal(missing.isError, true, textOf(missing));
      assert.equal(textOf(missing), `faults: required, an array of objects (${given} given)`);
    }
  } finally {
    await close();
  }
});

test("fis-recommender's object arguments: objects and JSON text give identical results", async () => {
  const { client, close } = await connectInMemory();
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    assert.equal(result.isError, undefined, `${name}: ${textOf(result)}`);
    return { text: textOf(result), structured: result.structuredContent };
  };
  try {
    const finding = { id: 'finding-123', summary: 'Network latency caused timeouts', type: 'AVAILABILITY_ISSUE' };
    const fromObject = await call('fault_recommend_fis_experiments', { finding });
    assert.deepEqual(
      await call('fault_recommend_fis_experiments', { finding: JSON.stringify(finding, null, 2) }),
      fromObject,
    );
    assert.equal((fromObject.structured as { finding_id: string }).finding_id, 'finding-123');
    // Plain text is still a finding.
    const plain = await call('fault_recommend_fis_experiments', { finding: 'Network latency caused timeouts' });
    assert.equal((plain.structured as { finding_id: null }).finding_id, null);
    const bracketed = await call('fault_recommend_fis_experiments', { finding: '[high] redis calls have no timeout' });
    assert.equal((bracketed.structured as { finding_id: null }).finding_id, null);
    // Text that opens like JSON but does not parse is broken JSON, not a summary.
    for (const broken of ['{"id": ', '  [{"summary": "db down"}']) {
      const refused = (await client.callTool({
        name: 'fault_recommend_fis_experiments',
        arguments: { finding: broken },
      })) as CallToolResult;
      assert.equal(refused.isError, true, textOf(refused));
      assert.match(textOf(refused), /^finding: starts like JSON but is not JSON text/);
    }

    const recommendation = { action: 'aws:ecs:task-network-latency', duration: 'PT5M' };
    const target = {
      roleArn: 'arn:aws:iam::123456789012:role/fis',
      stopConditionArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:high-errors',
      tags: { app: 'api' },
    };
    const template = await call('fault_create_fis_template', { recommendation, target_config: target });
    assert.deepEqual(
      await call('fault_create_fis_template', {
        recommendation: JSON.stringify(recommendation),
        target_config: JSON.stringify(target),
      }),
      template,
    );
    // Several actions: an array of objects, or its text.
    const two = [recommendation, { action: 'aws:ecs:stop-task', name: 'stop', startAfter: ['task-network-latency'] }];
    assert.deepEqual(
      await call('fault_create_fis_template', { recommendation: two, target_config: target }),
      await call('fault_create_fis_template', { recommendation: JSON.stringify(two), target_config: target }),
    );

    const exportArgs = { to: 'fis', fault: 'latency', url: 'http://svc:8080/', duration: '5m', latency: 200 };
    const exported = await call('fault_export_scenario', { ...exportArgs, target_config: { roleArn: target.roleArn } });
    assert.deepEqual(
      await call('fault_export_scenario', {
        ...exportArgs,
        target_config: JSON.stringify({ roleArn: target.roleArn }),
      }),
      exported,
    );
    assert.match(exported.text, /arn:aws:iam::123456789012:role\/fis/);
  } finally {
    await close();
  }
});

test(
  'a tool-call plan as an object, YAML or JSON text, and calls as ' + 'objects or text, give identical results',
  async () => {
    const { client, close } = await connectInMemory(commandsAllowed());
    const target = mcpTargetPath;
    const plan = { seed: 4, faults: [{ type: 'error_injection', rate: 1, tools: ['echo'], after_calls: 3 }] };
    const yaml = 'seed: 4\nfaults:\n  - type: error_injection\n    rate: 1\n    tools: [echo]\n    after_calls: 3\n';
    const calls = [
      { tool: 'get_items', arguments: { count: 3 } },
      { tool: 'echo', arguments: { text: 'x' } },
    ];
    const run = async (planForm: unknown, callsForm: unknown) => {
      const result = (await client.callTool({
        name: 'fault_run_tool_call_chaos_scenario',
        arguments: { command: process.execPath, args: [target, 'stdio'], plan: planForm, calls: callsForm, tasks: 4 },
      })) as CallToolResult;
      assert.equal(result.isError, undefined, textOf(result));
      return result.structuredContent;
    };
    try {
      const fromObjects = await run(plan, calls);
      assert.deepEqual((fromObjects as { injected: unknown }).injected, { error_injection: 1 });
      assert.deepEqual(
        await run(
          yaml,
          calls.map((c) => JSON.stringify(c)),
        ),
        fromObjects,
      );
      assert.deepEqual(await run(JSON.stringify(plan), JSON.stringify(calls)), fromObjects);
    } finally {
      await close();
    }
  },
);

test(
  '__proto__, constructor and prototype are refused as argument ' +
    'names and inside structured arguments, over the wire',
  async () => {
    const root = await mkdtemp(join(tmpdir(), 'faultline-forbidden-'));
    await writeFile(join(root, 'ok.py'), 'def f():\n    return 1\n');
    const server = await spawnRawServer(['mcp', '--root', root], { FAULTLINE_DATA_DIR: join(root, '.data') });
    try {
      await server.request('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 't', version: '0' },
      });
      const call = async (name: string, argsJson: string) => {
        // Own "__proto__" keys exist only in parsed JSON: an object literal would set the prototype.
        const response = await server.request('tools/call', { name, arguments: JSON.parse(argsJson) as unknown });
        return response.result as CallToolResult;
      };
      const file = JSON.stringify(join(root, 'ok.py'));
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        const result = await call('fault_list_function_names', `{"file": ${file}, "${key}": {"polluted": true}}`);
        assert.equal(result.isError, true, key);
        assert.match(textOf(result), new RegExp(`^${key}: not accepted as an argument name`));
      }
      const nested = await call(
        'fault_recommend_fis_experiments',
        '{"finding": {"summary": "db down", "__proto__": {"polluted": true}}}',
      );
      assert.match(textOf(nested), /^finding: field "__proto__" is not accepted/);
      const asText = await call(
        'fault_recommend_fis_experiments',
        JSON.stringify({ finding: '{"summary": "db down", "a": [{"constructor": 1}]}' }),
      );
      assert.match(textOf(asText), /^finding\.a\[0\]: field "constructor" is not accepted/);
      // Still answering, and the good call works.
      const ok = await call('fault_list_function_names', `{"file": ${file}}`);
      assert.equal(ok.isError, undefined, textOf(ok));
    } finally {
      await server.close();
      await rm(root, { recursive: true, force: true });
    }
  },
);
