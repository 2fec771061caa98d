/** `faultline code list|extract` as a person runs them: the built CLI, JSON on stdout, exit codes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cliPath, fixturePath } from './helpers/repo.js';

function faultline(...args: string[]) {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    cwd: fixturePath('code'),
    encoding: 'utf8',
    timeout: 30_000,
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
});

test('code list reads a C++ .h header as C++ and says so', () => {
  const run = faultline('code', 'list', 'widget.h');
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { functions: { qualified_name: string }[]; language: string };
  assert.equal(report.language, 'cpp');
  assert.equal(report.functions.at(-1)?.qualified_name, 'ui::clamp');
});
