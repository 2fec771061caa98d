/**
 * A program allowed by name (--allow-command) runs with the request's `env`, but no variable of it
 * may make the program run other code or read other configuration: the outside trial started an
 * allowed bash script with BASH_FUNC_echo%%='() { touch MARKER; }' and its `echo` ran the attacker's
 * function. Tried from the SDK client against the built CLI over stdio, with a real bash script.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ProgramPolicy } from '../src/consent/index.js';
import { connectStdio, textOf } from './helpers/mcp.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'faultline-consent-env-')));
test.after(() => rmSync(dir, { recursive: true, force: true }));

// The owner allows this one script: it writes what it was given, with bash's own echo.
const script = join(dir, 'check.sh');
const output = join(dir, 'output');
writeFileSync(script, `#!/bin/bash\necho "greeting=$GREETING" > ${output}\n`);
chmodSync(script, 0o755);

test('an allowed bash script: variables that load code or configuration are refused, others pass', async () => {
  const session = await connectStdio(['mcp', '--allow-command', script]);
  try {
    const run = async (env: Record<string, string>) => {
      rmSync(output, { force: true });
      const marker = join(dir, 'marker');
      rmSync(marker, { force: true });
      const withMarker = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace('MARKER', marker)]));
      const experiment = { title: 'env', duration: '300ms', expect: [{ command: [script], env: withMarker }] };
      const result = (await session.client.callTool(
        { name: 'fault_run_experiment', arguments: { experiment } },
        undefined,
        { timeout: HANG_GUARD_MS },
      )) as CallToolResult;
      return { result, text: textOf(result), attacked: existsSync(marker), ran: existsSync(output) };
    };
    const attacks: Record<string, string>[] = [
      { 'BASH_FUNC_echo%%': '() { touch MARKER; }' },
      { SHELLOPTS: 'xtrace', PS4: '$(touch MARKER)' },
      { HOME: dir },
      { GIT_CONFIG_COUNT: '1' },
      { npm_config_script_shell: '/bin/sh' },
      { JDK_JAVA_OPTIONS: '-Dx=1' },
    ];
    for (const env of attacks) {
      const outcome = await run(env);
      const name = Object.keys(env)[0]!;
      assert.equal(outcome.result.isError, true, `${name}: refused, got ${outcome.text.slice(0, 300)}`);
      assert.match(outcome.text, /expect\[0\]\.command: not started: its env sets \S+.*--allow-commands/s, name);
      assert.equal(outcome.attacked, false, `${name}: the attacker's code did not run`);
      assert.equal(outcome.ran, false, `${name}: nothing started`);
    }
    const plain = await run({ GREETING: 'hello' });
    assert.notEqual(plain.result.isError, true, plain.text.slice(0, 300));
    assert.equal(plain.ran, true, `a plain variable passes: ${plain.text.slice(0, 300)}`);
    assert.equal(readFileSync(output, 'utf8'), 'greeting=hello\n');
  } finally {
    await session.close();
  }
});

test('with --allow-commands (any program) the request may set them', () => {
  const any = ProgramPolicy.forAgent({ allowance: { allowAll: true, programs: [] }, roots: [], askTimeoutMs: 1000 });
  const verdict = any.verdict({ argument: 'command', command: script, args: [], env: { HOME: dir }, why: 'a test' });
  assert.equal(verdict.status, 'allowed');
});
