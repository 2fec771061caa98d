/**
 * The one-shot commands as a person runs them: `faultline index` / `search` on a tree, and
 * `faultline run` against a local server (exit 0 when the SLOs pass, 3 when one fails, 2 on bad
 * arguments), with --report and --json files.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliPath, fixturePath } from './helpers/repo.js';
import { runCliProcess, type CliOutcome } from './helpers/processes.js';
import { LOCAL_PROVIDERS } from './helpers/index-tree.js';
import { runCliBatch } from './helpers/cli-batch.js';

let work: string;
let server: Server;
let url: string;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'faultline-cli-'));
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(work, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}): Promise<CliOutcome> {
  return runCliProcess(args, {
    FAULTLINE_DATA_DIR: join(work, 'data'),
    ...LOCAL_PROVIDERS,
    ...env,
  });
}

/** Command lines that are refused before anything runs, with run()'s environment, in one process. */
function batch(lines: string[][]): Promise<CliOutcome[]> {
  const env = { FAULTLINE_DATA_DIR: join(work, 'data'), ...LOCAL_PROVIDERS };
  return runCliBatch(lines.map((args) => ({ args, env })));
}

test('index then search: the function named by the query comes first', async () => {
  const tree = join(work, 'tree');
  cpSync(fixturePath('index', 'tree'), tree, { recursive: true });
  const indexed = await run(['index', tree, '--lang', 'python']);
  assert.equal(indexed.code, 0, indexed.stderr);
  const stats = JSON.parse(indexed.stdout) as { files: number; chunks: number; store: string };
  assert.ok(stats.files >= 1 && stats.chunks >= 1, indexed.stdout);
  // The same shape as fault_index_source_code's structuredContent.
  assert.deepEqual(Object.keys(stats), [
    'files',
    'changed',
    'unchanged',
    'empty',
    'chunks',
    'embedded',
    'skipped',
    'skipped_files',
    'removed',
    'seconds',
    'store',
    'embedder',
    'lang',
  ]);
  assert.deepEqual(Object.keys((stats as unknown as { skipped_files: object }).skipped_files), [
    'too_large',
    'binary',
    'unreadable',
    'directories',
    'symlinks',
  ]);

  const searched = await run(['search', 'parse config file', '--dir', tree, '--json', '--limit', '3']);
  assert.equal(searched.code, 0, searched.stderr);
  const hits = JSON.parse(searched.stdout) as Array<{ symbol: string; path: string }>;
  assert.equal(hits[0]?.symbol, 'parse_config_file');
  assert.ok(hits.length <= 3);
  assert.deepEqual(
    Object.keys(hits[0]!),
    ['path', 'start_line', 'end_line', 'symbol', 'kind', 'language', 'score', 'code'],
    'the names MCP uses',
  );

  const unknownLang = await run(['index', tree, '--lang', 'cobol']);
  assert.equal(unknownLang.code, 2);
  assert.equal(unknownLang.stdout, '');
  assert.match(unknownLang.stderr, /lang/);
});

