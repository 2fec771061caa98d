/**
 * A scenario's phases as experiments (src/scenario/compile.ts) and run on the experiment runner: the baseline has no
 * step and goes through the proxy in front of the url; the fault phase has one fault step per mapping the fault acts
 * on, and the verdict reads the fault's counters over every mapping, whichever carried the traffic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { runScenario, scenarioFromArguments } from '../src/scenario/index.js';
import { compileScenario } from '../src/scenario/compile.js';
import { closedPort, type TestServer } from './fixtures/load/servers.js';
import { LOOSE_SLOS, startApp, startAppCallingUpstream } from './fixtures/scenario/app.js';

const limits = makeConfig().scenario;
let app: TestServer;

before(async () => {
  app = await startApp();
});
after(async () => {
  await app.close();
});

describe('a scenario compiled into experiments', () => {
  test('the baseline has no step and the proxy in front; the fault phase its window', async () => {
    const spec = await scenarioFromArguments(
      'latency',
      { url: `${app.origin}/ok`, duration: '2s', latency: 50, fault_start: '500ms', fault_duration: '5s' },
      limits,
    );
    const baseline = compileScenario(spec, 'baseline', 7);
    assert.deepEqual(baseline.steps, []);
    assert.equal(baseline.seed, 7);
    assert.equal(baseline.front?.mapping.name, 'load');
    assert.equal(baseline.front?.http, false, 'a network fault: the proxy in front does not parse HTTP');
    const fault = compileScenario(spec, 'fault', 7);
    assert.deepEqual(
      fault.steps.map((step) => step.kind === 'fault' && [step.placement, step.atMs, step.forMs]),
      [[{ plane: 'proxy', target: 'load' }, 500, 1500]],
      'from fault_start to the end of the load',
    );
  });

  test('with proxies: one step per mapping, each named (an unnamed one by a name no caller can write)', async () => {
    const spec = await scenarioFromArguments(
      'latency',
      { url: `${app.origin}/ok`, latency: 50, proxies: ['0=127.0.0.1:1#db', '0=127.0.0.1:2'] },
      limits,
    );
    const fault = compileScenario(spec, 'fault', 1);
    assert.equal(fault.front, undefined);
    assert.deepEqual(
      fault.steps.map((step) => step.kind === 'fault' && step.placement),
      [
        { plane: 'proxy', target: 'db' },
        { plane: 'proxy', target: 'mapping 1' },
      ],
    );
    assert.deepEqual(
      fault.proxies.map((mapping) => mapping.text),
      spec.proxies.map((mapping) => mapping.text),
      "the mappings' text, as the report shows it, is the caller's",
    );
  });

  test('two mappings, the first unused: the fault acted on the second, and the verdict says so', async () => {
    const [unused, used] = [await closedPort(), await closedPort()];
    const caller = await startAppCallingUpstream(used);
    try {
      const spec = await scenarioFromArguments(
        'latency',
        {
          url: `${caller.origin}/`,
          duration: '1s',
          num_clients: 2,
          rps: 5,
          latency: 20,
          slos: LOOSE_SLOS,
          proxies: [`${unused}=127.0.0.1:${app.port}`, `${used}=127.0.0.1:${app.port}`],
        },
        limits,
      );
      const result = await runScenario(spec);
      const faults = result.run.proxy.faults;
      assert.deepEqual(
        faults.map((fault) => fault.name),
        ['latency', 'latency-2'],
        'one fault per mapping, named by its type',
      );
      assert.equal(faults[0]!.applications, 0, 'the first mapping carried nothing');
      assert.ok(faults[1]!.applications > 0, 'the second carried the app calls');
      assert.equal(result.verdict, 'passed', result.verdictReasons.join(' | '));
      assert.ok(
        result.verdictReasons.some((reason) => reason.includes(`the app made no connection to 127.0.0.1:${unused}`)),
        result.verdictReasons.join(' | '),
      );
    } finally {
      await caller.close();
    }
  });
});
