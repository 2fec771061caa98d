/**
 * `faultline toxiproxy-cli` as a toxiproxy-cli script runs it: create, toxic add|update|remove,
 * inspect, list, toggle and delete against faultline's Toxiproxy API, found through
 * TOXIPROXY_URL or --host, Go-style one-dash flags included. Where the real toxiproxy-cli is
 * built here, both print the same lines for the same calls.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startToxiproxyServer, type ToxiproxyServer } from '../src/toxiproxy/server.js';
import { echo, startServer, type TestServer } from './fixtures/proxy/net.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const REAL_CLI = process.env.TOXIPROXY_CLI ?? '/tmp/toxiproxy-build/bin/toxiproxy-cli';

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** Runs a program without blocking this process (the API under test answers from it). */
function run(file: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

const faultline = (args: string[], env: Record<string, string> = {}): Promise<Ran> =>
  run(process.execPath, [CLI, 'toxiproxy-cli', ...args], env);

describe('faultline toxiproxy-cli', () => {
  let api: ToxiproxyServer;
  let upstream: TestServer;

  before(async () => {
    upstream = await startServer(echo);
    api = await startToxiproxyServer({ host: '127.0.0.1', port: 0, policy: {} });
  });

  after(async () => {
    await api.close();
    await upstream.close();
  });

  it('runs a toxiproxy-cli script: create, toxics, inspect, list, toggle, delete', async () => {
    const env = { TOXIPROXY_URL: api.url };
    const up = `127.0.0.1:${upstream.port}`;
    assert.deepEqual(
      (await faultline(['create', '-l', '127.0.0.1:0', '-u', up, 'p'], env)).out,
      'Created new proxy p\n',
    );
    assert.equal(
      (await faultline(['toxic', 'add', '-t', 'latency', '-a', 'latency=100', '-u', '-tox', '0.5', 'p'], env)).out,
      "Added upstream latency toxic 'latency_upstream' on proxy 'p'\n",
    );
    assert.equal(
      (await faultline(['toxic', 'update', '-n', 'latency_upstream', '-a', 'jitter=5', 'p'], env)).out,
      "Updated toxic 'latency_upstream' on proxy 'p'\n",
    );
    assert.equal(
      (await faultline(['inspect', 'p'], env)).out,
      'latency_upstream\ttype=latency\tstream=upstream\ttoxicity=0.50\tattributes=[\tjitter=5\tlatency=100\t]\n',
    );
    const listen = api.collection.get('p').listen;
    assert.equal((await faultline(['--host', api.url, 'list'])).out, `p\t${listen}\t${up}\tenabled\t1\n`);
    assert.equal((await faultline(['toggle', 'p'], env)).out, 'Proxy p is now disabled\n');
    assert.equal(api.collection.get('p').enabled, false);
    assert.equal((await faultline(['toggle', 'p'], env)).out, 'Proxy p is now enabled\n');
    assert.equal(
      (await faultline(['toxic', 'remove', '-n', 'latency_upstream', 'p'], env)).out,
      "Removed toxic 'latency_upstream' on proxy 'p'\n",
    );
    assert.equal((await faultline(['delete', 'p'], env)).out, 'Deleted proxy p\n');
  });

  it('reads -h as the host, as toxiproxy-cli does; a bare -h, --help or help prints help', async () => {
    await faultline(['create', '-l', '127.0.0.1:0', '-u', `127.0.0.1:${upstream.port}`, 'h'], {
      TOXIPROXY_URL: api.url,
    });
    const listen = api.collection.get('h').listen;
    const line = `h\t${listen}\t127.0.0.1:${upstream.port}\tenabled\t0\n`;
    // No TOXIPROXY_URL: only the flag can find the API.
    const env = { TOXIPROXY_URL: '' };
    for (const flag of [['-h', api.url], [`-h=${api.url}`], ['-host', api.url]]) {
      const listed = await faultline([...flag, 'list'], env);
      assert.deepEqual([listed.code, listed.out, listed.err], [0, line, ''], flag.join(' '));
    }
    for (const args of [['-h'], ['--help'], ['help']]) {
      const help = await faultline(args, env);
      assert.equal(help.code, 0, args.join(' '));
      assert.match(help.out, /Usage: faultline toxiproxy-cli .*-h, --host <url>/s, args.join(' '));
    }
    await faultline(['delete', 'h'], { TOXIPROXY_URL: api.url });
  });

  it('fails with toxiproxy-cli’s wording and exit 1', async () => {
    const env = { TOXIPROXY_URL: api.url };
    const missing = await faultline(['inspect', 'nope'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^Failed to retrieve proxy nope: HTTP 404: proxy not found/);
    const bad = await faultline(['toxic', 'add', '-t', 'latency', '--toxicity', '2', 'x'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /toxicity should be a float between 0 and 1/);
  });

  it('prints what the real toxiproxy-cli prints', {
    skip: existsSync(REAL_CLI) ? false : `${REAL_CLI} is not built`,
  }, async () => {
    const up = `127.0.0.1:${upstream.port}`;
    await faultline(['create', '-l', '127.0.0.1:0', '-u', up, 'same'], { TOXIPROXY_URL: api.url });
    await faultline(['toxic', 'add', '-t', 'slicer', '-a', 'average_size=16', '-a', 'delay=10', 'same'], {
      TOXIPROXY_URL: api.url,
    });
    for (const args of [['list'], ['inspect', 'same']]) {
      const theirs = await run(REAL_CLI, ['--host', api.url, ...args]);
      assert.ok(theirs.out.length > 0, `toxiproxy-cli ${args.join(' ')} printed nothing: ${theirs.err}`);
      assert.equal((await faultline(['--host', api.url, ...args])).out, theirs.out, args.join(' '));
      assert.equal((await run(REAL_CLI, ['-h', api.url, ...args])).out, theirs.out, `-h ${args.join(' ')}`);
      assert.equal((await faultline(['-h', api.url, ...args])).out, theirs.out, `-h ${args.join(' ')}`);
    }
    await faultline(['delete', 'same'], { TOXIPROXY_URL: api.url });
  });
});
