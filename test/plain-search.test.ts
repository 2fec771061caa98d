/**
 * The plain `faultline search` path (commands/plain-search.ts): which command lines take it, and
 * that it answers as commander's path does: the same stdout, stderr and exit code for results,
 * JSON, a limit, and each error a search can meet. A FAULT_* variable (FAULT_LOG_LEVEL=info,
 * commander's default) sends the same command line through commander. The package's bin
 * (cli-launch.cts) runs a plain search from the build's bundle and answers as the ES entry does;
 * a stale bundle is left for the ES modules.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plainSearch } from '../src/commands/plain-search.js';
import { FaultlineCommand } from '../src/commands/faultline-command.js';
import { addGlobalOptions, type GlobalOptions } from '../src/commands/flags.js';
import { registerIndexCommands } from '../src/commands/index-command.js';
import { fixturePath, repoRoot } from './helpers/repo.js';
import { runCliProcess, runNodeProcess, type CliOutcome } from './helpers/processes.js';
import { LOCAL_PROVIDERS } from './helpers/index-tree.js';

let work: string;
let tree: string;

function run(args: string[], env: Record<string, string> = {}): Promise<CliOutcome> {
  return runCliProcess(args, { FAULTLINE_DATA_DIR: join(work, 'data'), ...LOCAL_PROVIDERS, ...env });
}

const esAnswers = new Map<string, Promise<CliOutcome>>();
/**
 * run(line) through the ES entry's plain path, once per line for the file: the index and the
 * build it reads are the same for every test here (the bin test changes only its own copy), and
 * each run is a process of ~0.3 s of CPU that both tests compare against.
 */
function esAnswer(line: string[]): Promise<CliOutcome> {
  const key = JSON.stringify(line);
  let answer = esAnswers.get(key);
  if (!answer) {
    answer = run(line);
    esAnswers.set(key, answer);
  }
  return answer;
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'faultline-plain-search-'));
  tree = join(work, 'tree');
  cpSync(fixturePath('index', 'tree'), tree, { recursive: true });
  mkdirSync(join(work, 'never-indexed'));
  const indexed = await run(['index', tree]);
  assert.equal(indexed.code, 0, indexed.stderr);
});

after(() => rmSync(work, { recursive: true, force: true }));

const argv = (...args: string[]): string[] => ['node', 'faultline', 'search', ...args];

test('plainSearch takes the query with --dir, --limit and --json, in any order and either spelling', () => {
  assert.deepEqual(plainSearch(argv('parse config'), {}), { query: 'parse config', json: false });
  assert.deepEqual(plainSearch(argv('--limit', '3', 'x', '--dir=/a b', '--json'), {}), {
    query: 'x',
    dir: '/a b',
    limit: 3,
    json: true,
  });
  assert.deepEqual(plainSearch(argv('x', '--limit=50', '--dir', 'src'), { FAULT_AGENT_CLIENT: ' ' }), {
    query: 'x',
    dir: 'src',
    limit: 50,
    json: false,
  });
});

test('plainSearch leaves to commander whatever it does not read itself', () => {
  const commander = [
    ['node', 'faultline', 'index', '.'],
    ['node', 'faultline', '--log-level', 'debug', 'search', 'x'],
    argv(),
    argv('--help'),
    argv('x', '-h'),
    argv('x', 'y'),
    argv('x', '--'),
    argv('--', '-x'),
    argv('-x'),
    argv('x', '--root', '.'),
    argv('x', '--llm-client', 'ollama'),
    argv('x', '--dir'),
    argv('x', '--dir', '--json'),
    argv('x', '--dir', 'a', '--dir', 'b'),
    argv('x', '--limit', '0'),
    argv('x', '--limit', '03'),
    argv('x', '--limit', 'ten'),
    argv('x', '--json', '--json'),
    argv('x', '--json=1'),
  ];
  for (const line of commander) assert.equal(plainSearch(line, {}), undefined, line.join(' '));
  for (const name of ['FAULT_AGENT_CLIENT', 'FAULT_LOG_LEVEL', 'FAULTLINE_ALLOW_PRODUCTION'])
    assert.equal(plainSearch(argv('x'), { [name]: 'x' }), undefined, name);
});

