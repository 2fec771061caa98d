/**
 * What a scenario may load: http(s) URLs on loopback addresses, unless an allow-list or remote targets
 * say more. No traffic is sent; the only lookup is of "localhost" (answered from the hosts file).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InputError } from '../src/kernel/errors.js';
import { checkLoadTarget, isLocalAddress } from '../src/scenario/index.js';

describe('isLocalAddress', () => {
  const local = [
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.20',
    '::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::FFFF:10.0.0.1',
    '::ffff:7f00:1',
  ];
  const remote = [
    '169.254.169.254',
    'fe80::1',
    '8.8.8.8',
    '172.32.0.1',
    '11.0.0.1',
    '192.169.0.1',
    '100.64.0.1',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    'localhost',
    '',
    'not an address',
  ];
  for (const address of local) test(`${address} is local`, () => assert.equal(isLocalAddress(address), true));
  for (const address of remote)
    test(`${JSON.stringify(address)} is not`, () => assert.equal(isLocalAddress(address), false));
});

describe('checkLoadTarget', () => {
  test('loopback and IPv6 loopback URLs pass; private ones only when the allow-list names them', async () => {
    for (const url of [
      'http://127.0.0.1:8080/health',
      'http://[::1]:8080/',
      'http://[::ffff:127.0.0.1]:80/',
      'http://0x7f.1/',
    ]) {
      const parsed = await checkLoadTarget(url, false);
      assert.ok(parsed instanceof URL);
    }
    for (const url of ['https://10.0.0.5/', 'http://192.168.0.10:3000/x', 'http://[fd00::5]/']) {
      await assert.rejects(
        checkLoadTarget(url, false),
        /is a private address; only loopback targets are accepted unless the server's allow-list names it: --allow-targets/,
      );
      assert.ok(
        (await checkLoadTarget(url, { allowTargets: ['10.0.0.0/8', '192.168.0.10', 'fd00::/8'] })) instanceof URL,
      );
    }
  });

  test('a name that resolves to loopback passes', async () => {
    const parsed = await checkLoadTarget('http://localhost:8080/', false);
    assert.equal(parsed.hostname, 'localhost');
  });

  test('public addresses are refused, naming the argument and the flag', async () => {
    for (const url of [
      'http://8.8.8.8/',
      'http://[2001:4860:4860::8888]/',
      'http://[::ffff:8.8.8.8]/',
      'http://134744072/',
    ]) {
      await assert.rejects(checkLoadTarget(url, false, 'target'), (error: unknown) => {
        assert.ok(error instanceof InputError);
        assert.match(error.message, /^target: .* is not a loopback address/);
        assert.match(error.message, /--allow-targets/);
        return true;
      });
    }
  });

  test('with remote targets allowed, any http(s) URL passes, other schemes still do not', async () => {
    assert.equal((await checkLoadTarget('http://8.8.8.8/', true)).hostname, '8.8.8.8');
    await assert.rejects(
      checkLoadTarget('ws://8.8.8.8/', true),
      /url: "ws:\/\/8\.8\.8\.8\/" uses ws:; only http:\/\/ and https:\/\//,
    );
  });

  test('non-URLs and other schemes are refused', async () => {
    await assert.rejects(checkLoadTarget('127.0.0.1:8080', false), /url: .* uses 127\.0\.0\.1:|url: .* is not a URL/);
    await assert.rejects(checkLoadTarget('not a url', false), /url: "not a url" is not a URL/);
    await assert.rejects(checkLoadTarget('file:///etc/passwd', false), /only http:\/\/ and https:\/\//);
  });
});

describe('the local-only lookup (targetLookup(false)) the load connects through', () => {
  test('resolves local names for net.connect, in both callback shapes', async () => {
    const localOnlyLookup = (await import('../src/target-policy.js')).targetLookup(false);
    const all = await new Promise<unknown>((resolve, reject) =>
      localOnlyLookup('localhost', { all: true }, ((error: Error | null, addresses: unknown) =>
        error ? reject(error) : resolve(addresses)) as never),
    );
    assert.ok(Array.isArray(all) && all.length > 0);
    const one = await new Promise<string>((resolve, reject) =>
      localOnlyLookup('localhost', {}, ((error: Error | null, address: string) =>
        error ? reject(error) : resolve(address)) as never),
    );
    assert.ok(isLocalAddress(one), one);
  });

  test('a name that does not resolve fails as the system lookup does', async () => {
    const localOnlyLookup = (await import('../src/target-policy.js')).targetLookup(false);
    await assert.rejects(
      new Promise((resolve, reject) =>
        localOnlyLookup('no-such-host.invalid', { all: true }, ((error: Error | null, addresses: unknown) =>
          error ? reject(error) : resolve(addresses)) as never),
      ),
      (error: NodeJS.ErrnoException) => error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN',
    );
  });
});
