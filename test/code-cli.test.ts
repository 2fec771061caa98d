/**
 * `faultline code list|extract` as a person runs them: the built CLI, JSON on stdout, exit codes; and the
 * WebAssembly tiers of the one-shot commands (commands/wasm-tiers.ts), `faultline index` of a small tree among them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliPath, fixturePath } from './helpers/repo.js';
import { withoutWasmTiers } from './helpers/wasm-tiers.cjs';
import { HANG_GUARD_MS } from './helpers/wait.js';

function faultline(...args: string[]) {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    cwd: fixturePath('code'),
    encoding: 'utf8',
    timeout: HANG_GUARD_MS, // a hang guard: a start has taken over 30 s at a load of 18
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('code list prints the functions of a file (relative paths from the current directory)', () => {
  const run = faultline('code', 'list', 'sample.go');
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout) as {
    names: string[];
    functions: { qualified_name: string }[];
    language: string;
  };
  assert.deepEqual(report.names, ['Plain', 'Start', 'Name', 'Map', 'Push', 'Run', 'Größe', 'helper']);
  assert.equal(report.functions[1]?.qualified_name, 'Server.Start');
  assert.equal(report.language, 'go');
});

test('code extract prints one function; errors are one line on stderr with exit code 2', () => {
  const run = faultline('code', 'extract', fixturePath('code', 'sample.rs'), 'Point::new');
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { full: string; body: string; start_line: number };
  assert.equal(report.body, '{\n        Point { x, y }\n    }');
  assert.equal(report.start_line, 15);

  const ambiguous = faultline('code', 'extract', 'Sample.java', 'size');
  assert.equal(ambiguous.status, 2);
  assert.equal(ambiguous.stdout, '');
  assert.match(ambiguous.stderr, /^faultline: func: 'size' matches 2 definitions: .*\n$/);

  const unsupported = faultline('code', 'list', 'README.txt');
  assert.equal(unsupported.status, 2);
  assert.equal(unsupported.stdout, '');
  // No --root exists here: the refusal names the extensions these commands parse, not a flag.
  for (const command of [['list'], ['extract', 'f']]) {
    const notSource = faultline('code', command[0]!, '/etc/passwd', ...command.slice(1));
    assert.equal(notSource.status, 2);
    assert.match(notSource.stderr, /^faultline: file: \/etc\/passwd has no supported extension; supported: .*\.py/);
    assert.doesNotMatch(notSource.stderr, /--root/);
  }
  // A directory has no extension to judge: said to be one, with what to pass instead.
  const directory = faultline('code', 'list', fixturePath('code'));
  assert.equal(directory.status, 2);
  assert.match(directory.stderr, /^faultline: file: .*code is a directory; give the path of a source file\n$/);
});

test('code list reads a C++ .h header as C++ and says so', () => {
  const run = faultline('code', 'list', 'widget.h');
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { functions: { qualified_name: string }[]; language: string };
  assert.equal(report.language, 'cpp');
  assert.equal(report.functions.at(-1)?.qualified_name, 'ui::clamp');
});

/** How many wasm functions V8 compiled with each tier in a process run with --trace-wasm-compilation-times. */
function compiledBy(stdout: string): { liftoff: number; turbofan: number } {
  return {
    liftoff: stdout.split(' using Liftoff,').length - 1,
    turbofan: stdout.split(' using TurboFan,').length - 1,
  };
}

test('code commands run WebAssembly on Liftoff only; a library caller keeps tier-up', () => {
  // Traced, V8 names the compiler of each wasm function (on stdout). Without the definition store,
  // so the grammar runs. The control is the same listing in a plain process: TurboFan shows there.
  // Both without the suite's own Liftoff-only preload (helpers/wasm-tiers.cts): V8's defaults here.
  const env = { ...withoutWasmTiers(process.env), FAULTLINE_CODE_CACHE: 'off' };
  const traced = ['--trace-wasm-compilation-times'];
  const command = spawnSync(process.execPath, [...traced, cliPath, 'code', 'list', 'sample.py'], {
    cwd: fixturePath('code'),
    env,
    encoding: 'utf8',
    timeout: HANG_GUARD_MS,
  });
  assert.equal(command.status, 0, command.stderr);
  const oneShot = compiledBy(command.stdout);
  assert.ok(oneShot.liftoff > 0, 'the trace shows no compiled function');
  assert.equal(oneShot.turbofan, 0);

  const index = new URL('../src/code/index.js', import.meta.url).href;
  const script =
    `const { listFunctions } = await import(${JSON.stringify(index)});` +
    `const source = (await import('node:fs')).readFileSync(${JSON.stringify(fixturePath('code', 'sample.py'))}, 'utf8');` +
    "await listFunctions(source, 'python');";
  const library = spawnSync(process.execPath, [...traced, '--input-type=module', '-e', script], {
    env,
    encoding: 'utf8',
    timeout: HANG_GUARD_MS,
  });
  assert.equal(library.status, 0, library.stderr);
  assert.ok(compiledBy(library.stdout).turbofan > 0, 'the control shows no TurboFan compilation');
});

test('faultline index of a small tree runs WebAssembly on Liftoff only, its worker threads too', (t) => {
  // A tree of six languages (2 KB, under ONE_SHOT_INDEX_BYTES), with a pool of two threads, without the
  // suite's Liftoff-only preload: V8's defaults tier up here (the library caller above), the command does not.
  const data = mkdtempSync(join(tmpdir(), 'faultline-tiers-'));
  t.after(() => rmSync(data, { recursive: true, force: true }));
  const env = { ...withoutWasmTiers(process.env), FAULTLINE_DATA_DIR: data, FAULTLINE_INDEX_WORKERS: '2' };
  const command = spawnSync(
    process.execPath,
    ['--trace-wasm-compilation-times', cliPath, 'index', fixturePath('index', 'tree')],
    { env, encoding: 'utf8', timeout: HANG_GUARD_MS },
  );
  assert.equal(command.status, 0, command.stderr);
  const tiers = compiledBy(command.stdout);
  assert.ok(tiers.liftoff > 0, 'the trace shows no compiled function');
  assert.equal(tiers.turbofan, 0);
});