test("every variable the search command's flags read is one plainSearch leaves to commander", () => {
  // The program as main.ts builds it for `faultline search`: the global flags and the command.
  const program = new FaultlineCommand('faultline');
  addGlobalOptions(program);
  registerIndexCommands(program, () => program.opts<GlobalOptions>());
  const search = program.commands.find((command) => command.name() === 'search')!;
  const variables = [...program.options, ...search.options].flatMap((option) =>
    option.envVar === undefined ? [] : [option.envVar],
  );
  assert.ok(variables.length > 0);
  for (const name of variables) assert.equal(plainSearch(argv('x'), { [name]: 'set' }), undefined, name);
});

test('a plain search answers as commander does: results, JSON, a limit and every error', async () => {
  const lines = [
    ['search', 'parse config file', '--dir', tree],
    ['search', '--json', 'parse config file', '--limit', '2', `--dir=${tree}`],
    ['search', 'parse_config_file'],
    ['search', 'anything', '--dir', join(work, 'never-indexed')],
    ['search', 'anything', '--dir', join(work, 'missing')],
    ['search', 'x', '--dir', tree, '--limit', '51'],
    ['search', 'the of', '--dir', tree],
    ['search', '', '--dir', tree],
  ];
  for (const line of lines) {
    const plain = await esAnswer(line);
    const viaCommander = await run(line, { FAULT_LOG_LEVEL: 'info' });
    assert.deepEqual(plain, viaCommander, line.join(' '));
    assert.ok(plain.stdout !== '' || plain.stderr !== '', line.join(' '));
  }
});

/** The bin (cli-launch.cjs) of a copy of dist/src at `dist`, with `data` as the data directory. */
function runBin(dist: string, data: string, line: string[], env: Record<string, string> = {}): Promise<CliOutcome> {
  return runNodeProcess([join(dist, 'cli-launch.cjs'), ...line], {
    env: { ...process.env, FAULTLINE_DATA_DIR: data, ...LOCAL_PROVIDERS, ...env },
  }).then(({ code, stdout, stderr }) => ({ code, stdout, stderr }));
}

const cacheFiles = (data: string): string[] =>
  existsSync(join(data, 'cache', 'start')) ? readdirSync(join(data, 'cache', 'start')) : [];

test('the bin answers a plain search from the bundle as the ES entry does, and leaves a stale bundle', async () => {
  // A copy of the build, so that making it stale touches no other test's files.
  const copy = join(work, 'copy');
  const dist = join(copy, 'dist', 'src');
  cpSync(join(repoRoot, 'dist', 'src'), dist, { recursive: true, preserveTimestamps: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(copy, 'node_modules'));
  cpSync(join(repoRoot, 'package.json'), join(copy, 'package.json'));
  const data = join(work, 'data');
  rmSync(join(data, 'cache'), { recursive: true, force: true });
  const lines = [
    ['search', 'parse config file', '--dir', tree],
    ['search', '--json', 'parse config file', '--limit', '2', `--dir=${tree}`],
    ['search', 'parse_config_file'],
    ['search', 'anything', '--dir', join(work, 'never-indexed')],
    ['search', 'x', '--dir', tree, '--limit', '51'],
    ['search', '', '--dir', tree],
  ];
  for (const line of lines) {
    const es = await esAnswer(line);
    assert.deepEqual(await runBin(dist, data, line), es, line.join(' '));
    // Again, with the code cache the first run left (one file, keyed by the bundle and Node).
    assert.equal(cacheFiles(data).length, 1);
    assert.deepEqual(await runBin(dist, data, line), es, line.join(' '));
  }
  // Not a plain search: the ES entry and commander, by the bin too.
  assert.deepEqual(
    await runBin(dist, data, ['search', 'x', '--limit', '0']),
    await run(['search', 'x', '--limit', '0']),
  );

  // A module compiled after the bundle: the search runs from the ES modules, and no cache is made.
  rmSync(join(data, 'cache'), { recursive: true, force: true });
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(dist, 'search', 'search.js'), later, later);
  const line = ['search', 'parse config file', '--dir', tree];
  assert.deepEqual(await runBin(dist, data, line), await esAnswer(line));
  assert.deepEqual(cacheFiles(data), []);
});
