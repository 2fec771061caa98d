/**
 * Proxy mappings obey the same target policy as `url` — real listeners, real
 * connections through the proxy, the real CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { startProxy } from '../src/proxy/index.js';
import { MAX_PROXY_MAPPINGS, targetLookup } from '../src/target-policy.js';
import { checkLoadTarget } from '../src/scenario/target.js';
import { scenarioFromArguments } from '../src/scenario/input.js';
import { makeConfig } from '../src/config.js';
import { cliPath } from './helpers/repo.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const strict = { allowRemoteTargets: false, allowNonLoopbackBind: false };

test(
  'a mapping to the metadata address, a wildcard bind, a privileged ' +
    'port and too many mappings are refused, naming the argument',
  async () => {
    const cases: Array<[string[], RegExp]> = [
      [['0=169.254.169.254:80'], /proxies\[0\].*169\.254\.169\.254 is a link-local or cloud metadata address/],
      [['0=[fe80::1]:80'], /proxies\[0\].*link-local/],
      [['0.0.0.0:0=127.0.0.1:9'], /proxies\[0\].*--allow-non-loopback-bind/],
      [['[::]:0=127.0.0.1:9'], /proxies\[0\].*loopback/],
      [['81=127.0.0.1:9'], /proxies\[0\].*local port 81 is privileged/],
      [['0=8.8.8.8:53'], /proxies\[0\].*--allow-targets/],
      [['0=10.0.0.1:53'], /proxies\[0\].*10\.0\.0\.1 is a private address; only loopback targets/],
      [
        Array.from({ length: MAX_PROXY_MAPPINGS + 1 }, () => '0=127.0.0.1:9'),
        new RegExp(`at most ${MAX_PROXY_MAPPINGS}`),
      ],
    ];
    for (const [mappings, expected] of cases) {
      await assert.rejects(startProxy({ mappings, policy: strict }), expected, mappings[0]);
    }
    // Metadata stays refused even with remote targets and non-loopback binds allowed.
    await assert.rejects(
      startProxy({
        mappings: ['0=169.254.169.254:80'],
        policy: { allowRemoteTargets: true, allowNonLoopbackBind: true },
      }),
      /metadata/,
    );
    // The scenario tools' argument check is the same policy.
    const limits = makeConfig().scenario;
    await assert.rejects(
      scenarioFromArguments(
        'latency',
        { url: 'http://127.0.0.1:9/', proxies: ['0.0.0.0:41500=169.254.169.254:80'] } as never,
        limits,
      ),
      /proxies\[0\]/,
    );
    await assert.rejects(checkLoadTarget('http://169.254.169.254/', true), /url: .*metadata/);
  },
);

test('a named remote is checked at connect time, and loopback targets still relay', async () => {
  const echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const port = (echo.address() as AddressInfo).port;
  const proxy = await startProxy({ mappings: [`0=localhost:${port}`], policy: strict });
  try {
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(proxy.ports[0]!, '127.0.0.1', () => socket.end('ping'));
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    assert.equal(reply, 'ping');
  } finally {
    await proxy.stop();
    echo.close();
  }
  // The connect-time lookup refuses what the policy refuses.
  const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
    targetLookup(false)('169.254.169.254', { all: true }, (error) => resolve(error)),
  );
  assert.equal(refused?.code, 'ENOTLOCAL');
});

test('faultline proxy refuses a wildcard bind without --allow-non-loopback-bind, naming --proxy', async () => {
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [cliPath, 'proxy', '--proxy', '0.0.0.0:0=127.0.0.1:9'],
      { timeout: HANG_GUARD_MS },
      (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
    );
    child.stdin?.end();
  });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /--proxy\[0\].*--allow-non-loopback-bind/);
});
