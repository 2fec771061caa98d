/**
 * Issue 36's other findings on what an experiment and the probe start: a rollback does not outlive
 * a cancelled run, the production guard counts commands, probe writes and `chaos inject` as
 * injecting, and a run without a fault says so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { experimentFrom } from '../src/experiment/load-file.js';
import { runExperiment } from '../src/experiment/index.js';
import { ProgramPolicy } from '../src/consent/index.js';
import { makeConfig } from '../src/config.js';
import { CancelledError } from '../src/kernel/errors.js';
import { connectStdio, textOf } from './helpers/mcp.js';
import { alive, runCliProcess } from './helpers/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-experiment-safety-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const limits = makeConfig().scenario;
const policy = {
  ...limits,
  allowProduction: false,
};

async function experimentOf(body: Record<string, unknown>) {
  return experimentFrom({ experiment: { title: 'safety', ...body } }, { limits, policy }, 'experiment');
}

async function until(check: () => boolean, limitMs: number): Promise<void> {
  const end = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('not within the limit');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a rollback started after a cancel is ended within the cancel bound, with what it started', async () => {
  const pidFile = join(dir, 'rollback.pid');
  const experiment = await experimentOf({
    duration: '30s',
    rollbacks: [{ command: ['/bin/sh', '-c', `echo $$ > '${pidFile}'; exec sleep 315`] }],
  });
  const cancel = new AbortController();
  const started = Date.now();
  const run = runExperiment(experiment, {
    policy,
    programs: ProgramPolicy.owner(),
    signal: cancel.signal,
    cancelledRollbackMs: 300,
  });
  setTimeout(() => cancel.abort(), 200);
  await assert.rejects(run, CancelledError);
  const elapsed = Date.now() - started;
  assert.ok(existsSync(pidFile), 'the rollback ran after the cancel');
  const pid = Number(readFileSync(pidFile, 'utf8'));
  // 315 s unbounded, 60 s by the default bound: well under either, on a loaded machine too.
  assert.ok(elapsed < 30_000, `the cancelled run returned after ${elapsed} ms`);
  await until(() => !alive(pid), 10_000);
});

test('a rollback is bounded by its default timeout when it sets none', async () => {
  const experiment = await experimentOf({ duration: '100ms', rollbacks: [{ command: ['sleep', '315'] }] });
  assert.equal(experiment.rollbacks[0]!.timeoutMs, 60_000);
  assert.equal((await experimentOf({ duration: '100ms', expect: [{ command: ['true'] }] })).expectations.length, 1);
});

test('an experiment with no fault that passed says "no fault in this experiment"', async () => {
  const experiment = await experimentOf({ duration: '200ms', expect: [{ command: ['true'] }] });
  const result = await runExperiment(experiment, { policy, programs: ProgramPolicy.owner() });
  assert.equal(result.verdict, 'passed');
  assert.match(result.verdictReasons[0]!, /held; no fault in this experiment/);
  assert.doesNotMatch(result.verdictReasons.join('\n'), /every fault acted/);
});

test('production: an experiment that only runs commands, and probe allow_writes, are refused over MCP', async () => {
  const session = await connectStdio(['mcp', '--allow-commands'], { NODE_ENV: 'production' });
  try {
    const marker = join(dir, 'production-marker');
    const experiment = (await session.client.callTool({
      name: 'fault_run_experiment',
      arguments: { experiment: { title: 't', duration: '200ms', expect: [{ command: ['touch', marker] }] } },
    })) as CallToolResult;
    assert.equal(experiment.isError, true);
    assert.match(
      textOf(experiment),
      /^refused to run the experiment: NODE_ENV=production says this is production; set FAULTLINE_ALLOW_PRODUCTION=1/,
    );
    assert.equal(existsSync(marker), false);
    const probe = (await session.client.callTool({
      name: 'fault_probe_mcp_server',
      arguments: { command: 'touch', args: [marker], allow_writes: true },
    })) as CallToolResult;
    assert.equal(probe.isError, true);
    assert.match(textOf(probe), /^refused to call tools that write: NODE_ENV=production/);
    assert.equal(existsSync(marker), false);
  } finally {
    await session.close();
  }
});

test('production: faultline probe --allow-writes is refused, exit 2; chaos inject leaves it to the proxy', async () => {
  // The proxy behind an admin API was guarded at its start, in its own environment: this shell's says nothing of it.
  const inject = await runCliProcess(['chaos', 'inject', '34000', 'latency', '--admin', '127.0.0.1:9'], {
    NODE_ENV: 'production',
    FAULTLINE_ADMIN_TOKEN: 't',
  });
  assert.equal(inject.code, 1, inject.stderr);
  assert.doesNotMatch(inject.stderr, /production/);
  const marker = join(dir, 'probe-marker');
  const probe = await runCliProcess(['probe', '--allow-writes', '--', 'touch', marker], { APP_ENV: 'prod' });
  assert.equal(probe.code, 2, probe.stderr);
  assert.match(
    probe.stderr,
    /refused to call tools that write: APP_ENV=prod says this is production; pass --allow-production/,
  );
  assert.equal(existsSync(marker), false);
});
