/**
 * The offline simulator and the plan parser: the demo reproduces mcp-chaos's published table from
 * Python's random stream, its figures sit within statistical bounds of the independent-failure
 * prediction, resilience lowers the blast radius, a seed reproduces a run; plans are bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runDemo } from '../src/toolcall/simulator.js';
import { parsePlanText, validatePlan, matchesTools } from '../src/toolcall/plan.js';
import { FaultEngine } from '../src/toolcall/faults.js';
import { globMatches } from '../src/toolcall/glob.js';
import { createPythonRandom } from '../src/toolcall/python-random.js';
import { SlotPool } from '../src/toolcall/slots.js';
import { cliPath } from './helpers/repo.js';
import { runCliBatch } from './helpers/cli-batch.js';

test('without resilience the blast radius matches 1 − (1 − e)^TCAF within 4 standard deviations', async () => {
  const tasks = 1500;
  const result = await runDemo({ tasks, fanout: 8, errorRate: 0.02, seed: 3, correlated: false });
  const [plain, resilient] = result.runs;
  const p = result.nominal_predicted_blast_radius;
  assert.ok(Math.abs(p - 0.1492) < 0.001);
  const sd = Math.sqrt((p * (1 - p)) / tasks);
  assert.equal(plain!.slis.tcaf, 8);
  assert.ok(Math.abs(plain!.slis.blast_radius - p) < 4 * sd, `measured ${plain!.slis.blast_radius}, predicted ${p}`);
  assert.ok(Math.abs(plain!.slis.error_rate - 0.02) < 4 * Math.sqrt((0.02 * 0.98) / (tasks * 8)));
  assert.ok(resilient!.slis.blast_radius < plain!.slis.blast_radius / 5, `resilience: ${resilient!.slis.blast_radius}`);
  assert.ok(resilient!.slis.amplification > 1, 'retries are counted as extra attempts');
});

test(
  'correlated bursts keep the marginal error rate; the prediction ' + 'uses the measured rate, not the nominal one',
  async () => {
    const result = await runDemo({ tasks: 1500, fanout: 8, errorRate: 0.05, seed: 5, correlated: true });
    const plain = result.runs[0]!.slis;
    assert.ok(Math.abs(plain.error_rate - 0.05) < 0.02, `marginal error rate ${plain.error_rate}`);
    assert.ok(plain.blast_radius < result.predicted_blast_radius, 'bursts concentrate failures in fewer tasks');
    const fromMeasured = 1 - Math.pow(1 - plain.error_rate, plain.tcaf);
    assert.ok(
      Math.abs(result.predicted_blast_radius - fromMeasured) < 1e-3 /* e is shown rounded to 4 places */,
      `${result.predicted_blast_radius} vs ${fromMeasured}`,
    );
    assert.notEqual(plain.error_rate, 0.05);
    assert.ok(Math.abs(result.nominal_predicted_blast_radius - (1 - Math.pow(0.95, 8))) < 1e-4);
  },
);

