/**
 * The windows an experiment is judged over are the ones it ran: an abort ends inject at the abort, recovery is judged
 * from it and the steady state from recover_within after it, in the verdicts, the timeline and every report; an
 * experiment that injects nothing is judged over its whole run. Real loopback servers (the example's app, an app
 * answering 200); times only as wide inequalities or read back from the run itself.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { formatDuration } from '../src/duration.js';
import {
  experimentRunRecord,
  readExperiment,
  renderJunit,
  renderMarkdown,
  runExperiment,
  type ExperimentResult,
} from '../src/experiment/index.js';
import type { SafetyPolicy } from '../src/experiment/adapters/policy.js';
import { renderPlan, summarizePlan } from '../src/experiment/describe.js';
import { ProgramPolicy } from '../src/consent/index.js';
import { InputError } from '../src/kernel/errors.js';
import { startExampleStack } from './fixtures/experiment/stack.js';
import { startOkApp } from './helpers/ok-app.js';

const limits = makeConfig().scenario;
const policy: SafetyPolicy = { allowRemoteTargets: false, allowNonLoopbackBind: false, allowProduction: false };

async function run(file: unknown): Promise<ExperimentResult> {
  const experiment = await readExperiment(file, { limits, policy });
  return runExperiment(experiment, { policy, programs: ProgramPolicy.owner() });
}

const byId = (result: ExperimentResult, id: string) => {
  const found = result.expectations.find((e) => e.id === id);
  assert.ok(found, `${id} in ${result.expectations.map((e) => e.id).join(', ')}`);
  return found;
};

const span = (window: { fromMs: number; toMs: number } | null) => [window?.fromMs, window?.toMs];

/**
 * The example app without its fallback: the weather service down from 2 s for 10 s, which the abort rule stops about
 * a second in. The steady state is judged loosely (the machine's speed is not what is tested): what is tested is
 * where it is judged.
 */
function abortedWeather(stack: { weatherPort: number; proxyPort: number; appPort: number }, recoverWithin?: string) {
  return {
    title: 'weather outage, no fallback',
    load: {
      url: `http://127.0.0.1:${stack.appPort}/weather`,
      rps: 20,
      duration: recoverWithin ? '20s' : '8s',
      timeout: '30s',
    },
    proxies: [`${stack.proxyPort}=127.0.0.1:${stack.weatherPort}#weather`],
    steady_state: ['errors < 20%', { http: 'GET /health', expect: 'status == 200', every: '250ms', timeout: '30s' }],
    method: [
      {
        name: 'weather down',
        at: '2s',
        for: recoverWithin ? '10s' : '5s',
        fault: { target: 'weather', type: 'error', statusCode: 503 },
      },
    ],
    expect: ['errors < 5%', { slo: 'errors < 5%', during: 'weather down', name: 'during the step' }],
    ...(recoverWithin ? { recover_within: recoverWithin } : {}),
    abort_when: 'errors > 50% for 1s',
  };
}