test('index: the summary on stderr names every skipped directory with the --include-dir that indexes it', async () => {
  const tree = join(work, 'skipping');
  cpSync(fixturePath('index', 'tree'), tree, { recursive: true });
  mkdirSync(join(tree, 'dist'));
  writeFileSync(join(tree, 'dist', 'bundle.js'), 'function publishedBundle() { return 1; }\n');
  mkdirSync(join(tree, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(join(tree, 'node_modules', 'dep', 'index.js'), 'function dependencyCode() { return 42; }\n');
  const indexed = await run(['index', tree]);
  assert.equal(indexed.code, 0, indexed.stderr);
  assert.match(indexed.stderr, /^indexed 5 files of .*: \d+ chunks \(5 files changed, 0 removed\) in [\d.]+ s\n/);
  assert.match(
    indexed.stderr,
    /\nskipped directories: dist\/ \(build output; --include-dir dist\), node_modules\/ \(dependency; --include-dir node_modules\)\n$/,
  );
  const again = await run(['index', tree, '--include-dir', 'dist', '--include-dir', './node_modules/']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(
    (JSON.parse(again.stdout) as { changed: number }).changed,
    2,
    'dist/bundle.js and node_modules/dep/index.js',
  );
  assert.doesNotMatch(again.stderr, /skipped directories/);
  const outside = await run(['index', tree, '--include-dir', '../elsewhere']);
  assert.equal(outside.code, 2);
  assert.match(
    outside.stderr,
    /^faultline: --include-dir\[0\]: "\.\.\/elsewhere" is not a directory name or a path inside the tree/,
  );
});

test(
  'run latency: the report on stdout and in --report, every number ' + 'in --json, exit 0 when the SLOs pass',
  async () => {
    const report = join(work, 'report.md');
    const json = join(work, 'results.json');
    const result = await run([
      'run',
      'latency',
      '--url',
      url,
      '--latency',
      '20',
      '--duration',
      '1s',
      '--num-clients',
      '4',
      '--rps',
      '5',
      '--slo',
      '99% @ 2000ms',
      '--report',
      report,
      '--json',
      json,
      '--seed',
      '7',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^# Scenarios Report/);
    assert.match(result.stdout, /\| Passed/);
    assert.equal(readFileSync(report, 'utf8'), result.stdout);
    const results = JSON.parse(readFileSync(json, 'utf8')) as {
      passed: boolean;
      fault: { seed: number };
      run: { load: { requests: number; latency: { mean: number } } };
    };
    assert.equal(results.passed, true);
    assert.equal(results.fault.seed, 7);
    assert.equal(results.run.load.requests, 20);
    assert.match(
      result.stdout,
      new RegExp(
        `\\| ${results.run.load.requests} \\| 0 \\(0\\.0%\\) \\|.*\\| ${results.run.load.latency.mean.toFixed(2)} \\|`,
      ),
    );
  },
);

test('run: Ctrl-C or SIGTERM during the run exits 130 or 143, not 1, saying it was cancelled', async () => {
  for (const [signal, expected] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    let onFirstRequest: () => void = () => {};
    const firstRequest = new Promise<void>((resolve) => (onFirstRequest = resolve));
    const target = createServer((_req, res) => {
      onFirstRequest();
      res.end('ok');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    try {
      const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
      const child = spawn(
        process.execPath,
        [
          cliPath,
          'run',
          'latency',
          '--url',
          targetUrl,
          '--latency',
          '1',
          '--duration',
          '60s',
          '--num-clients',
          '2',
          '--rps',
          '5',
        ],
        {
          env: { ...process.env, FAULTLINE_DATA_DIR: join(work, 'data') },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await firstRequest; // the run's load is under way
      child.kill(signal);
      const code = await closed;
      clearTimeout(guard);
      assert.equal(code, expected, stderr);
      assert.match(stderr, new RegExp(`cancel.*\\(${signal}\\)`));
      assert.equal(stdout, '', 'no report for a run cut short');
    } finally {
      target.closeAllConnections();
      await new Promise<void>((resolve) => target.close(() => resolve()));
    }
  }
});

test('run: exit 3 when an SLO fails, 2 on bad arguments', async () => {
  const failing = await run([
    'run',
    'latency',
    '--url',
    url,
    '--latency',
    '60',
    '--duration',
    '500ms',
    '--num-clients',
    '4',
    '--rps',
    '4',
    '--slo',
    'p50 < 10ms',
  ]);
  assert.equal(failing.code, 3, failing.stderr);
  assert.match(failing.stdout, /\| Failed/);

  const badArgs = [
    ['run', 'latency', '--url', url, '--deviation', '-5'],
    ['run', 'latency', '--url', 'ftp://127.0.0.1/'],
    ['run', 'sideways', '--url', url],
    ['run', 'bandwidth', '--url', url, '--unit', 'furlongs'],
    ['run', 'latency', '--url', url, '--duration', '11m'],
    ['run', 'latency'],
    // Output files that cannot be written are refused before the run, not after it.
    ['run', 'latency', '--url', url, '--report', join(work, 'no-such-dir', 'report.md')],
    ['run', 'latency', '--url', url, '--json', work],
  ];
  // Refusals before anything runs: one process for all of them (helpers/cli-batch.ts).
  const outcomes = await batch(badArgs);
  for (const [i, args] of badArgs.entries()) {
    const bad = outcomes[i]!;
    assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
    assert.equal(bad.stdout, '');
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    const flag = args.find((arg) => arg === '--report' || arg === '--json');
    if (flag) assert.match(bad.stderr, new RegExp(`^faultline: ${flag} `), bad.stderr);
  }
});

test('run: an argument error names the flag the user typed, not the tool argument behind it', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['--fault-start', '5s', '--duration', '1s'], /^faultline: --fault-start: 5s is not before the end of the run/],
    [['--rps', '0'], /^faultline: --rps: /],
    [['--header', 'no colon'], /^faultline: --header\[0\]: /],
    [['--slo', 'nonsense'], /^faultline: --slo\[0\]: /],
    [['--proxy', '1=2'], /^faultline: --proxy\[0\]: /],
    [['--num-clients', '100', '--rps', '100'], /^faultline: --num-clients × --rps = 10000 requests\/s/],
  ];
  const outcomes = await batch([
    ...cases.map(([flags]) => ['run', 'latency', '--url', url, ...flags]),
    ['run', 'http-error', '--url', url, '--http-fault', 'nope'],
  ]);
  for (const [i, [, expected]] of cases.entries()) {
    const bad = outcomes[i]!;
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, expected);
  }
  const http = outcomes[cases.length]!;
  assert.equal(http.code, 2, http.stderr);
  assert.match(http.stderr, /^faultline: --http-fault: "nope" is not one of/);
});
