/**
 * `npm run bench:check` (bench/check.ts): its verdicts on fixture checks (a pass, a miss, a
 * throw, a hang whose process group is killed), its exit codes, its JSON, and that every timing
 * check registered in bench/checks/ is valid and listed in bench/README.md. The timing checks
 * themselves are not run here: they measure the machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { comparedValue, formatCompared, formatTarget, meets, type Row } from '../bench/lib/check.js';
import { checksMarkdown, discoverChecks, README_END, README_START } from '../bench/lib/registry.js';
import { alive } from './helpers/processes.js';
import { repoRoot } from './helpers/repo.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const runner = join(repoRoot, 'dist', 'bench', 'check.js');
const fixtures = join(repoRoot, 'dist', 'test', 'fixtures', 'bench-checks');

function benchCheck(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [runner, '--dir', fixtures, ...args],
      { env: { ...process.env, ...env }, timeout: HANG_GUARD_MS },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const row = (value: number, target: Row['target'], peer?: number): Row => ({
  label: 'r',
  ours: { label: 'ours', value, unit: 'ms' },
  ...(peer === undefined ? {} : { peer: { label: 'peer', value: peer, unit: 'ms' } }),
  target,
});

test(
  'a row meets its target on the value, the ratio or the ' + 'difference; bounds are inclusive; no figure never meets',
  () => {
    assert.equal(meets(row(3, { on: 'value', atMost: 3 })), true);
    assert.equal(meets(row(3.01, { on: 'value', atMost: 3 })), false);
    assert.equal(meets(row(8, { on: 'ratio', atMost: 4 }, 2)), true);
    assert.equal(meets(row(8, { on: 'ratio', atLeast: 5 }, 2)), false);
    assert.equal(meets(row(7.5, { on: 'difference', atLeast: -0.75, atMost: 0.75 }, 7)), true);
    assert.equal(meets(row(6, { on: 'difference', atLeast: -0.75, atMost: 0.75 }, 7)), false);
    // A ratio or difference without a peer, a zero peer, NaN, or no bound at all: never met.
    assert.equal(meets(row(1, { on: 'ratio', atMost: 10 })), false);
    assert.equal(meets(row(1, { on: 'ratio', atMost: 10 }, 0)), false);
    assert.equal(meets(row(Number.NaN, { on: 'value', atMost: 10 })), false);
    assert.equal(meets(row(1, { on: 'value' })), false);
    assert.equal(comparedValue(row(9, { on: 'ratio', atMost: 1 }, 3)), 3);
    assert.equal(formatCompared(row(7.21, { on: 'difference', atMost: 1 }, 7)), 'difference +0.210 ms');
    assert.equal(formatTarget(row(1, { on: 'ratio', atLeast: 0.85, atMost: 1.05 }, 1)), '0.850 … 1.05×');
    assert.equal(formatTarget(row(1, { on: 'value', atMost: 1000 })), '≤ 1,000 ms');
  },
);

test(
  'bench:check prints each figure beside its peer with its verdict, ' +
    'and exits 0 only when every row meets its target',
  async () => {
    const passing = await benchCheck(['fixture.pass']);
    assert.equal(passing.code, 0, passing.stderr);
    assert.match(passing.stdout, /^fixture\.pass .*a figure twice its peer$/m);
    assert.match(passing.stdout, /^ {2}PASS {2}double {2}ours 2 ms {2}vs peer 1 ms {2}ratio 2× {2}target ≤ 3×$/m);
    assert.match(passing.stdout, /1 checks, 1 rows: 1 met, 0 missed/);

    const missing = await benchCheck(['fixture.pass', 'fixture.miss']);
    assert.equal(missing.code, 1);
    assert.match(missing.stdout, /^ {2}PASS {2}under .*target ≤ 4 ms$/m);
    assert.match(
      missing.stdout,
      /^ {2}MISS {2}over .*vs peer 4\.50 ms {2}difference \+0\.500 ms {2}target -1 … 0\.250 ms$/m,
    );
    assert.match(missing.stdout, /2 checks, 3 rows: 2 met, 1 missed/);
    assert.match(missing.stdout, /^ {2}missed: fixture\.miss over$/m);
    assert.match(missing.stderr, /fixture\.miss: measuring the fixture/, "a check's log lines go to stderr");
  },
);

test('a check that throws or outlasts its bound fails the run; a hung one is killed with what it started', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-check-'));
  try {
    const thrown = await benchCheck(['fixture.throws']);
    assert.equal(thrown.code, 1);
    assert.match(thrown.stdout, /^ {2}FAIL {2}Error: the fixture broke$/m);
    assert.match(thrown.stdout, /1 failed \(fixture\.throws\)/);

    const pidFile = join(dir, 'pid');
    const hung = await benchCheck(['fixture.hangs'], { BENCH_FIXTURE_PID_FILE: pidFile });
    assert.equal(hung.code, 1);
    assert.match(hung.stdout, /FAIL {2}no result within 1\.5 s \(killed\)/);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(alive(pid), false, 'the process the hung check started was killed with it');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bench:check lists its checks, selects by name or area, refuses unknown names, and writes JSON', async () => {
  const listed = await benchCheck(['--list']);
  assert.equal(listed.code, 0);
  for (const name of ['fixture.hangs', 'fixture.miss', 'fixture.pass', 'fixture.throws'])
    assert.match(listed.stdout, new RegExp(`^${name.replace('.', '\\.')}$`, 'm'));
  assert.match(listed.stdout, /^ {2}target: {3}at most 3 times the peer$/m);
  const area = await benchCheck(['--list', 'fixture']);
  assert.equal(area.stdout.match(/^fixture\./gm)?.length, 4);

  const unknown = await benchCheck(['fixture.nope']);
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /no check named "fixture\.nope"; known: fixture\.hangs, fixture\.miss, fixture\.pass, fixture\.throws/,
  );
  assert.equal((await benchCheck(['--frobnicate'])).code, 2);

  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-json-'));
  try {
    const file = join(dir, 'out.json');
    assert.equal((await benchCheck(['fixture.miss', '--json', file])).code, 1);
    const written = JSON.parse(readFileSync(file, 'utf8')) as {
      checks: Array<{ name: string; rows: Array<{ label: string; compared: number; pass: boolean }> }>;
    };
    assert.deepEqual(
      written.checks.map((check) => [check.name, check.rows.map((r) => [r.label, r.compared, r.pass])]),
      [
        [
          'fixture.miss',
          [
            ['under', 3, true],
            ['over', 0.5, false],
          ],
        ],
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every registered timing check is well formed, and bench/README.md lists exactly them', async () => {
  const located = await discoverChecks();
  const names = located.map(({ check }) => check.name);
  assert.ok(names.length >= 10, names.join(', '));
  for (const { check } of located) {
    for (const field of ['measures', 'peer', 'target'] as const)
      assert.ok(check[field].length > 10, `${check.name}: ${field}`);
    for (const file of check.tests ?? [])
      assert.ok(existsSync(join(repoRoot, file)), `${check.name}: ${file} does not exist`);
  }
  const readme = readFileSync(join(repoRoot, 'bench', 'README.md'), 'utf8');
  const listed = readme.slice(readme.indexOf(README_START), readme.indexOf(README_END) + README_END.length);
  assert.equal(
    listed,
    checksMarkdown(located.map(({ check }) => check)),
    'bench/README.md: paste the output of npm run bench:check -- --markdown',
  );
});