describe('after an abort, the windows are cut at it', () => {
  test('with recover_within: inject ends at the abort, the steady state is judged from recover_within after it', async () => {
    const stack = await startExampleStack({ fallback: false });
    let result: ExperimentResult;
    try {
      result = await run(abortedWeather(stack, '2s'));
    } finally {
      await stack.stop();
    }
    const report = renderMarkdown(result);
    assert.ok(result.aborted, report);
    const at = result.aborted.atMs;
    const end = result.aborted.endedAtMs!;
    // Planned: inject 2s–12s, the steady state after recovery 14s–20s, after the run's early end.
    assert.ok(at > 2000 && at < 12_000 && end < 14_000, `aborted at ${at}, ended at ${end}`);
    assert.equal(result.durationMs, end);
    assert.deepEqual(result.phases, {
      baseline: { label: 'baseline', fromMs: 0, toMs: 2000 },
      inject: { label: 'inject', fromMs: 2000, toMs: at },
      recover: { label: 'recover', fromMs: at, toMs: end },
    });
    for (const id of ['expect[0]', 'expect[1]', 'abort_when'])
      assert.deepEqual(span(byId(result, id).window), [2000, at]);
    assert.deepEqual(span(byId(result, 'recover_within').window), [at, end]);
    for (const id of ['steady_state[0].after', 'steady_state[1].after']) {
      const after = byId(result, id);
      assert.deepEqual(span(after.window), [at + 2000, end], id);
      // Judged where it was measured: requests and probes fell in it.
      assert.notEqual(after.status, 'inconclusive', `${id}: ${after.reason}`);
    }
    assert.ok(
      result.checks['steady_state[1].after']!.some((check) => check.atMs >= at + 2000 - 50 && check.atMs < end),
      JSON.stringify(result.checks['steady_state[1].after']),
    );
    assert.ok(!result.verdictReasons.some((reason) => reason.startsWith('inconclusive')), report);
    // The reports say the same windows.
    assert.match(
      report,
      new RegExp(`Baseline 0ms–2s, inject 2s–${formatDuration(at)}, recover ${formatDuration(at)}–`),
    );
    assert.ok(report.includes(`after recover_within ${formatDuration(at + 2000)}–${formatDuration(end)}`), report);
    // No empty window at the end: `6s–6s` as a whole, not the tail of `4.986s–6s`.
    const atEnd = formatDuration(end).replace('.', '\\.');
    assert.doesNotMatch(report, new RegExp(`(?<![\\d.])${atEnd}–${atEnd}`));
    const junit = renderJunit(result);
    assert.ok(junit.includes(`expect[0]: errors &lt; 5%" time="${((at - 2000) / 1000).toFixed(3)}"`), junit);
    const record = experimentRunRecord(result);
    assert.deepEqual(record.phases, result.phases);
  });

  test('without recover_within: the run goes to its end, recovery and the steady state judged from the abort', async () => {
    const stack = await startExampleStack({ fallback: false });
    let result: ExperimentResult;
    try {
      result = await run(abortedWeather(stack));
    } finally {
      await stack.stop();
    }
    const report = renderMarkdown(result);
    assert.ok(result.aborted, report);
    const at = result.aborted.atMs;
    assert.ok(at > 2000 && at < 7000, `aborted at ${at}`);
    assert.equal(result.aborted.endedAtMs, undefined);
    assert.equal(result.durationMs, 8000);
    assert.deepEqual(span(result.phases.inject), [2000, at]);
    assert.deepEqual(span(result.phases.recover), [at, 8000]);
    for (const id of ['expect[0]', 'expect[1]']) assert.deepEqual(span(byId(result, id).window), [2000, at]);
    for (const id of ['steady_state[0].after', 'steady_state[1].after']) {
      const after = byId(result, id);
      assert.equal(after.window!.label, 'after the last fault');
      assert.deepEqual(span(after.window), [at, 8000], id);
      assert.notEqual(after.status, 'inconclusive', `${id}: ${after.reason}`);
    }
  });
});

describe('an experiment that injects nothing', () => {
  const file = (url: string, extra: Record<string, unknown> = {}) => ({
    title: 'the app under load alone',
    load: { url, rps: 20, duration: '3s', timeout: '30s' },
    steady_state: ['errors < 1%'],
    expect: ['errors < 1%', 'GET / -> status == 200', { slo: 'p99 < 20s', during: 'baseline' }],
    ...extra,
  });

  test('is judged over its whole run: validate lists those windows, and the run passes', async () => {
    const app = await startOkApp();
    try {
      const experiment = await readExperiment(file(app.url), { limits, policy });
      const plan = renderPlan(summarizePlan(experiment));
      assert.ok(!plan.includes('[0ms–0ms]'), plan);
      assert.match(plan, /phases: none \(no fault or tool-call step\)/);
      for (const e of experiment.expectations) assert.deepEqual(span(e.window), [0, 3000], e.id);
      // The steady state is judged once, over the run: before and after would be the same window twice.
      assert.deepEqual(
        experiment.expectations.map((e) => [e.id, e.window.label]),
        [
          ['steady_state[0]', 'run'],
          ['expect[0]', 'run'],
          ['expect[1]', 'run'],
          ['expect[2]', 'baseline'],
        ],
      );
      const result = await runExperiment(experiment, { policy, programs: ProgramPolicy.owner() });
      const report = renderMarkdown(result);
      assert.equal(result.verdict, 'passed', report);
      assert.ok(report.includes('Baseline 0ms–3s: the whole run'), report);
      assert.ok(byId(result, 'steady_state[0]').title.startsWith('steady state over the run: '));
    } finally {
      await app.close();
    }
  });

  test('inject, recover and recover_within are refused, naming the field and the fix', async () => {
    const url = 'http://127.0.0.1:9/';
    for (const [extra, message] of [
      [{ expect: [{ slo: 'errors < 1%', during: 'inject' }] }, /expect\[0\]\.during: "inject" is empty.*during: run/],
      [{ expect: [{ slo: 'errors < 1%', during: 'recover' }] }, /expect\[0\]\.during: "recover" is empty/],
      [{ recover_within: '2s' }, /recover_within: there is no fault or tool-call step/],
    ] as const)
      await assert.rejects(readExperiment(file(url, extra), { limits, policy }), (error: unknown) => {
        assert.ok(error instanceof InputError);
        assert.match(error.message, message);
        return true;
      });
  });
});