test(
  "the demo command prints mcp-chaos's published table exactly, " +
    'says what counts against A and C, and is deterministic',
  async () => {
    // The table as the built CLI prints it, in a process of its own; the other runs through main() in one child
    // (helpers/cli-batch.ts: a process start costs ~0.7 s of CPU here), the JSON twice in it, so a seed reproduces
    // a run even after one has gone before in the same process.
    const text = spawnSync(process.execPath, [cliPath, 'mcp-chaos', 'demo'], { encoding: 'utf8' }).stdout;
    const [json, again, bad] = await runCliBatch([
      { args: ['mcp-chaos', 'demo', '--json'] },
      { args: ['mcp-chaos', 'demo', '--json'] },
      { args: ['mcp-chaos', 'demo', '--error-rate', '2'] },
    ]);
    const lines = text.split('\n');
    // The rows as mcp-chaos prints them (README and a re-run of its simulator): same figures, same layout.
    assert.ok(lines.includes('no resilience    TCAF=8.0  TCSR= 0.98  ETA= 0.98  blast_radius= 0.12'), text);
    assert.ok(lines.includes('with resilience  TCAF=8.0  TCSR= 1.00  ETA= 1.00  blast_radius= 0.00'), text);
    assert.match(text, /no resilience +A=0\.98 +C=1\.00/);
    assert.match(text, /Availability A counts calls that got no answer: the injected errors here \(JSON-RPC errors/);
    assert.match(text, /Correctness C counts answers a client cannot use/);
    assert.match(text, /at the measured e = 0\.0163: 0\.123 \(at the nominal e = 0\.02: 0\.149\)/);
    assert.equal(json!.code, 0, json!.stderr);
    assert.equal(json!.stdout, again!.stdout);
    const parsed = JSON.parse(json!.stdout) as {
      runs: Array<{ slis: { tcaf: number; calls: number; tcsr: number; availability: number; correctness: number } }>;
    };
    // 26 of mcp-chaos's 1600 calls fail with seed 42 (its TCSR 0.98375), and 24 of its 200 tasks.
    assert.deepEqual(
      [
        parsed.runs[0]!.slis.calls,
        parsed.runs[0]!.slis.tcsr,
        parsed.runs[0]!.slis.availability,
        parsed.runs[0]!.slis.correctness,
      ],
      [1600, 0.9838, 0.9838, 1],
    );
    assert.equal(bad!.code, 2);
    assert.match(bad!.stderr, /error-rate/);
  },
);

test("the demo's random stream is Python's random.Random: the same draws for integer and text seeds", () => {
  // Values printed by CPython 3.11: [random.Random(s).random() for _ in range(3)].
  const expected: Array<[number | string, number[]]> = [
    [42, [0.6394267984578837, 0.025010755222666936, 0.27502931836911926]],
    [0, [0.8444218515250481, 0.7579544029403025, 0.420571580830845]],
    [-5, [0.6229016948897019, 0.7417869892607294, 0.7951935655656966]],
    [2 ** 40 + 7, [0.6137037779936511, 0.8149162973309487, 0.9450115087592873]],
    ['abc', [0.7720246314157545, 0.5581691373899791, 0.7095325359498886]],
    ['héllo', [0.013203794245314593, 0.8358731799907464, 0.28870949897883735]],
  ];
  for (const [seed, draws] of expected) {
    const random = createPythonRandom(seed);
    assert.deepEqual([random.next(), random.next(), random.next()], draws, `seed ${seed}`);
  }
  const long = createPythonRandom(42);
  for (let i = 0; i < 1000; i++) long.next(); // past the first twist of the state (624 words)
  assert.equal(long.next(), 0.09935462460613032);
});

test('plans: mcp-chaos format accepted unchanged; bad fields named', async () => {
  const plan = await parsePlanText(
    'seed: 42\nfaults:\n  - type: latency\n    added_ms: 250\n    ' +
      'jitter_ms: 50\n    probability: 0.5\n  - type: drop_tool\n    ' +
      'tools: [get_logs]\n' +
      '  - type: error_injection\n    rate: 0.02\n  - type: burst_error\n ' +
      '   rate: 0.02\n    burst_len: 8\n  - type: server_degradation\n  ' +
      '  episode_rate: 0.08\n    episode_len: 20\n',
  );
  assert.equal(plan.faults.length, 5);
  assert.equal(plan.faults[2]!.probability, 0.02);
  assert.equal(plan.faults[1]!.code, -32602);
  await assert.rejects(
    parsePlanText('faults: [{type: nope}]'),
    /plan\.faults\[0\]: type must be one of latency, .*head_of_line_blocking \(got "nope"\)/,
  );
  await assert.rejects(
    parsePlanText('faults: [{type: latency, rate: 1}]'),
    /faults\[0\] \(latency\): unknown field "rate" \(accepted: type, tools/,
  );
  await assert.rejects(
    parsePlanText('faults: [{type: oversized, bytes: -1}]'),
    /faults\[0\] \(oversized\): bytes must be an integer from 1/,
  );
  await assert.rejects(
    parsePlanText('faults: [{type: timeout, error_shape: grpc}]'),
    /faults\[0\] \(timeout\): error_shape must be one of is_error, jsonrpc \(got "grpc"\)/,
  );
  await assert.rejects(parsePlanText('seeds: 1'), /plan: unknown field "seeds"/);
  await assert.rejects(parsePlanText('{ not yaml: ['), /not valid YAML or JSON/);
  // JSON is read without yaml, and a key given twice (at any depth) is refused, naming it.
  await assert.rejects(parsePlanText('{"seed": 1, "seed": 2}'), /plan: the key "seed" is given twice in one object/);
  await assert.rejects(
    parsePlanText('{"faults": [{"type": "latency"}, {"type": "timeout", "tools": ["a,\\"b"], "type": "x"}]}'),
    /plan: the key "type" is given twice in one object/,
  );
  const spelled = { seed: 'a"b', faults: [{ type: 'latency', tools: ['x', '{"y"'], added_ms: 5 }], task_idle_ms: 7 };
  assert.deepEqual(
    await parsePlanText(JSON.stringify(spelled, null, 2)),
    await parsePlanText(`seed: 'a"b'\nfaults: [{type: latency, tools: [x, '{"y"'], added_ms: 5}]\ntask_idle_ms: 7`),
  );
  await assert.rejects(
    parsePlanText('deadlines: {__proto__: 5}'),
    /plan\.deadlines: field "__proto__" is not accepted/,
  );
  assert.ok(matchesTools(['get_*'], 'get_logs') && !matchesTools(['get_*'], 'echo') && matchesTools([], 'x'));
});

test('plan globs are bounded, and matching a glob never backtracks', async () => {
  await assert.rejects(
    parsePlanText(JSON.stringify({ faults: [{ type: 'error_injection', tools: ['*'.repeat(50_000)] }] })),
    /faults\[0\] \(error_injection\): tools must be a list of at most 256 tool names or globs, each 1 to 256 characters/,
  );
  await assert.rejects(
    parsePlanText(
      JSON.stringify({ faults: [{ type: 'drop_tool', tools: Array.from({ length: 257 }, (_, i) => `t${i}`) }] }),
    ),
    /tools must be a list of at most 256/,
  );
  await assert.rejects(
    parsePlanText('x'.repeat(1024 * 1024 + 1)),
    /plan: a plan of 1048577 characters; at most 1048576/,
  );
  // A pattern that makes a backtracking matcher explore every way to split the name, against a name that fails at the
  // end.
  const pattern = '*a'.repeat(120) + '*b';
  assert.equal(validatePlan({ faults: [{ type: 'error_injection', tools: [pattern] }] }).faults[0]!.tools[0], pattern);
  assert.equal(globMatches(pattern, 'a'.repeat(20_000)), false);
  assert.equal(globMatches(pattern, 'a'.repeat(20_000) + 'b'), true);
  const cases: Array<[string, string, boolean]> = [
    ['get_*', 'get_logs', true],
    ['get_*', 'xget_logs', false],
    ['*_logs', 'get_logs', true],
    ['g?t_*s', 'get_logs', true],
    ['g?t', 'gt', false],
    ['**', '', true],
    ['a*b*c', 'abbbc', true],
    ['a*b*c', 'acb', false],
    ['?', '😀', true],
    ['read.file', 'readxfile', false],
    ['[abc]', '[abc]', true],
  ];
  for (const [glob, name, expected] of cases) assert.equal(globMatches(glob, name), expected, `${glob} vs ${name}`);
});

test(
  'head_of_line_blocking: slots (default 1) and tools only; calls ' +
    'wait in arrival order and a release hands the slot on',
  async () => {
    const plan = validatePlan({
      faults: [{ type: 'head_of_line_blocking', slots: 2, tools: ['slow*'] }, { type: 'head_of_line_blocking' }],
    });
    assert.deepEqual([plan.faults[0]!.slots, plan.faults[1]!.slots], [2, 1]);
    assert.throws(
      () => validatePlan({ faults: [{ type: 'head_of_line_blocking', probability: 0.5 }] }),
      /\(head_of_line_blocking\): unknown field "probability" \(accepted: type, tools, slots\)/,
    );
    assert.throws(
      () => validatePlan({ faults: [{ type: 'head_of_line_blocking', slots: 0 }] }),
      /slots must be an integer from 1 to 10000/,
    );
    const engine = new FaultEngine(plan);
    assert.equal(engine.decide('slow_tool', 't').gates.length, 2, 'a slow tool passes both gates, in plan order');
    assert.equal(engine.decide('fast', 't').gates.length, 1);

    const pool = new SlotPool(1);
    const order: string[] = [];
    const first = pool.acquire();
    assert.equal(first.immediate, true);
    const second = pool.acquire();
    const third = pool.acquire();
    const fourth = pool.acquire();
    assert.deepEqual([second.immediate, third.immediate, pool.waiting], [false, false, 3]);
    void second.ready.then(() => order.push('second'));
    void third.ready.then(() => order.push('third'));
    void fourth.ready.then(() => order.push('fourth'));
    third.release(); // gives up while waiting: skipped
    first.release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(order, ['second']);
    second.release();
    second.release(); // idempotent: frees one slot, not two
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(order, ['second', 'fourth']);
    const fifth = pool.acquire();
    assert.equal(fifth.immediate, false, 'fourth still holds the only slot');
  },
);

test('after_calls and every select which matching calls are eligible; plan order composes latency and errors', () => {
  const engine = new FaultEngine(
    validatePlan({
      faults: [
        { type: 'latency', added_ms: 10 },
        { type: 'error_injection', rate: 1, tools: ['a'], after_calls: 2, every: 3 },
        { type: 'latency', added_ms: 5 },
      ],
    }),
  );
  const hits = Array.from({ length: 10 }, () => engine.decide('a', 't'));
  assert.deepEqual(
    hits.map((d) => d.shortCircuit !== undefined),
    [false, false, true, false, false, true, false, false, true, false],
  );
  assert.equal(hits[2]!.delayMs, 15);
  assert.deepEqual(hits[2]!.tags, ['latency', 'error_injection', 'latency']);
});

test(
  'drop_tool and registry_inconsistency with no tools target none ' + '(mcp-chaos semantics); other faults target all',
  () => {
    const engine = new FaultEngine(
      validatePlan({ faults: [{ type: 'drop_tool' }, { type: 'registry_inconsistency' }] }),
    );
    assert.equal(engine.decide('a', 't').shortCircuit, undefined);
    assert.deepEqual(
      engine.listView([{ name: 'a' }]).map((t) => t.name),
      ['a'],
    );
    const all = new FaultEngine(validatePlan({ faults: [{ type: 'rate_limit' }] }));
    assert.equal(all.decide('a', 't').shortCircuit?.tag, 'rate_limit');
  },
);
