/**
 * Reading experiment files: the published schema is the one the reader validates with; every
 * refusal names the field as written; faults are the proxy's (camelCase or snake_case, every HTTP
 * and network type); mcp-chaos-monkey's scenario JSON reads as it is; the MCP tools answer plans,
 * refusals and suggestions. No load runs here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig } from '../src/config.js';
import { EXPERIMENT_SCHEMA, parseExperimentText, readExperiment } from '../src/experiment/index.js';
import type { SafetyPolicy } from '../src/experiment/adapters/policy.js';
import { runExperiment } from '../src/experiment/index.js';
import { FileAccess } from '../src/access.js';
import { suggestFromSources } from '../src/experiment/suggest/index.js';
import { InputError } from '../src/kernel/errors.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { cliPath, fixturePath, repoRoot } from './helpers/repo.js';
import { HANG_GUARD_MS } from './helpers/wait.js';
import { ProgramPolicy } from '../src/consent/index.js';

const limits = makeConfig().scenario;
const policy: SafetyPolicy = {
  allowRemoteTargets: false,
  allowNonLoopbackBind: false,
  allowProduction: false,
};
const read = (raw: unknown) => readExperiment(raw, { limits, policy });

const base = {
  title: 't',
  load: { url: 'http://127.0.0.1:8000/', rps: 10, duration: '20s' },
  proxies: ['34001=127.0.0.1:7001#weather', '34002=127.0.0.1:6379#redis'],
  steady_state: ['p95 < 300ms', 'errors < 1%'],
  method: [
    { at: '5s', for: '10s', fault: { target: 'weather', type: 'error', statusCode: 503 } },
    { at: '8s', for: '4s', fault: { target: 'redis', type: 'latency', latencyMs: 500 } },
  ],
  expect: ['errors < 5%', 'p99 < 2s'],
  recover_within: '3s',
  abort_when: 'errors > 50% for 3s',
};

async function refused(raw: unknown, message: RegExp): Promise<void> {
  await assert.rejects(read(raw), (error: unknown) => {
    assert.ok(error instanceof InputError, String(error));
    assert.match(error.message, message);
    return true;
  });
}

describe('the schema', () => {
  test('schemas/experiment.schema.json is the schema the reader validates with', () => {
    const published = readFileSync(join(repoRoot, 'schemas', 'experiment.schema.json'), 'utf8');
    assert.equal(
      published,
      `${JSON.stringify(EXPERIMENT_SCHEMA, null, 2)}\n`,
      'regenerate: node dist/src/cli.js experiment schema > schemas/experiment.schema.json',
    );
  });

  test('a JSON file may name its schema for editors ("$schema"); anything else unknown is refused', async () => {
    const experiment = await read({ $schema: 'https://faultline.dev/schemas/experiment.schema.json', ...base });
    assert.equal(experiment.title, 't');
    await refused({ $schemas: 'x', ...base }, /unknown field "\$schemas"/);
  });

  test('every fault field the schema offers for completion is one the proxy accepts', async () => {
    const fields = Object.keys(
      (EXPERIMENT_SCHEMA.properties.method.items.properties.fault as { properties: Record<string, unknown> })
        .properties,
    );
    const { parseFaultConfig } = await import('../src/proxy/control/index.js');
    for (const field of fields) {
      if (['type', 'target', 'name'].includes(field)) continue;
      const types = [
        'latency',
        'jitter',
        'packet_loss',
        'bandwidth',
        'blackhole',
        'error',
        'rate_limit',
        'timeout',
        'malformed',
        'schema_mismatch',
        'connection_refused',
        'connection_drop',
      ];
      const accepted = types.some((type) => {
        try {
          // Present but undefined: a required field missing is another refusal, only an unknown one counts.
          parseFaultConfig({ type, [field]: undefined });
          return true;
        } catch (error) {
          return !/unknown field/.test((error as Error).message);
        }
      });
      assert.ok(accepted, `${field} is refused as unknown by every fault type`);
    }
  });
});

describe('reading', () => {
  test(
    "the issue's example reads: two overlapping steps, phases, the " + 'steady state before and after, abort',
    async () => {
      const experiment = await read(base);
      assert.deepEqual(experiment.phases.inject, { label: 'inject', fromMs: 5000, toMs: 15_000 });
      assert.deepEqual(
        experiment.steps.map((step) => [step.kind, step.atMs, step.forMs]),
        [
          ['fault', 5000, 10_000],
          ['fault', 8000, 4000],
        ],
      );
      assert.equal(experiment.load!.clients * experiment.load!.rps, 10, 'rps is the total rate');
      assert.deepEqual(
        experiment.expectations.map((e) => e.id),
        [
          'steady_state[0].before',
          'steady_state[0].after',
          'steady_state[1].before',
          'steady_state[1].after',
          'expect[0]',
          'expect[1]',
        ],
      );
      assert.deepEqual(experiment.expectations[1]!.window, {
        label: 'after recover_within',
        fromMs: 18_000,
        toMs: 20_000,
      });
      assert.deepEqual(experiment.abort, [
        { kind: 'load', text: 'errors > 50% for 3s', metric: 'errors', op: '>', threshold: 50, forSeconds: 3 },
      ]);
    },
  );

  test("YAML text reads as the object does; snake_case and kebab-case faults are the proxy's too", async () => {
    const text = [
      'title: t',
      'load: {url: "http://127.0.0.1:8000/", rps: 10, duration: 20s}',
      'proxies: ["34001=127.0.0.1:7001#weather"]',
      'method:',
      '  - {at: 1s, for: 2s, fault: {target: weather, type: rate-limit, retry_after_seconds: 5}}',
      '  - {at: 2s, for: 2s, fault: {target: "#weather", type: packet_loss, loss_rate: 0.1}}',
      '  - {at: 3s, for: 2s, fault: {target: "34001", type: schema-mismatch, missingFields: [a.b]}}',
      'expect: ["errors < 5%", "GET /health -> $.circuit == \\"open\\""]',
    ].join('\n');
    const experiment = await read(await parseExperimentText(text));
    assert.deepEqual(
      experiment.steps.map((step) => step.kind === 'fault' && [step.config.kind, step.placement]),
      [
        ['http', { plane: 'proxy', target: 'weather' }],
        ['network', { plane: 'proxy', target: 'weather' }],
        ['http', { plane: 'proxy', target: 'weather' }],
      ],
    );
    const check = experiment.expectations[1]!;
    assert.equal(check.kind, 'http');
    assert.equal(
      check.kind === 'http' && check.check.url,
      'http://127.0.0.1:8000/health',
      "a path is taken on the load's host",
    );
  });

  test('refusals name the field as written', async () => {
    await refused({ ...base, load: { ...base.load, rps: 'fast' } }, /^load\.rps: must be a number \(got "fast"\)/);
    await refused(
      { ...base, method: [{ at: '1s', for: '1s', fault: { target: 'weather', type: 'error', statusCode: 200 } }] },
      /^method\[0\]\.fault: .*status_code must be an HTTP status in 400\.\.599/,
    );
    await refused(
      {
        ...base,
        method: [{ at: '1s', for: '1s', fault: { target: 'weather', type: 'latency', latencyMs: 1, delay: 3 } }],
      },
      /^method\[0\]\.fault: /,
    );
    await refused(
      { ...base, method: [{ at: '1s', for: '1s', fault: { target: 'nowhere', type: 'blackhole' } }] },
      /^method\[0\]\.fault\.target: "nowhere" names no mapping; accepted: #weather, #redis/,
    );
    await refused(
      { ...base, method: [{ at: '1s', fault: { target: 'weather', type: 'blackhole' } }] },
      /^method\[0\]\.for: a fault step needs its length/,
    );
    await refused(
      { ...base, method: [{ at: '19s', for: '5s', fault: { target: 'weather', type: 'blackhole' } }] },
      /^method\[0\]\.for: the step ends at 24s, after the run \(20s\)/,
    );
    await refused({ ...base, expect: ['errors below 5%'] }, /^expect\[0\]: "errors below 5%" is not an SLO/);
    await refused(
      { ...base, expect: [{ slo: 'errors < 5%', during: 'lunch' }] },
      /^expect\[0\]\.during: "lunch" is not a window/,
    );
    await refused({ ...base, abort_when: 'errors > 50% for 2.5s' }, /^abort_when: .*whole seconds/);
    await refused(
      { ...base, recover_within: '10s' },
      /^load\.duration: the run ends 5s after the last step, which leaves less than 1s after recover_within/,
    );
    await refused({ ...base, unknown: 1 }, /^experiment: unknown field "unknown" \(accepted: \$schema, version, title/);
    await refused({ ...base, proxies: ['34001=169.254.169.254:80#meta'] }, /proxies\[0\].*metadata/);
    await refused({ ...base, load: { ...base.load, url: 'http://8.8.8.8/' } }, /^load\.url: .*not a loopback address/);
    await refused({ ...base, load: { ...base.load, duration: '2h' } }, /longer than the 600 s this server allows/);
    await refused({ ...base, steady_state: [], recover_within: '1s' }, /^recover_within: needs steady_state SLOs/);
    await refused({ title: 't', expect: ['errors < 1%'] }, /^expect\[0\]: an SLO is measured on the load/);
    await refused({ ...base, constructor: {} }, /field "constructor" is not accepted/);
    await refused(
      {
        ...base,
        expect: Array.from({ length: 4 }, () => ({ http: 'GET /health', every: '100ms', during: 'run' })),
        load: { ...base.load, duration: '10m' },
      },
      /^expect: the HTTP checks would probe 24000 times; at most 20000 per run/,
    );
    await refused(
      { ...base, rollbacks: Array.from({ length: 9 }, () => ({ command: ['true'] })) },
      /^rollbacks: at most 8 commands/,
    );
  });

  test('an experiment with nothing to inject and nothing to check is refused, naming what is missing', async () => {
    const nothing = /^method: no steps, and no steady_state or expect either: nothing to run/;
    await refused(await parseExperimentText('title: only a title\n'), nothing);
    await refused({ title: 't', load: base.load, proxies: base.proxies, method: [] }, nothing);
    await refused({ name: 't', faults: [] }, /^faults: no steps, and no steady_state or expect either/);
    await assert.rejects(parseExperimentText('# nothing\n'), /empty; an experiment has at least a title and a method/);
    // Rollbacks alone are something to run: their commands (consent's tests refuse them without it).
    assert.equal((await read({ title: 't', rollbacks: [{ command: ['true'] }] })).rollbacks.length, 1);
    // Either half is enough: a baseline run checks the steady state with no fault.
    const baseline = await read({ title: 't', load: base.load, steady_state: base.steady_state });
    assert.equal(baseline.steps.length, 0);
    assert.ok(baseline.expectations.length > 0);
  });

  test('a YAML alias inside its own anchor is refused, not walked forever; a shared anchor reads', async () => {
    for (const text of ['a: &a [*a]', 'title: t\nmethod: &m [{at: 1s, for: 1s, fault: {type: blackhole}, more: *m}]']) {
      await assert.rejects(read(await parseExperimentText(text)), (error: unknown) => {
        assert.ok(error instanceof InputError, String(error));
        assert.match(error.message, /contains itself \(a YAML alias/);
        return true;
      });
    }
    const shared = [
      'title: t',
      'load: {url: "http://127.0.0.1:8000/", rps: 10, duration: 20s}',
      'x-fault: &down {type: blackhole}',
      'method:',
      '  - {at: 1s, for: 2s, fault: *down}',
      '  - {at: 5s, for: 2s, fault: *down}',
    ].join('\n');
    await assert.rejects(
      read(await parseExperimentText(shared)),
      /unknown field "x-fault"/,
      'the walk reached the schema check',
    );
  });

  test('a key given twice is refused in JSON as in YAML, at any depth', async () => {
    await assert.rejects(
      parseExperimentText('{"title": "a", "title": "b"}'),
      /experiment: the key "title" is given twice/,
    );
    await assert.rejects(
      parseExperimentText('{"title": "t", "method": [{"at": "1s", "fault": {"type": "x", "type": "blackhole"}}]}'),
      (error: unknown) => error instanceof InputError && /the key "type" is given twice/.test(error.message),
    );
    await assert.rejects(parseExperimentText('title: a\ntitle: b'), /Map keys must be unique/);
    assert.deepEqual(await parseExperimentText('{"a": {"k": 1}, "b": {"k": 2}}'), { a: { k: 1 }, b: { k: 2 } });
  });

  test('a file refused as a whole says where: JSON errors and repeated keys by line and column, an array by name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-json-'));
    try {
      const refusal = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        const run = spawnSync(process.execPath, [cliPath, 'experiment', 'validate', join(dir, name)], {
          encoding: 'utf8',
          timeout: HANG_GUARD_MS,
        });
        assert.equal(run.status, 2, run.stderr);
        return run.stderr;
      };
      // Offset 40 in V8's words is the `}` after a trailing comma: line 4, column 13.
      assert.match(
        refusal('bad.json', '{\n  "title": "x",\n  "method": [\n    {"a": 1,}\n  ]\n}\n'),
        /bad\.json: not valid JSON \(.* at line 4, column 13\)\n$/,
      );
      assert.match(
        refusal('twice.json', '{\n  "title": "x",\n  "title": "y"\n}\n'),
        /twice\.json: the key "title" is given twice in one object \(line 3, column 3\)\n$/,
      );
      assert.match(
        refusal('list.json', '[1, 2]\n'),
        /^faultline: .*list\.json: must be a mapping with title, method, … \(got an array\)\n$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(
    "mcp-chaos-monkey's scenario JSON reads as it is: name, faults " + 'for their durationMs, assertions not checked',
    async () => {
      const scenario = {
        name: 'redis-down',
        description: 'Redis refuses',
        faults: [{ target: 'redis', config: { type: 'connection-refused' }, durationMs: 5000 }],
        expectedBehavior: 'falls back to the database',
        assertions: ['no 500s'],
      };
      const experiment = await readExperiment(scenario, { limits, policy, extraProxies: ['0=127.0.0.1:6379#redis'] });
      assert.equal(experiment.format, 'mcp-chaos-monkey');
      assert.equal(experiment.title, 'redis-down');
      assert.deepEqual(
        experiment.steps.map((step) => [step.atMs, step.forMs]),
        [[0, 5000]],
      );
      assert.deepEqual(experiment.notChecked, ['expected behaviour: falls back to the database', 'no 500s']);
      await assert.rejects(read(scenario), /faults\[0\]\.fault\.target: "redis" names no mapping/);
    },
  );

  test('the production guard refuses to inject, and says how to allow it', async () => {
    const experiment = await read({
      ...base,
      load: undefined,
      duration: '20s',
      steady_state: [],
      expect: [],
      recover_within: undefined,
      abort_when: undefined,
    });
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await assert.rejects(
        runExperiment(experiment, { policy, programs: ProgramPolicy.owner() }),
        // The domain names no door: the CLI and the tool add how to allow it.
        /^InputError: refused to run the experiment: NODE_ENV=production says this is production$/,
      );
    } finally {
      if (previous === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = previous;
    }
  });
});

describe('suggestions', () => {
  test(
    'a FastAPI app calling httpx and Redis: both found, with their ' + 'env vars, a mapping and a fitting fault each',
    async () => {
      const suggestion = await suggestFromSources(new FileAccess([]), {
        sourceDir: fixturePath('experiment', 'fastapi-app'),
      });
      const byKind = Object.fromEntries(suggestion.dependencies.map((d) => [d.kind, d]));
      assert.deepEqual(Object.keys(byKind).sort(), ['http', 'redis']);
      assert.equal(byKind.http!.client, 'httpx');
      assert.equal(byKind.http!.env, 'WEATHER_URL');
      assert.equal(byKind.http!.address, 'http://weather.internal:7001');
      assert.equal(byKind.redis!.env, 'REDIS_URL');
      assert.match(byKind.redis!.evidence[0]!, /^main\.py:\d+ redis\.from_url$/);
      assert.deepEqual(suggestion.env, {
        REDIS_URL: 'redis://127.0.0.1:24000/0',
        WEATHER_URL: 'http://127.0.0.1:24001',
      });
      // The starter is a valid experiment: one mapping and one fault per dependency.
      const experiment = await readExperiment(await parseExperimentText(suggestion.experiment), { limits, policy });
      assert.deepEqual(
        experiment.proxies.map((m) => m.text),
        ['24000=redis://127.0.0.1:6379#redis', '24001=weather.internal:7001#weather'],
      );
      assert.deepEqual(
        experiment.steps.map((s) => s.kind === 'fault' && [s.placement.target, s.config.kind, s.config.type]),
        [
          ['redis', 'network', 'latency'],
          ['weather', 'http', 'error'],
        ],
      );
      assert.equal(experiment.load!.url, 'http://127.0.0.1:8000/', 'the port uvicorn.run names');
    },
  );

  test(
    'JavaScript (axios, fetch, ioredis) and Go (net/http, go-redis, ' +
      "database/sql): each dependency with its env var and the app's " +
      'own port',
    async () => {
      const node = await suggestFromSources(new FileAccess([]), { sourceDir: fixturePath('experiment', 'node-app') });
      assert.deepEqual(
        node.dependencies.map((d) => [d.kind, d.client, d.env]),
        [
          ['http', 'axios', 'PAYMENTS_URL'],
          ['redis', 'redis', 'REDIS_URL'],
          ['http', 'fetch', 'QUOTES_URL'],
        ],
      );
      assert.equal(node.dependencies[0]!.address, 'http://payments.internal:9000', 'the ?? fallback');
      assert.match(node.experiment, /url: http:\/\/127\.0\.0\.1:3000\//);
      const go = await suggestFromSources(new FileAccess([]), { sourceDir: fixturePath('experiment', 'go-app') });
      assert.deepEqual(
        go.dependencies.map((d) => [d.kind, d.env]),
        [
          ['redis', 'REDIS_ADDR'],
          ['postgres', 'DATABASE_URL'],
          ['http', 'INVENTORY_URL'],
        ],
      );
      assert.deepEqual(go.env, {
        REDIS_ADDR: '127.0.0.1:24000',
        DATABASE_URL: 'postgresql://127.0.0.1:24001',
        INVENTORY_URL: 'http://127.0.0.1:24002',
      });
      assert.match(go.experiment, /url: http:\/\/127\.0\.0\.1:8080\//);
    },
  );
});

describe('suggestions: what is not a dependency', () => {
  test("a bare `new Client(…)` (the MCP SDK's, pg's) is not taken for memcached; pymemcache's is", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-suggest-'));
    try {
      writeFileSync(
        join(dir, 'agent.mjs'),
        'import { Client } from ' +
          "'@modelcontextprotocol/sdk/client/index.js';\nconst client = new " +
          "Client({ name: 'a', version: '1' });\n",
      );
      writeFileSync(
        join(dir, 'cache.py'),
        "import pymemcache.client.base\ncache = pymemcache.client.base.Client(('cache.internal', 11211))\n",
      );
      const suggestion = await suggestFromSources(new FileAccess([]), { sourceDir: dir });
      assert.deepEqual(
        suggestion.dependencies.map((d) => [d.kind, d.evidence.map((e) => e.replace(/^.*\//, ''))]),
        [['memcached', ['cache.py:2 pymemcache.client.base.Client']]],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the MCP tools', () => {
  test('control.token_env: only FAULTLINE_* or a variable the owner allowed; nothing is sent otherwise', async () => {
    // A listener standing in for an attacker's "control plane": it must never be reached.
    const { createServer } = await import('node:http');
    const received: string[] = [];
    const listener = createServer((req, res) => {
      received.push(String(req.headers.authorization));
      res.end('{}');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
    const secret = 'sk-secret-of-the-server';
    process.env.OPENAI_API_KEY_FOR_TEST = secret;
    const experiment = (tokenEnv: string) => ({
      title: 't',
      duration: '1s',
      control: { grab: { url, token_env: tokenEnv } },
      method: [{ at: '0s', for: '1s', via: 'grab', fault: { target: 'x', type: 'latency', delay: 1 } }],
    });
    const closed = await connectInMemory();
    try {
      const refusal = (await closed.client.callTool({
        name: 'fault_run_experiment',
        arguments: { experiment: experiment('OPENAI_API_KEY_FOR_TEST') },
      })) as CallToolResult;
      assert.equal(refusal.isError, true, textOf(refusal));
      assert.match(
        textOf(refusal),
        /^control\.grab\.token_env: OPENAI_API_KEY_FOR_TEST is not a variable .*FAULTLINE_/,
      );
      assert.match(textOf(refusal), /--allow-token-env OPENAI_API_KEY_FOR_TEST/);
      assert.equal(received.length, 0, 'nothing reached the listener');
    } finally {
      await closed.close();
    }
    // The owner named it: read (and sent to the plane, which is what the owner allowed).
    const allowed = await connectInMemory(makeConfig({ scenario: { allowTokenEnv: ['OPENAI_API_KEY_FOR_TEST'] } }));
    try {
      await allowed.client.callTool({
        name: 'fault_run_experiment',
        arguments: { experiment: experiment('OPENAI_API_KEY_FOR_TEST') },
      });
      assert.ok(received.includes(`Bearer ${secret}`), JSON.stringify(received));
    } finally {
      await allowed.close();
      delete process.env.OPENAI_API_KEY_FOR_TEST;
      listener.closeAllConnections();
      listener.close();
    }
    await read({ ...experiment('FAULTLINE_ANY_TOKEN'), control: { grab: { url, token_env: 'FAULTLINE_ANY_TOKEN' } } });
    await refused(experiment('AWS_SECRET_ACCESS_KEY'), /^control\.grab\.token_env: AWS_SECRET_ACCESS_KEY is not/);
    await refused(experiment('not a name'), /^control\.grab\.token_env: "not a name" is not an environment variable/);
  });

  test(
    'fault_run_experiment: dry_run answers the plan; YAML text is ' + 'taken; a bad field is an isError naming it',
    async () => {
      const { client, close } = await connectInMemory();
      try {
        const plan = (await client.callTool({
          name: 'fault_run_experiment',
          arguments: { experiment: base, dry_run: true },
        })) as CallToolResult;
        assert.notEqual(plan.isError, true, textOf(plan));
        assert.equal((plan.structuredContent as { verdict: string }).verdict, 'not_run');
        assert.match(textOf(plan), /5s–15s\s+fault/);
        const text = (await client.callTool({
          name: 'fault_run_experiment',
          arguments: {
            experiment: 'title: t\nduration: 5s\nexpect: [{http: GET http://127.0.0.1:8000/, during: run}]\n',
            dry_run: true,
          },
        })) as CallToolResult;
        assert.notEqual(text.isError, true, textOf(text));
        const bad = (await client.callTool({
          name: 'fault_run_experiment',
          arguments: { experiment: { ...base, expect: [42] }, dry_run: true },
        })) as CallToolResult;
        assert.equal(bad.isError, true);
        assert.match(textOf(bad), /^expect\[0\]: /);
        const yamlError = (await client.callTool({
          name: 'fault_run_experiment',
          arguments: { experiment: 'title: [', dry_run: true },
        })) as CallToolResult;
        assert.equal(yamlError.isError, true);
        assert.match(textOf(yamlError), /^experiment: not valid YAML/);
        // A "billion laughs": each anchor aliases the one before nine times, 9^9 strings in all.
        const laughs = [
          'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
          ...'bcdefghi'
            .split('')
            .map((name, i) => `${name}: &${name} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
          'title: *i',
        ].join('\n');
        // `__proto__` as sent on the wire (an own key of the parsed JSON) is refused by name, not made the prototype.
        const proto = JSON.parse(
          '{"at": "1s", "for": "1s", "fault": {"type": "latency", "__proto__": {"delay": 4321}}}',
        ) as Record<string, unknown>;
        const polluted = (await client.callTool({
          name: 'fault_run_experiment',
          arguments: { experiment: { ...base, method: [proto] }, dry_run: true },
        })) as CallToolResult;
        assert.equal(polluted.isError, true, textOf(polluted));
        assert.match(textOf(polluted), /^experiment: field "__proto__" is not accepted \(at method\[0\]\.fault\)/);
        // Nested past the text's bound as an object (parsed before the tool sees it): refused, not a stack overflow.
        let deep: Record<string, unknown> = { type: 'blackhole' };
        for (let i = 0; i < 20_000; i++) deep = { a: deep };
        for (const experiment of [deep, { ...base, method: [{ at: '1s', for: '1s', fault: deep }] }]) {
          const nested = (await client.callTool({
            name: 'fault_run_experiment',
            arguments: { experiment, dry_run: true },
          })) as CallToolResult;
          assert.equal(nested.isError, true);
          assert.match(textOf(nested), /^experiment: nested deeper than 32 levels \(at (method\[0\]\.fault\.)?a\.a\./);
        }
        const bomb = (await client.callTool({
          name: 'fault_run_experiment',
          arguments: { experiment: laughs, dry_run: true },
        })) as CallToolResult;
        assert.equal(bomb.isError, true);
        assert.match(textOf(bomb), /^experiment: YAML aliases expand too far/);
      } finally {
        await close();
      }
    },
  );

  test('fault_suggest_experiment reads a file and answers a starter', async () => {
    const { client, close } = await connectInMemory();
    try {
      const result = (await client.callTool({
        name: 'fault_suggest_experiment',
        arguments: { file: fixturePath('experiment', 'fastapi-app', 'main.py') },
      })) as CallToolResult;
      assert.notEqual(result.isError, true, textOf(result));
      assert.equal((result.structuredContent as { dependencies: unknown[] }).dependencies.length, 2);
      const both = (await client.callTool({ name: 'fault_suggest_experiment', arguments: {} })) as CallToolResult;
      assert.equal(both.isError, true);
      assert.match(textOf(both), /source_dir or file: give exactly one/);
    } finally {
      await close();
    }
  });
});
