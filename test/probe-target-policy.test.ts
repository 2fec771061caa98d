/**
 * `faultline probe --url` goes through the one target policy: metadata and link-local addresses
 * never (IPv4-mapped IPv6 and names that resolve there included), public addresses only with
 * --allow-remote-targets, and names checked again at connect time after resolution. Every case
 * runs inside a network namespace with only loopback (`unshare -n`), its /etc/hosts replaced in a
 * mount namespace, so that a mistake cannot reach past the machine; skipped where namespaces
 * cannot be made.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliPath } from './helpers/repo.js';
import { connectInMemory } from './helpers/mcp.js';

const canIsolate = process.platform === 'linux' && spawnSync('unshare', ['-n', '-m', 'true']).status === 0;
const skip = canIsolate ? false : 'needs unshare -n -m (network and mount namespaces)';

/** Names the isolated /etc/hosts resolves: one to the metadata service, one to a public address. */
const HOSTS = '169.254.169.254 meta.faultline.test\n8.8.8.8 public.faultline.test\n';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node ARGS…` in a fresh network namespace (loopback only) with HOSTS added to /etc/hosts. */
async function isolated(args: string[]): Promise<Outcome> {
  const dir = await mkdtemp(join(tmpdir(), 'netns-'));
  try {
    const hosts = join(dir, 'hosts');
    await writeFile(hosts, `${await readFile('/etc/hosts', 'utf8').catch(() => '')}\n${HOSTS}`);
    const script = `mount --bind "$1" /etc/hosts && shift && exec "$@"`;
    return await new Promise((resolve, reject) => {
      const child = spawn('unshare', ['-n', '-m', 'sh', '-c', script, 'sh', hosts, process.execPath, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const probeUrl = (url: string, ...flags: string[]): Promise<Outcome> =>
  isolated([cliPath, 'probe', '--quiet', '--timeout', '10000', ...flags, '--url', url]);

for (const url of [
  'http://169.254.169.254/mcp',
  'http://[::ffff:169.254.169.254]/mcp',
  'http://meta.faultline.test/mcp',
]) {
  test(`probe --url ${url}: refused before anything is sent, even with --allow-remote-targets`, { skip }, async () => {
    for (const flags of [[], ['--allow-remote-targets']]) {
      const r = await probeUrl(url, ...flags);
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /--url: .*(169\.254\.169\.254|::ffff:a9fe:a9fe).*(link-local|metadata)/);
      assert.equal(r.stdout, '', 'no report: nothing was probed');
    }
  });
}

test('probe --url with a public address: refused by default; with --allow-remote-targets the policy lets it through', {
  skip,
}, async () => {
  const refused = await probeUrl('http://8.8.8.8/mcp');
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /--url: .*8\.8\.8\.8/);
  // Allowed, it is dialled: the namespace has no route, so the connection fails there — a
  // failed probe (exit 1), not a refusal by the policy (exit 2).
  const allowed = await probeUrl('http://8.8.8.8:9/mcp', '--allow-remote-targets');
  assert.equal(allowed.code, 1, allowed.stderr);
  assert.match(
    allowed.stdout,
    /could not initialize the server: no connection to http:\/\/8\.8\.8\.8:9\/mcp \((ENETUNREACH|EHOSTUNREACH|ETIMEDOUT)/,
  );
});

test("a name the probe is given unchecked is refused at connect time, after resolution (runProbe's own lookup)", {
  skip,
}, async () => {
  const probeModule = fileURLToPath(new URL('../src/probe/index.js', import.meta.url));
  const script = `
    const { runProbe, loadTaxonomy } = await import(${JSON.stringify(probeModule)});
    const report = await runProbe({ kind: 'http', url: 'http://public.faultline.test:9/mcp' }, await loadTaxonomy(), { cases: 1, seed: 1, allowWrites: false, callTimeoutMs: 2000, overallTimeoutMs: 10000 });
    process.stdout.write(report.error ?? 'no error');`;
  const r = await isolated(['--input-type=module', '-e', script]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /no connection to http:\/\/public\.faultline\.test:9\/mcp \(ENOTLOCAL \(public\.faultline\.test: 8\.8\.8\.8/,
  );
});

test('fault_probe_mcp_server refuses metadata, mapped and public addresses by name of the argument', async () => {
  const { client, close } = await connectInMemory();
  try {
    for (const url of ['http://169.254.169.254/mcp', 'http://[::ffff:169.254.169.254]/mcp', 'http://8.8.8.8/mcp']) {
      const result = await client.callTool({ name: 'fault_probe_mcp_server', arguments: { url } });
      assert.equal(result.isError, true, url);
      assert.match(JSON.stringify(result.content), /url: /, url);
    }
  } finally {
    await close();
  }
});
