/** FileAccess: the one place that decides which files the tools may read. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, symlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FileAccess } from '../src/access.js';
import { ToolInputError } from '../src/errors.js';

let dir: string;
let inside: string;
let outside: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'faultline-access-'));
  inside = join(dir, 'root');
  outside = join(dir, 'elsewhere');
  await mkdir(inside);
  await mkdir(outside);
  await writeFile(join(inside, 'a.py'), '\ufeffdef a():\n    return 1\n');
  await writeFile(join(outside, 'secret.py'), 'x = 1\n');
  await writeFile(join(inside, 'blob.bin'), Buffer.from([1, 2, 0, 3]));
  await writeFile(join(inside, 'big.py'), Buffer.alloc(2048, 0x61));
  await symlink(join(outside, 'secret.py'), join(inside, 'escape.py'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function refusal(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ToolInputError, `expected a ToolInputError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

test('reads an absolute path and a file:// URI, without the BOM', async () => {
  const access = new FileAccess();
  const file = join(inside, 'a.py');
  assert.equal((await access.readSourceFile(file)).text, 'def a():\n    return 1\n');
  assert.equal((await access.readSourceFile(pathToFileURL(file).href)).path, file);
});

test('refuses relative paths unless exactly one root resolves them', async () => {
  await refusal(new FileAccess().readSourceFile('a.py'), /relative path; it must be absolute/);
  assert.equal((await new FileAccess([inside]).readSourceFile('a.py')).path, join(inside, 'a.py'));
  await refusal(new FileAccess([inside, outside]).readSourceFile('a.py'), /exactly one root/);
});

test('names each kind of unreadable file', async () => {
  const access = new FileAccess();
  await refusal(access.readSourceFile(join(inside, 'missing.py')), /does not exist/);
  await refusal(access.readSourceFile(inside), /is a directory/);
  await refusal(new FileAccess([inside]).readSourceFile(join(inside, 'blob.bin')), /binary/);
  await refusal(access.readSourceFile(join(inside, 'big.py'), 'file', 1024), /2\.0 KB; files over 1\.0 KB/);
  await refusal(access.readSourceFile(''), /empty path/);
  await refusal(access.readSourceFile('https://example.com/a.py'), /is a URL/);
  await refusal(access.readSourceFile('file://host:bad'), /file/);
});

test('confines reads to the roots, symlinks included', async () => {
  const access = new FileAccess([inside]);
  await refusal(access.readSourceFile(join(outside, 'secret.py')), /outside the allowed roots/);
  await refusal(access.readSourceFile(join(inside, 'escape.py')), /outside the allowed roots/);
  await refusal(access.readSourceFile(join(inside, '..', 'elsewhere', 'secret.py')), /outside the allowed roots/);
});

test('client roots apply only when the user gave none', async () => {
  const access = new FileAccess();
  access.setClientRoots([pathToFileURL(inside).href, 'https://not-a-file-root']);
  assert.deepEqual(access.roots, [inside]);
  await refusal(access.readSourceFile(join(outside, 'secret.py')), /outside the allowed roots/);
  const pinned = new FileAccess([outside]);
  pinned.setClientRoots([pathToFileURL(inside).href]);
  assert.deepEqual(pinned.roots, [outside]);
});

test('directories resolve with the same rules', async () => {
  const access = new FileAccess([inside]);
  assert.equal(await access.resolveDirectory(inside), inside);
  await refusal(access.resolveDirectory(join(inside, 'a.py')), /not a directory/);
  await refusal(access.resolveDirectory(outside), /outside the allowed roots/);
});

// With no roots: the no-roots policy, FIFOs, /proc.
import { execFileSync } from 'node:child_process';
import { mkdtemp as mkdtemp11, writeFile as writeFile11, symlink as symlink11, rm as rm11 } from 'node:fs/promises';
import { tmpdir as tmpdir11, homedir as homedir11 } from 'node:os';
import { join as join11 } from 'node:path';
import { FileAccess as FileAccess11 } from '../src/access.js';

test('without roots only source files of a known language are read, never a secret location (also through a symlink)', async () => {
  const dir = await mkdtemp11(join11(tmpdir11(), 'faultline-noroots-'));
  try {
    const access = new FileAccess11();
    await writeFile11(join11(dir, 'app.py'), 'def f():\n    return 1\n');
    await writeFile11(join11(dir, 'notes.txt'), 'plain text\n');
    assert.match((await access.readSourceFile(join11(dir, 'app.py'))).text, /def f/);
    await assert.rejects(access.readSourceFile(join11(dir, 'notes.txt'), 'file_path'), /^ToolInputError: file_path: .*not a source file of a known language/);
    await assert.rejects(access.readSourceFile('/etc/shadow', 'file'), /file: \/etc\/shadow is under \/etc\/shadow, a location that holds secrets/);
    await assert.rejects(access.readSourceFile(join11(homedir11(), '.ssh', 'id_rsa.py'), 'file'), /holds secrets/);
    await assert.rejects(access.readSourceFile('/proc/self/environ', 'file'), /under \/proc/);
    // A source-looking symlink to a secret is judged by its real path.
    await symlink11('/etc/shadow', join11(dir, 'shadow.py'));
    await assert.rejects(access.readSourceFile(join11(dir, 'shadow.py'), 'file'), /holds secrets|permission denied|does not exist/);
    // With a root, any regular text file inside it is read.
    const rooted = new FileAccess11([dir]);
    assert.equal((await rooted.readSourceFile(join11(dir, 'notes.txt'))).text, 'plain text\n');
  } finally {
    await rm11(dir, { recursive: true, force: true });
  }
});

test('a FIFO is refused at once without blocking a worker, and later reads still work', async () => {
  const dir = await mkdtemp11(join11(tmpdir11(), 'faultline-fifo-'));
  try {
    const access = new FileAccess11([dir]);
    const fifo = join11(dir, 'pipe.py');
    execFileSync('mkfifo', [fifo]);
    await writeFile11(join11(dir, 'ok.py'), 'x = 1\n');
    // More attempts than libuv has workers (4 by default): a blocking open would hang them all.
    const attempts = await Promise.allSettled(Array.from({ length: 16 }, () => access.readSourceFile(fifo, 'file_path')));
    for (const attempt of attempts) {
      assert.equal(attempt.status, 'rejected');
      assert.match(String((attempt as PromiseRejectedResult).reason), /file_path: .*not a regular file/);
    }
    assert.equal((await access.readSourceFile(join11(dir, 'ok.py'))).text, 'x = 1\n');
    // A hostname lookup (also on the worker pool) still answers.
    const { lookup } = await import('node:dns/promises');
    assert.ok((await lookup('localhost')).address);
  } finally {
    await rm11(dir, { recursive: true, force: true });
  }
});

test('a /proc file that refuses reads gives an error naming the argument, not a raw EIO/EACCES', async () => {
  const access = new FileAccess11(['/proc']);
  for (const path of ['/proc/1/mem', '/proc/self/mem', '/proc/1/environ']) {
    const error = await access.readSourceFile(path, 'file_path').then(() => undefined, (e: unknown) => e);
    if (error === undefined) continue; // readable here: nothing to check
    assert.match(String(error), /^ToolInputError: file_path: /, path);
  }
});
