/** src/consent's decisions in-process: real executables on this machine, a real symlink, no MCP. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProgramPolicy, commandAllowance, minimalEnvironment, type ProgramRequest } from '../src/consent/index.js';
import { findExecutable } from '../src/consent/executable.js';
import { CancelledError, InputError } from '../src/kernel/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-consent-policy-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const touch = findExecutable('touch')!;
const request = (command: string, extra: Partial<ProgramRequest> = {}): ProgramRequest => ({
  argument: 'command',
  command,
  args: ['x'],
  why: 'a test',
  ...extra,
});

function agent(options: Partial<Parameters<typeof ProgramPolicy.forAgent>[0]> = {}): ProgramPolicy {
  return ProgramPolicy.forAgent({
    allowance: { allowAll: false, programs: [] },
    roots: [],
    askTimeoutMs: 1000,
    ...options,
  });
}

test('an allowed program is the same file by any name: a symlink to it, its path, its name', () => {
  const link = join(dir, 'my-touch');
  symlinkSync(touch, link);
  const policy = agent({ allowance: commandAllowance({ allowCommand: ['touch'] }, { PATH: process.env.PATH }) });
  for (const name of ['touch', touch, link]) assert.equal(policy.verdict(request(name)).status, 'allowed', name);
  const refused = policy.verdict(request('mkdir'));
  assert.equal(refused.status, 'refused');
  assert.match(
    (refused as { reason: string }).reason,
    /^command: not started .*--allow-commands.*--allow-command mkdir/,
  );
  assert.equal(policy.launch(request(link)).file, touch, 'started by the real path that was allowed');
});

test('an allowance names programs that exist, or fails naming the flag', () => {
  assert.throws(
    () => commandAllowance({ allowCommand: ['no-such-program-anywhere'] }),
    /--allow-command no-such-program-anywhere: no executable/,
  );
  assert.throws(
    () => commandAllowance({}, { PATH: process.env.PATH, FAULTLINE_ALLOW_COMMANDS: 'touch,nope-nope' }),
    /FAULTLINE_ALLOW_COMMANDS=nope-nope/,
  );
  assert.deepEqual(commandAllowance({}, { PATH: process.env.PATH, FAULTLINE_ALLOW_COMMANDS: '*' }), {
    allowAll: true,
    programs: [],
  });
});

test('by name only: a variable that loads other code into the program is refused', () => {
  const byName = agent({ allowance: { allowAll: false, programs: [touch] } });
  for (const name of ['NODE_OPTIONS', 'LD_PRELOAD', 'PATH', 'PYTHONPATH'])
    assert.equal(byName.verdict(request('touch', { env: { [name]: 'x' } })).status, 'refused', name);
  assert.equal(byName.verdict(request('touch', { env: { GREETING: 'x' } })).status, 'allowed');
  const any = agent({ allowance: { allowAll: true, programs: [] } });
  assert.equal(any.verdict(request('touch', { env: { NODE_OPTIONS: 'x' } })).status, 'allowed');
});

test("the environment: the base and what was asked for, none of the server's secrets", () => {
  const env = minimalEnvironment(
    { ASKED: '1' },
    { PATH: '/bin', HOME: '/h', OPENAI_API_KEY: 'k', FAULTLINE_TOKEN: 't', AWS_SECRET_ACCESS_KEY: 's' },
  );
  assert.deepEqual(env, { PATH: '/bin', HOME: '/h', ASKED: '1' });
  assert.equal(ProgramPolicy.owner().launch(request('touch', { env: { A: 'b' } })).env.PATH, process.env.PATH);
});

test('asking: accept runs exactly what was shown; decline, an error and a cancel refuse', async () => {
  const shown: string[] = [];
  const accepting = agent({
    ask: async (message) => {
      shown.push(message);
      return 'accept';
    },
  });
  const asked = request('touch', { args: ['a file'] });
  assert.equal(accepting.verdict(asked).status, 'ask');
  assert.throws(() => accepting.launch(asked), InputError, 'not before it was approved');
  await accepting.approve([asked]);
  assert.match(shown[0]!, /command \(a test\): \["touch","a file"\]/);
  assert.equal(accepting.launch(asked).args[0], 'a file');
  assert.equal(accepting.verdict(request('touch', { args: ['another'] })).status, 'ask', 'only what was shown');

  await assert.rejects(agent({ ask: async () => 'decline' }).approve([asked]), /the person declined/);
  await assert.rejects(
    agent({
      ask: async () => {
        throw new Error('client went away');
      },
    }).approve([asked]),
    /consent could not be asked \(client went away\)/,
  );
  const cancel = new AbortController();
  const waiting = agent({
    ask: (_message, signal) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
  }).approve([asked], cancel.signal);
  cancel.abort();
  await assert.rejects(waiting, CancelledError);
});

test('with roots, the working directory must be inside one, and defaults to the first', () => {
  const root = mkdtempSync(join(dir, 'root-'));
  const policy = agent({ allowance: { allowAll: true, programs: [] }, roots: [root] });
  assert.equal(policy.launch(request('touch')).cwd, root);
  assert.equal(policy.verdict(request('touch', { cwd: join(root, 'sub') })).status, 'allowed');
  const outside = policy.verdict(request('touch', { cwd: join(root, '..') }));
  assert.equal(outside.status, 'refused');
  assert.match((outside as { reason: string }).reason, /^command: not started: its working directory .* is outside/);
});
