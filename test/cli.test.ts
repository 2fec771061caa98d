/** The faultline command line: help, version, and one-line usage errors with exit code 2. */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cliPath, repoRoot } from './helpers/repo.js';
import { HANG_GUARD_MS } from './helpers/wait.js';
import { runCliBatch } from './helpers/cli-batch.js';
import type { CliOutcome } from './helpers/processes.js';

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    input: '',
    // A bound for a hang only: a start has taken over 60 s at a load of 18 on 2 cores.
    timeout: HANG_GUARD_MS,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('--help teaches the commands and exits 0', () => {
  const { code, stdout } = run(['--help']);
  assert.equal(code, 0);
  for (const word of ['mcp', 'agent', '--log-file', '--log-level', 'Examples']) assert.match(stdout, new RegExp(word));
});

// The command lines below run through main() in one process (helpers/cli-batch.ts): what they
// test is what the program parses and prints; --help, --version and one usage error above and
// below run the built CLI end to end.
const helps = [
  ['mcp', '--help'],
  ['agent', '--help'],
  ['agent', 'tool', '--help'],
  ['proxy', '--help'],
  ['chaos', 'inject', '--help'],
  ['run', '--help'],
];
let printedHelp: Map<string, CliOutcome>;
before(async () => {
  const outcomes = await runCliBatch(helps.map((args) => ({ args })));
  printedHelp = new Map(helps.map((args, i) => [args.join(' '), outcomes[i]!]));
});

test('every command has its own --help', () => {
  for (const args of [
    ['mcp', '--help'],
    ['agent', '--help'],
    ['agent', 'tool', '--help'],
  ]) {
    const { code, stdout } = printedHelp.get(args.join(' '))!;
    assert.equal(code, 0, args.join(' '));
    assert.match(stdout, /Usage: faultline/);
  }
  const mcp = printedHelp.get('mcp --help')!.stdout;
  for (const flag of ['--transport', '--host', '--port', '--token', '--root', '--llm-client'])
    assert.match(mcp, new RegExp(flag));
});

test("fault flags' placeholders say what the value is, never the flag's own name again", () => {
  for (const args of [['proxy'], ['chaos', 'inject'], ['run']]) {
    const help = printedHelp.get([...args, '--help'].join(' '))!.stdout;
    const flags = [...help.matchAll(/^ {2}--([\w-]+) <([^>]+)>/gm)].map(([, flag, value]) => ({ flag, value }));
    assert.ok(flags.length > 10, args.join(' '));
    for (const { flag, value } of flags)
      assert.ok(!flag!.includes('-') || flag !== value, `${args.join(' ')}: --${flag} <${value}>`);
  }
  assert.match(printedHelp.get('run --help')!.stdout, /--error-body <body>/);
  assert.match(printedHelp.get('proxy --help')!.stdout, /--bandwidth-scope <scope>/);
});

test('--version prints the package version', () => {
  const { version } = JSON.parse(readFileSync(`${repoRoot}/package.json`, 'utf8')) as { version: string };
  const { code, stdout } = run(['--version']);
  assert.equal(code, 0);
  assert.equal(stdout.trim(), version);
});

const usageErrors: Array<{ args: string[]; env?: Record<string, string>; mentions: RegExp[] }> = [
  { args: ['--bogus'], mentions: [/--bogus/, /accepted: .*--log-level/] },
  { args: ['nope'], mentions: [/'nope'/, /accepted: .*mcp/] },
  { args: ['mcp', '--transport', 'pigeon'], mentions: [/--transport/, /stdio, http/] },
  { args: ['mcp', '--port', 'abc'], mentions: [/--port/, /0-65535/] },
  { args: ['agent', '--llm-client', 'nope', 'tool'], mentions: [/--llm-client/, /open-ai/, /ollama/] },
  { args: ['agent', 'tool', '--zzz'], mentions: [/--zzz/, /--llm-client/] },
  { args: ['agent', 'tool', '--llm-embed-model-dim', '-3'], mentions: [/--llm-embed-model-dim/, /positive integer/] },
  { args: ['--log-level', 'loud', 'mcp'], mentions: [/--log-level/, /trace/] },
  { args: ['agent', 'tool'], env: { FAULT_AGENT_CLIENT: 'bad' }, mentions: [/FAULT_AGENT_CLIENT/, /open-router/] },
  {
    args: ['mcp', '--transport', 'http', '--host', '0.0.0.0', '--port', '0'],
    mentions: [/--allow-non-loopback-bind/, /--token/],
  },
  {
    args: ['mcp', '--transport', 'http', '--host', '0.0.0.0', '--port', '0', '--token', 't'],
    mentions: [/--host 0.0.0.0: .*--allow-non-loopback-bind/],
  },
  {
    args: ['mcp', '--transport', 'http', '--host', '0.0.0.0', '--port', '0', '--allow-non-loopback-bind'],
    mentions: [/--host 0.0.0.0: .*needs a token .*--token/],
  },
  { args: ['mcp', '--port', '9000'], mentions: [/--port applies to --transport http only/] },
  { args: ['mcp', '--no-token'], mentions: [/--no-token applies to --transport http only/] },
  {
    args: ['mcp', '--allow-token-env', 'not a name'],
    mentions: [/--allow-token-env .*"not a name" is not an environment variable name/],
  },
  {
    args: ['mcp'],
    env: { FAULTLINE_ALLOW_REMOTE_TARGETS: 'maybe' },
    mentions: [/FAULTLINE_ALLOW_REMOTE_TARGETS=maybe/],
  },
];

function assertUsageError(outcome: CliOutcome, mentions: RegExp[]): void {
  const { code, stdout, stderr } = outcome;
  assert.equal(code, 2, stderr);
  assert.equal(stdout, '', 'nothing on stdout');
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got:\n${stderr}`);
  for (const mention of mentions) assert.match(lines[0]!, mention);
}

test('usage error through the built CLI: exit 2, one line on stderr, nothing on stdout', () => {
  assertUsageError(run(usageErrors[1]!.args), usageErrors[1]!.mentions);
});

let usageOutcomes: CliOutcome[];
before(async () => {
  usageOutcomes = await runCliBatch(usageErrors.map(({ args, env }) => ({ args, ...(env ? { env } : {}) })));
});

usageErrors.forEach(({ args, env, mentions }, i) => {
  test(`usage error: faultline ${args.join(' ')}${env ? ` with ${Object.keys(env).join(',')}` : ''}`, () => {
    assertUsageError(usageOutcomes[i]!, mentions);
  });
});
