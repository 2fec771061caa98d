/** The faultline command line: help, version, and one-line usage errors with exit code 2. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cliPath, repoRoot } from './helpers/repo.js';

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    input: '',
    // A bound for a hang only: a loaded machine can take seconds to start a process.
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('--help teaches the commands and exits 0', () => {
  const { code, stdout } = run(['--help']);
  assert.equal(code, 0);
  for (const word of ['mcp', 'agent', '--log-file', '--log-level', 'Examples']) assert.match(stdout, new RegExp(word));
});

test('every command has its own --help', () => {
  const printed = new Map<string, string>();
  for (const args of [
    ['mcp', '--help'],
    ['agent', '--help'],
    ['agent', 'tool', '--help'],
  ]) {
    const { code, stdout } = run(args);
    assert.equal(code, 0, args.join(' '));
    assert.match(stdout, /Usage: faultline/);
    printed.set(args.join(' '), stdout);
  }
  // The flags of mcp --help as printed above, not from a second process.
  const mcp = printed.get('mcp --help')!;
  for (const flag of ['--transport', '--host', '--port', '--token', '--root', '--llm-client'])
    assert.match(mcp, new RegExp(flag));
});

test("fault flags' placeholders say what the value is, never the flag's own name again", () => {
  for (const args of [['proxy'], ['chaos', 'inject'], ['run']]) {
    const help = run([...args, '--help']).stdout;
    const flags = [...help.matchAll(/^ {2}--([\w-]+) <([^>]+)>/gm)].map(([, flag, value]) => ({ flag, value }));
    assert.ok(flags.length > 10, args.join(' '));
    for (const { flag, value } of flags)
      assert.ok(!flag!.includes('-') || flag !== value, `${args.join(' ')}: --${flag} <${value}>`);
  }
  assert.match(run(['run', '--help']).stdout, /--error-body <body>/);
  assert.match(run(['proxy', '--help']).stdout, /--bandwidth-scope <scope>/);
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

for (const { args, env, mentions } of usageErrors) {
  test(`usage error: faultline ${args.join(' ')}${env ? ` with ${Object.keys(env).join(',')}` : ''}`, () => {
    const { code, stdout, stderr } = run(args, env);
    assert.equal(code, 2);
    assert.equal(stdout, '', 'nothing on stdout');
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, `one line on stderr, got:\n${stderr}`);
    for (const mention of mentions) assert.match(lines[0]!, mention);
  });
}
