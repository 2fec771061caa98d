/**
 * Exports of an experiment: a Chaos Mesh Workflow that keeps the timeline (validated against the
 * Workflow shape, each NetworkChaos the scenario export's own), a k6 script whose thresholds are
 * the windows' SLOs and whose generated checks judge answers as faultline does, a FIS template
 * sequenced by startAfter and checked by the template builder; what an engine cannot express is
 * refused with the reason, or listed when --partial leaves it out.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { makeConfig } from '../src/config.js';
import {
  exportExperiment,
  readExperiment,
  type ExperimentExportTarget,
  type ExperimentExportOptions,
} from '../src/experiment/index.js';
import type { SafetyPolicy } from '../src/experiment/adapters/policy.js';
import { K6_HELPERS, predicateCode } from '../src/experiment/export/k6.js';
import { parsePredicate, unmetClause } from '../src/experiment/predicate.js';
import { buildExperimentTemplate, EXPORT_LIMITS, exportScenario } from '../src/cloud/index.js';
import { scenarioFromArguments } from '../src/scenario/index.js';
import { InputError } from '../src/kernel/errors.js';
import { fixturePath } from './helpers/repo.js';

const work = mkdtempSync(join(tmpdir(), 'faultline-experiment-export-'));
after(() => rmSync(work, { recursive: true, force: true }));

const limits = { ...makeConfig().scenario, ...EXPORT_LIMITS };
const policy: SafetyPolicy = {
  allowRemoteTargets: true,
  allowNonLoopbackBind: false,
  allowProduction: false,
};

async function exported(raw: unknown, to: ExperimentExportTarget, options: ExperimentExportOptions = {}) {
  return exportExperiment(await readExperiment(raw, { limits, policy }), to, options);
}

const cluster = {
  title: 'Checkout under dependency faults',
  load: { url: 'http://checkout.shop:8080/pay', rps: 50, duration: '2m', timeout: '5s' },
  proxies: ['34001=weather.shop:7001#weather', '34002=api.shop:8080#api'],
  steady_state: ['p95 < 300ms', 'errors < 1%'],
  method: [
    {
      name: 'weather slow',
      at: '20s',
      for: '40s',
      fault: { target: 'weather', type: 'latency', latencyMs: 200, deviationMs: 20, distribution: 'uniform' },
    },
    { name: 'api slow', at: '30s', for: '20s', fault: { target: 'api', type: 'latency', delay: 500, path: '/v1/**' } },
  ],
  expect: [
    'errors < 5%',
    { slo: 'p99 < 2s', during: 'api slow' },
    { http: 'GET http://checkout.shop:8080/health', expect: 'status >= 200 and status < 300' },
  ],
  abort_when: {
    http: 'GET http://checkout.shop:8080/health',
    expect: 'status < 500',
    failures: 2,
    every: '1s',
    timeout: '1s',
  },
};

describe('chaos-mesh', () => {
  test(
    'a Workflow that keeps the timeline: steps side by side after ' + 'their Suspends, a status check, one that aborts',
    async () => {
      const result = await exported(cluster, 'chaos-mesh', {
        namespace: 'shop',
        selectors: { weather: ['app=weather'], api: ['app=api'] },
      });
      const workflow = parseYaml(result.document) as { spec: { entry: string; templates: Array<Record<string, any>> } };
      const validate = new Ajv({ strict: false, allErrors: true }).compile(
        JSON.parse(readFileSync(fixturePath('experiment', 'chaos-mesh-workflow.schema.json'), 'utf8')),
      );
      assert.ok(validate(workflow), JSON.stringify(validate.errors, null, 2));
      const byName = new Map(workflow.spec.templates.map((t) => [t.name, t]));
      for (const template of workflow.spec.templates)
        for (const child of template.children ?? []) assert.ok(byName.has(child), `${template.name} → ${child}`);
      const entry = byName.get(workflow.spec.entry)!;
      assert.equal(entry.templateType, 'Parallel');
      assert.equal(byName.get('step-1-wait')!.deadline, '20s');
      assert.equal(byName.get('step-1')!.deadline, '40s');
      assert.equal(byName.get('step-2-wait')!.deadline, '30s');
      assert.deepEqual(byName.get('step-2')!.httpChaos, {
        mode: 'all',
        selector: { namespaces: ['shop'], labelSelectors: { app: 'api' } },
        port: 8080,
        path: '/v1/*',
        target: 'Request',
        delay: '500ms',
      });
      // The NetworkChaos is the scenario export's own for the same fault (its duration is the node's deadline).
      const scenario = await scenarioFromArguments(
        'latency',
        { url: 'http://weather.shop:7001/', latency: 200, deviation: 20, distribution: 'uniform', duration: '40s' },
        EXPORT_LIMITS,
      );
      const own = parseYaml(
        (await exportScenario(scenario, 'chaos-mesh', { namespace: 'shop', selector: ['app=weather'] })).document,
      ).spec;
      delete own.duration;
      assert.deepEqual(byName.get('step-1')!.networkChaos, own);
      const checks = workflow.spec.templates.filter((t) => t.templateType === 'StatusCheck');
      assert.equal(checks.length, 2);
      const abort = checks.find((t) => t.abortWithStatusCheck === true)!;
      assert.equal(abort.statusCheck.failureThreshold, 2);
      assert.equal(abort.statusCheck.http.criteria.statusCode, '100-499');
      assert.equal(abort.deadline, '40s', 'while faults act: 20s to 60s');
      assert.equal(checks.find((t) => !t.abortWithStatusCheck)!.statusCheck.http.criteria.statusCode, '200-299');
      assert.match(result.document, /^# Not here: the load, its SLOs/m);
    },
  );

  test(
    'what HTTPChaos cannot do is refused with the reason, every part ' +
      'listed; --partial writes the rest and says what it left out',
    async () => {
      const faults = {
        ...cluster,
        expect: ['errors < 5%'],
        abort_when: 'errors > 50% for 3s',
        method: [
          { at: '10s', for: '10s', fault: { target: 'api', type: 'error', status_code: 503 } },
          { at: '10s', for: '10s', fault: { target: 'api', type: 'latency', delay: 100, probability: 0.5 } },
          { at: '10s', for: '10s', fault: { target: 'weather', type: 'malformed' } },
          { at: '10s', for: '10s', fault: { target: 'weather', type: 'error', status_code: 503, forward: true } },
        ],
      };
      await assert.rejects(exported(faults, 'chaos-mesh'), (error: unknown) => {
        assert.ok(error instanceof InputError);
        assert.match(error.message, /method\[0\] \(error on #api at 10s\): error answers in the service's place/);
        assert.match(error.message, /method\[1\] .*probability 0\.5: HTTPChaos acts on every matching request/);
        assert.match(error.message, /method\[2\] .*malformed cuts each response's own body/);
        assert.match(
          error.message,
          /abort_when \(errors > 50% for 3s\): Chaos Mesh aborts a workflow on an HTTP status check only/,
        );
        assert.doesNotMatch(error.message, /method\[3\]/, 'error with forward is expressible');
        return true;
      });
      const partial = await exported(faults, 'chaos-mesh', { partial: true });
      assert.equal(partial.omitted.length, 4);
      assert.match(partial.document, /^# Left out \(--partial\): method\[0\]/m);
      const replace = (
        parseYaml(partial.document) as { spec: { templates: Array<Record<string, any>> } }
      ).spec.templates.find((t) => t.templateType === 'HTTPChaos')!;
      assert.deepEqual(replace.httpChaos.replace, {
        code: 503,
        body: Buffer.from('{"error":"faultline injected error"}').toString('base64'),
        headers: { 'Content-Type': 'application/json' },
      });
    },
  );

  test('--partial never writes an empty document: when every fault step is refused, the export is', async () => {
    const onlyRefused = {
      ...cluster,
      expect: ['errors < 5%'],
      abort_when: undefined,
      method: [{ at: '10s', for: '10s', fault: { target: 'api', type: 'error', status_code: 503 } }],
    };
    for (const to of ['chaos-mesh', 'fis'] as const) {
      await assert.rejects(exported(onlyRefused, to, { partial: true }), (error: unknown) => {
        assert.ok(error instanceof InputError);
        assert.match(
          error.message,
          new RegExp(`^nothing to export to ${to} \\(.*\\): every fault step was refused:\\n  - method\\[0\\]`),
        );
        return true;
      });
    }
    const k6 = await exported(onlyRefused, 'k6', { partial: true });
    assert.match(k6.document, /constant-arrival-rate/, 'k6 carries the load, which is still there');
  });
});

describe('k6', () => {
  test(
    'the load with a threshold per window, HTTP checks as scenarios, ' +
      'an HTTP abort rule that aborts; the script parses',
    async () => {
      const result = await exported(cluster, 'k6');
      const options = JSON.parse(/export const options = (\{[\s\S]*?\n\});/.exec(result.document)![1]!) as {
        scenarios: Record<string, any>;
        thresholds: Record<string, string[]>;
      };
      assert.equal(options.scenarios.load.executor, 'constant-arrival-rate');
      assert.equal(options.scenarios.load.rate, 50);
      assert.equal(options.scenarios.load.duration, '120s');
      // baseline 0–20s, after the last fault 60s–120s, inject 20–60s, the api step 30–50s
      assert.deepEqual(options.thresholds, {
        'http_req_duration{w0:in}': ['p(95)<300'],
        'http_req_duration{w1:in}': ['p(95)<300'],
        'http_req_failed{w0:in}': ['rate<0.01'],
        'http_req_failed{w1:in}': ['rate<0.01'],
        'http_req_failed{w2:in}': ['rate<0.05'],
        'http_req_duration{w3:in}': ['p(99)<2000'],
        'checks{probe:check1}': ['rate==1'],
      });
      assert.match(result.document, /if \(t >= 30000 && t < 50000\) tags\.w3 = 'in';/);
      assert.match(
        result.document,
        /exec\.test\.abort\("abort_when: GET http:\/\/checkout\.shop:8080\/health -> status < 500"\)/,
      );
      assert.equal(options.scenarios.abort0.startTime, '20000ms');
      const file = join(work, 'experiment.mjs');
      writeFileSync(file, result.document);
      await promisify(execFile)(process.execPath, ['--check', file]);
    },
  );

  test('the generated checks judge an answer as faultline does', () => {
    const cases: Array<[string, { status: number; body: string; headers: Record<string, string> }]> = [
      ['status == 200 and $.circuit == "open"', { status: 200, body: '{"circuit":"open"}', headers: {} }],
      ['status == 200 and $.circuit == "open"', { status: 200, body: '{"circuit":"closed"}', headers: {} }],
      ['$.items[1].id == 7', { status: 200, body: '{"items":[{"id":1},{"id":7}]}', headers: {} }],
      ['$.missing absent and body contains "ok"', { status: 200, body: '{"ok":1}', headers: {} }],
      [
        'header.content-type contains "json"',
        { status: 200, body: '', headers: { 'Content-Type': 'application/json' } },
      ],
      ['status < 500', { status: 503, body: '', headers: {} }],
      ['$.n >= 3', { status: 200, body: 'not json', headers: {} }],
    ];
    for (const [text, answer] of cases) {
      const predicate = parsePredicate(text, 'test');
      const ours =
        unmetClause(predicate, {
          ...answer,
          headers: Object.fromEntries(Object.entries(answer.headers).map(([k, v]) => [k.toLowerCase(), v])),
          latencyMs: 1,
        }) === undefined;
      const k6 = new Function('r', `${K6_HELPERS}\nreturn ${predicateCode(predicate)};`)({
        ...answer,
        timings: { duration: 1 },
      }) as boolean;
      assert.equal(k6, ours, `${text} on ${answer.body}`);
    }
  });

  test('abort rules on the load and recover_within are refused: k6 thresholds have no window of seconds', async () => {
    await assert.rejects(
      exported({ ...cluster, abort_when: 'errors > 50% for 3s', recover_within: '10s' }, 'k6'),
      (error: unknown) => {
        assert.match(
          (error as Error).message,
          /abort_when \(errors > 50% for 3s\): a k6 threshold \(even with abortOnFail\) is computed over every sample since the start/,
        );
        assert.match((error as Error).message, /recover_within: no k6 metric says when the steady state came back/);
        return true;
      },
    );
  });
});

describe('fis', () => {
  const minutes = {
    title: 'payments dependencies',
    load: { url: 'http://checkout.shop:8080/pay', rps: 20, duration: '8m' },
    proxies: ['34001=weather.shop:7001#weather', '34002=db.shop:5432#db'],
    method: [
      { name: 'weather slow', at: '1m', for: '2m', fault: { target: 'weather', type: 'latency', latencyMs: 180 } },
      { name: 'db lossy', at: '3m', for: '1m', fault: { target: 'db', type: 'packet_loss', lossRate: 0.07 } },
      { name: 'weather gone', at: '5m', for: '1m', fault: { target: 'weather', type: 'blackhole' } },
    ],
    expect: ['errors < 5%'],
    abort_when: 'errors > 20% for 30s',
  };
  const target = {
    roleArn: 'arn:aws:iam::123456789012:role/fis',
    stopConditionArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:checkout-errors',
    mappings: { weather: { tags: { service: 'weather' } }, db: { tags: { service: 'db' } } },
  };

  test(
    'several actions sequenced by startAfter (waits for the gaps), ' + 'one target per dependency, the stop condition',
    async () => {
      const result = await exported(minutes, 'fis', { targetConfig: target });
      const template = JSON.parse(result.document);
      assert.deepEqual(Object.keys(template.actions), ['step-1-wait', 'step-1', 'step-2', 'step-3-wait', 'step-3']);
      assert.deepEqual(template.actions['step-1-wait'], { actionId: 'aws:fis:wait', parameters: { duration: 'PT1M' } });
      assert.deepEqual(template.actions['step-1'].startAfter, ['step-1-wait']);
      assert.equal(template.actions['step-1'].actionId, 'aws:ecs:task-network-latency');
      assert.equal(template.actions['step-1'].parameters.delayMilliseconds, '180');
      assert.deepEqual(template.actions['step-2'].startAfter, ['step-1'], 'starts when step 1 ends');
      assert.equal(template.actions['step-2'].parameters.lossPercent, '7');
      assert.deepEqual(template.actions['step-3-wait'], {
        actionId: 'aws:fis:wait',
        parameters: { duration: 'PT1M' },
        startAfter: ['step-2'],
      });
      assert.equal(template.actions['step-3'].actionId, 'aws:ecs:task-network-blackhole-port');
      assert.equal(template.actions['step-3'].parameters.port, '7001');
      assert.deepEqual(template.stopConditions, [{ source: 'aws:cloudwatch:alarm', value: target.stopConditionArn }]);
      const tags = (name: string) => template.targets[template.actions[name].targets.Tasks].resourceTags;
      assert.deepEqual(tags('step-1'), { service: 'weather' });
      assert.deepEqual(tags('step-2'), { service: 'db' });
      // The template is what the builder accepts: its actions fed back give the same template.
      const again = buildExperimentTemplate(
        Object.entries(template.actions).map(([name, a]) => {
          const { actionId, targets: _t, ...rest } = a as Record<string, unknown>;
          return { name, action: actionId, ...rest };
        }),
        {
          roleArn: target.roleArn,
          stopConditionArn: target.stopConditionArn,
          targets: Object.fromEntries(['step-1', 'step-2', 'step-3'].map((name) => [name, { tags: tags(name) }])),
        },
      );
      assert.deepEqual(again.template.actions, template.actions);
      assert.ok(
        result.notes.some((note) => /stands for "errors > 20% for 30s"/.test(note)),
        result.notes.join('\n'),
      );
    },
  );

  test('an HTTP fault is refused naming the step', async () => {
    await assert.rejects(
      exported(
        {
          ...minutes,
          method: [
            ...minutes.method,
            { at: '6m', for: '1m', fault: { target: 'weather', type: 'error', status_code: 503 } },
          ],
        },
        'fis',
        { targetConfig: target },
      ),
      (error: unknown) => {
        assert.match(
          (error as Error).message,
          /method\[3\] \(error on #weather at 6m\): error is an HTTP fault; FIS has no HTTP fault action/,
        );
        return true;
      },
    );
  });

  test("more steps than one FIS template holds are refused in the experiment's own terms", async () => {
    const method = Array.from({ length: 11 }, (_, i) => ({
      at: `${2 * i + 1}m`,
      for: '1m',
      fault: { target: i % 2 ? 'db' : 'weather', type: 'latency', latencyMs: 50 },
    }));
    await assert.rejects(
      exported({ ...minutes, load: { ...minutes.load, duration: '30m' }, method }, 'fis', { targetConfig: target }),
      /method: at most 20 actions in one template: its 11 fault steps need 22 FIS actions/,
    );
  });

  test('a step shorter than most FIS actions allow is kept, with a note naming the step', async () => {
    const result = await exported(
      {
        ...minutes,
        method: [...minutes.method, { at: '7m', for: '10s', fault: { target: 'db', type: 'latency', latencyMs: 50 } }],
      },
      'fis',
      { targetConfig: target },
    );
    const template = JSON.parse(result.document);
    assert.equal(template.actions['step-4'].parameters.duration, 'PT10S');
    assert.ok(
      result.notes.some((note) =>
        /^method\[3\] \(latency on #db at 7m\): parameters\.duration: PT10S is below/.test(note),
      ),
      result.notes.join('\n'),
    );
  });

  test("without targets, the note's example names a mapping of this file", async () => {
    const own = { ...minutes, proxies: ['34001=weather.shop:7001#pricing', '34002=db.shop:5432#db'] };
    own.method = [{ name: 'slow', at: '1m', for: '2m', fault: { target: 'pricing', type: 'latency', latencyMs: 180 } }];
    const result = await exported(own, 'fis');
    const note = result.notes.find((n) => /placeholder tag/.test(n));
    assert.ok(note?.includes('\'{"mappings": {"pricing": {"tags": {"service": "pricing"}}}}\''), note);
  });
});
