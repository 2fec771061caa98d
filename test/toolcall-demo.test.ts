/**
 * The offline simulator and the plan parser: the demo's figures sit within statistical bounds of
 * the independent-failure prediction, resilience lowers the blast radius, a seed reproduces a run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runDemo } from '../src/toolcall/simulator.js';
import { parsePlanText, validatePlan, matchesTools } from '../src/toolcall/plan.js';
import { FaultEngine } from '../src/toolcall/faults.js';
import { cliPath } from './helpers/repo.js';

test('without resilience the blast radius matches 1 − (1 − e)^TCAF within 4 standard deviations', async () => {
  const tasks = 1500;
  const result = await runDemo({ tasks, fanout: 8, errorRate: 0.02, seed: 3, correlated: false });
  const [plain, resilient] = result.runs;
  const p = result.predicted_blast_radius;
  assert.ok(Math.abs(p - 0.1492) < 0.001);
  const sd = Math.sqrt((p * (1 - p)) / tasks);
  assert.equal(plain!.slis.tcaf, 8);
  assert.ok(Math.abs(plain!.slis.blast_radius - p) < 4 * sd, `measured ${plain!.slis.blast_radius}, predicted ${p}`);
  assert.ok(Math.abs(plain!.slis.error_rate - 0.02) < 4 * Math.sqrt((0.02 * 0.98) / (tasks * 8)));
  assert.ok(resilient!.slis.blast_radius < plain!.slis.blast_radius / 5, `resilience: ${resilient!.slis.blast_radius}`);
  assert.ok(resilient!.slis.amplification > 1, 'retries are counted as extra attempts');
});

test('correlated bursts keep the marginal error rate but change the blast radius', async () => {
  const result = await runDemo({ tasks: 1500, fanout: 8, errorRate: 0.05, seed: 5, correlated: true });
  const plain = result.runs[0]!.slis;
  assert.ok(Math.abs(plain.error_rate - 0.05) < 0.02, `marginal error rate ${plain.error_rate}`);
  assert.ok(plain.blast_radius < result.predicted_blast_radius, 'bursts concentrate failures in fewer tasks');
});

test('the demo command reproduces the headline and is deterministic for a seed', () => {
  const run = (): string => spawnSync(process.execPath, [cliPath, 'mcp-chaos', 'demo', '--json'], { encoding: 'utf8' }).stdout;
  const first = run();
  assert.equal(first, run());
  const parsed = JSON.parse(first) as { runs: Array<{ slis: { tcaf: number; tcsr: number } }> };
  assert.equal(parsed.runs[0]!.slis.tcaf, 8);
  const text = spawnSync(process.execPath, [cliPath, 'mcp-chaos', 'demo'], { encoding: 'utf8' }).stdout;
  assert.match(text, /no resilience +TCAF=8\.0 TCSR=0\.9\d ETA=0\.9\d blast_radius=0\.\d\d/);
  assert.match(text, /with resilience TCAF=8\.0 TCSR=1\.00/);
  const bad = spawnSync(process.execPath, [cliPath, 'mcp-chaos', 'demo', '--error-rate', '2'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /error-rate/);
});

test('plans: mcp-chaos format accepted unchanged; bad fields named', async () => {
  const plan = await parsePlanText(
    'seed: 42\nfaults:\n  - type: latency\n    added_ms: 250\n    jitter_ms: 50\n    probability: 0.5\n  - type: drop_tool\n    tools: [get_logs]\n' +
      '  - type: error_injection\n    rate: 0.02\n  - type: burst_error\n    rate: 0.02\n    burst_len: 8\n  - type: server_degradation\n    episode_rate: 0.08\n    episode_len: 20\n',
  );
  assert.equal(plan.faults.length, 5);
  assert.equal(plan.faults[2]!.probability, 0.02);
  assert.equal(plan.faults[1]!.code, -32602);
  await assert.rejects(parsePlanText('faults: [{type: nope}]'), /faults\[0\]\.type: unknown fault type "nope"; accepted: latency/);
  await assert.rejects(parsePlanText('faults: [{type: latency, rate: 1}]'), /faults\[0\] \(latency\): unknown field \"rate\" \(accepted: type, tools/);
  await assert.rejects(parsePlanText('faults: [{type: oversized, bytes: -1}]'), /faults\[0\]\.bytes/);
  await assert.rejects(parsePlanText('faults: [{type: timeout, error_shape: grpc}]'), /faults\[0\]\.error_shape: expected is_error or jsonrpc/);
  await assert.rejects(parsePlanText('seeds: 1'), /plan: unknown field \"seeds\"/);
  await assert.rejects(parsePlanText('{ not yaml: ['), /not valid YAML or JSON/);
  assert.ok(matchesTools(['get_*'], 'get_logs') && !matchesTools(['get_*'], 'echo') && matchesTools([], 'x'));
});

test('after_calls and every select which matching calls are eligible; plan order composes latency and errors', () => {
  const engine = new FaultEngine(
    validatePlan({ faults: [{ type: 'latency', added_ms: 10 }, { type: 'error_injection', rate: 1, tools: ['a'], after_calls: 2, every: 3 }, { type: 'latency', added_ms: 5 }] }),
  );
  const hits = Array.from({ length: 10 }, () => engine.decide('a', 't'));
  assert.deepEqual(hits.map((d) => d.shortCircuit !== undefined), [false, false, true, false, false, true, false, false, true, false]);
  assert.equal(hits[2]!.delayMs, 15);
  assert.deepEqual(hits[2]!.tags, ['latency', 'error_injection', 'latency']);
});

test('drop_tool and registry_inconsistency with no tools target none (mcp-chaos semantics); other faults target all', () => {
  const engine = new FaultEngine(validatePlan({ faults: [{ type: 'drop_tool' }, { type: 'registry_inconsistency' }] }));
  assert.equal(engine.decide('a', 't').shortCircuit, undefined);
  assert.deepEqual(engine.listView([{ name: 'a' }]).map((t) => t.name), ['a']);
  const all = new FaultEngine(validatePlan({ faults: [{ type: 'rate_limit' }] }));
  assert.equal(all.decide('a', 't').shortCircuit?.tag, 'rate_limit');
});
