/**
 * DNS rebinding against the target policy, door by door: a name that resolves to 127.0.0.1 when
 * the URL is read and to 169.254.169.254 at connect time must not reach the metadata address.
 * Each door is driven through the MCP server inside a network namespace with only loopback
 * (`unshare -n -m`), where a rebinding DNS server answers on 127.0.0.1 (resolv.conf replaced in a
 * mount namespace) and a listener on 169.254.169.254 counts what reaches it
 * (test/helpers/rebinding-doors.ts). Skipped where namespaces cannot be made.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const canIsolate =
  process.platform === 'linux' &&
  spawnSync('unshare', ['-n', '-m', 'sh', '-c', 'ip link set lo up && ip addr add 169.254.169.254/32 dev lo'])
    .status === 0;
const skip = canIsolate ? false : 'needs unshare -n -m and ip (network and mount namespaces, an address on lo)';

interface DoorOutcome {
  metadataConnections: number;
  isError: boolean;
  text: string;
}

async function runDoors(): Promise<Record<string, DoorOutcome>> {
  const dir = await mkdtemp(join(tmpdir(), 'rebind-'));
  try {
    const resolv = join(dir, 'resolv.conf');
    await writeFile(resolv, 'nameserver 127.0.0.1\noptions attempts:2 timeout:2\n');
    const script = [
      'ip link set lo up',
      'ip addr add 169.254.169.254/32 dev lo',
      'mount --bind "$1" /etc/resolv.conf',
      'shift',
      'exec "$@"',
    ].join(' && ');
    const doors = fileURLToPath(new URL('./helpers/rebinding-doors.js', import.meta.url));
    const isolate = fileURLToPath(new URL('./helpers/isolate.js', import.meta.url));
    const args = ['-n', '-m', 'sh', '-c', script, 'sh', resolv, process.execPath, '--import', isolate, doors, 'run'];
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn('unshare', args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
        child.on('error', reject);
        child.on('close', (exit) => {
          clearTimeout(timer);
          resolve({ code: exit, stdout: out, stderr: err });
        });
      },
    );
    assert.equal(code, 0, stderr);
    return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, DoorOutcome>;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a name rebound to 169.254.169.254 after it was read is refused at connect, at every door', { skip }, async () => {
  const outcome = await runDoors();
  assert.deepEqual(Object.keys(outcome).sort(), [
    'experiment control client',
    'experiment method[].toolcall.url',
    'tool-call scenario url',
  ]);
  for (const [door, seen] of Object.entries(outcome)) {
    assert.equal(seen.metadataConnections, 0, `${door} reached the metadata address: ${seen.text}`);
    assert.match(seen.text, /ENOTLOCAL|link-local or cloud metadata/, `${door}: ${seen.text}`);
  }
});
