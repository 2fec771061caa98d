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
  await refusal(access.readSourceFile(join(inside, 'blob.bin')), /binary/);
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
