/**
 * One rule for every listener faultline opens (src/target-policy.ts bindRefusal): loopback
 * always; another address only with --allow-non-loopback-bind; an API that controls faultline (the
 * MCP HTTP server, the fault admin API) also needs its token there. Each command that binds
 * refuses a wildcard bind without the flag, naming it, from the real CLI. (No test binds
 * 0.0.0.0: that would expose a port to the network.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { bindRefusal, isLoopbackAddress } from '../src/target-policy.js';
import { cliPath } from './helpers/repo.js';
import { START_LIMIT_MS } from './helpers/processes.js';

test('bindRefusal: loopback in every spelling; elsewhere the opt-in, and a token for a control API', () => {
  for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) {
    assert.equal(isLoopbackAddress(host), true, host);
    assert.equal(
      bindRefusal(host, {
        argument: `--host ${host}`,
        what: 'the MCP HTTP server',
        allowNonLoopbackBind: false,
        token: { value: undefined, flag: '--token' },
      }),
      undefined,
      host,
    );
  }
  const relay = { argument: '--host 0.0.0.0', what: 'the proxy', allowNonLoopbackBind: false };
  assert.match(
    bindRefusal('0.0.0.0', relay)!,
    /^--host 0\.0\.0\.0: the proxy listens only on loopback \(127\.0\.0\.1, ::1\) unless --allow-non-loopback-bind is given; 0\.0\.0\.0 is not loopback$/,
  );
  assert.equal(
    bindRefusal('0.0.0.0', { ...relay, allowNonLoopbackBind: true }),
    undefined,
    'a relay needs only the opt-in',
  );
  assert.match(
    bindRefusal('192.168.1.5', { ...relay, serverFlag: true })!,
    /unless the server runs with --allow-non-loopback-bind/,
  );
  const api = {
    argument: '--host ::',
    what: 'the MCP HTTP server',
    allowNonLoopbackBind: false,
    token: { value: undefined as string | undefined, flag: '--token T' },
  };
  assert.match(bindRefusal('::', api)!, /unless --allow-non-loopback-bind is given \(and then --token T as well\)/);
  assert.match(
    bindRefusal('::', { ...api, allowNonLoopbackBind: true })!,
    /^--host ::: the MCP HTTP server on ::, beyond loopback, needs a token as well: --token T$/,
  );
  assert.equal(
    bindRefusal('::', { ...api, allowNonLoopbackBind: true, token: { value: 's3cret', flag: '--token T' } }),
    undefined,
  );
});

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const clean = { ...process.env };
  for (const name of ['FAULTLINE_TOKEN', 'FAULTLINE_ADMIN_TOKEN']) delete clean[name];
  return new Promise((resolve) => {
    // A command that wrongly starts listening is killed by the timeout: that shows as a code other than 2. The
    // start limit, not 15 s: a loaded machine's refusal may take longer to start and say so.
    execFile(
      process.execPath,
      [cliPath, ...args],
      { env: { ...clean, NODE_ENV: '', ...env }, timeout: START_LIMIT_MS },
      (error, stdout, stderr) =>
        resolve({
          code: error ? ((error as { code?: number | string }).code ?? (error as { signal?: string }).signal ?? 1) : 0,
          stdout,
          stderr,
        }),
    );
  });
}

test(
  'every command that binds refuses 0.0.0.0 without ' +
    '--allow-non-loopback-bind, naming it (the MCP server too, token ' +
    'or not)',
  async () => {
    const cases: Array<{ args: string[]; env?: Record<string, string>; names: RegExp }> = [
      // The MCP HTTP server used to take --token alone as the opt-in: one rule now, the flag and the token.
      {
        args: ['mcp', '--transport', 'http', '--port', '0', '--host', '0.0.0.0', '--token', 's3cret'],
        names:
          /--host 0\.0\.0\.0: the MCP HTTP server listens only on loopback .* unless --allow-non-loopback-bind is given/,
      },
      {
        args: ['mcp', '--transport', 'http', '--port', '0', '--host', '0.0.0.0', '--allow-non-loopback-bind'],
        names: /--host 0\.0\.0\.0: the MCP HTTP server on 0\.0\.0\.0, beyond loopback, needs a token as well: --token/,
      },
      {
        args: ['proxy', '--proxy', '0.0.0.0:0=127.0.0.1:9'],
        names: /--proxy\[0\] .*: the proxy listens only on loopback .* unless --allow-non-loopback-bind is given/,
      },
      {
        args: ['proxy', '--proxy', '0=127.0.0.1:9', '--admin', '0.0.0.0:0'],
        env: { FAULTLINE_ADMIN_TOKEN: 't' },
        names:
          /--admin 0\.0\.0\.0:0: the admin API listens only on loopback .* unless --allow-non-loopback-bind is given/,
      },
      {
        args: [
          'mcp-chaos',
          'proxy',
          'http',
          '--upstream',
          'http://127.0.0.1:9/mcp',
          '--port',
          '0',
          '--host',
          '0.0.0.0',
        ],
        names: /--host 0\.0\.0\.0: the proxy listens only on loopback .* unless --allow-non-loopback-bind is given/,
      },
    ];
    for (const { args, env, names } of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, names, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  },
);
