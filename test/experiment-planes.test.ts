/**
 * The other planes in an experiment: a run without load (its own clock) whose expectations are
 * commands run while a fault acts — the user's tests, passing and failing; a tool-call-plane step
 * against an MCP server over stdio with SLI thresholds; a probe step whose leaves reach the run
 * record. Real servers and processes; times only as wide inequalities.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { experimentRunRecord, readExperiment, runExperiment } from '../src/experiment/index.js';
import type { SafetyPolicy } from '../src/experiment/adapters/policy.js';
import { mcpTargetPath } from './helpers/repo.js';
import { freePort, startDependency } from './fixtures/experiment/stack.js';
import { ProgramPolicy } from '../src/consent/index.js';

const limits = makeConfig().scenario;
const policy: SafetyPolicy = {
  allowRemoteTargets: false,
  allowNonLoopbackBind: false,
  allowProduction: false,
};
const target = mcpTargetPath;

describe('without load', () => {
  test(
    'commands run while the fault acts: the one expecting the 503 ' +
      'passes, the one expecting 200 fails with its exit code',
    async () => {
      const dependency = await startDependency();
      const port = await freePort();
      const fetchStatus = (want: number) => [
        'node',
        '-e',
        `fetch('http://127.0.0.1:${port}/').then((r) => { ` +
          `console.log('status', r.status); process.exit(r.status === ${want} ` +
          `? 0 : 7); })`,
      ];
      try {
        const experiment = await readExperiment(
          {
            title: 'my tests under a 503',
            duration: '4s',
            proxies: [`${port}=127.0.0.1:${dependency.port}#dep`],
            method: [{ at: '1s', for: '2s', fault: { target: 'dep', type: 'error', status_code: 503 } }],
            expect: [
              { command: fetchStatus(503), name: 'sees the outage' },
              { command: fetchStatus(200), name: 'does not notice' },
              { command: ['no-such-program-here'], name: 'cannot start' },
            ],
          },
          { limits, policy },
        );
        const result = await runExperiment(experiment, { policy, programs: ProgramPolicy.owner() });
        const [sees, unaware, missing] = result.expectations;
        assert.equal(sees!.status, 'passed', sees!.reason);
        assert.equal(unaware!.status, 'failed');
        assert.match(unaware!.reason, /exit 7 at .*status 503/);
        assert.equal(missing!.status, 'inconclusive');
        assert.match(missing!.reason, /could not be started \(ENOENT\)/);
        assert.equal(result.faults[0]!.acted, true, result.faults[0]!.actedDetail);
        assert.ok(
          result.commands.every((command) => command.startedAtMs >= 900),
          JSON.stringify(result.commands),
        );
        assert.equal(result.load, null);
        assert.equal(result.verdict, 'failed');
      } finally {
        await dependency.close();
      }
    },
  );
});

describe('MCP planes', () => {
  test(
    'a tool-call step with SLI thresholds and a probe step; the ' +
      "probe's leaves and the injected tool-call faults reach the run " +
      'record',
    async () => {
      const experiment = await readExperiment(
        {
          title: 'an MCP server under tool-call faults',
          duration: '1s',
          method: [
            {
              name: 'drifting schema',
              at: '0s',
              toolcall: {
                command: process.execPath,
                args: [target, 'stdio'],
                plan: { seed: 1, faults: [{ type: 'schema_drift', tools: ['get_items'], probability: 1 }] },
                calls: [{ tool: 'get_items', arguments: { count: 3 } }],
                tasks: 5,
              },
              expect: ['tcsr >= 0.9', 'availability >= 99%'],
            },
            {
              name: 'probe',
              at: '0s',
              probe: { command: process.execPath, args: [target, 'stdio'], families: ['PROTO'] },
            },
          ],
        },
        { limits, policy },
      );
      const result = await runExperiment(experiment, { policy, programs: ProgramPolicy.owner() });
      const tcsr = result.expectations.find((e) => e.id === 'method[0].expect[0]')!;
      const availability = result.expectations.find((e) => e.id === 'method[0].expect[1]')!;
      assert.equal(tcsr.status, 'failed', tcsr.reason);
      assert.match(tcsr.figure, /^tcsr 0 over 5 calls/);
      assert.equal(availability.status, 'passed', availability.reason);
      const probe = result.steps.find((step) => step.kind === 'probe')!;
      assert.ok(probe.probe, probe.error);
      assert.ok(
        probe.probe.leaves.some((leaf) => leaf.id.startsWith('FAULT-PROTO-')),
        JSON.stringify(probe.probe.leaves),
      );
      const record = experimentRunRecord(result);
      assert.ok(record.injected.includes('toolcall:schema_drift'), record.injected.join(', '));
      assert.ok((record.leaves ?? []).some((leaf) => leaf.id.startsWith('FAULT-PROTO-')));
    },
  );
});
