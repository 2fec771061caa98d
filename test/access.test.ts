/** FileAccess: the one place that decides which files the tools may read. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { link, mkdtemp, mkdir, writeFile, symlink, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FileAccess, passwdHomes, readRegularFile, secretLocations } from '../src/access.js';
import { indexSourceTree } from '../src/search/index.js';
import { makeConfig } from '../src/config.js';
import { InputError } from '../src/kernel/errors.js';

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
    assert.ok(error instanceof InputError, `expected an InputError, got ${String(error)}`);
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

test(
  'without roots only source files of a known language are read, ' + 'never a secret location (also through a symlink)',
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'faultline-noroots-'));
    try {
      const access = new FileAccess();
      await writeFile(join(dir, 'app.py'), 'def f():\n    return 1\n');
      await writeFile(join(dir, 'notes.txt'), 'plain text\n');
      assert.match((await access.readSourceFile(join(dir, 'app.py'))).text, /def f/);
      await assert.rejects(
        access.readSourceFile(join(dir, 'notes.txt'), 'file_path'),
        /^InputError: file_path: .*not a source file of a known language/,
      );
      await assert.rejects(
        access.readSourceFile('/etc/shadow', 'file'),
        /file: \/etc\/shadow is a location that holds secrets; it is never read/,
      );
      await assert.rejects(access.readSourceFile(join(homedir(), '.ssh', 'id_rsa.py'), 'file'), /holds secrets/);
      await assert.rejects(access.readSourceFile('/proc/self/environ', 'file'), /under \/proc/);
      // A source-looking symlink to a secret is judged by its real path.
      await symlink('/etc/shadow', join(dir, 'shadow.py'));
      await assert.rejects(
        access.readSourceFile(join(dir, 'shadow.py'), 'file'),
        /holds secrets|permission denied|does not exist/,
      );
      // With a root, any regular text file inside it is read.
      const rooted = new FileAccess([dir]);
      assert.equal((await rooted.readSourceFile(join(dir, 'notes.txt'))).text, 'plain text\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test('a FIFO is refused at once without blocking a worker, and later reads still work', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-fifo-'));
  try {
    const access = new FileAccess([dir]);
    const fifo = join(dir, 'pipe.py');
    execFileSync('mkfifo', [fifo]);
    await writeFile(join(dir, 'ok.py'), 'x = 1\n');
    // More attempts than libuv has workers (4 by default): a blocking open would hang them all.
    const attempts = await Promise.allSettled(
      Array.from({ length: 16 }, () => access.readSourceFile(fifo, 'file_path')),
    );
    for (const attempt of attempts) {
      assert.equal(attempt.status, 'rejected');
      assert.match(String((attempt as PromiseRejectedResult).reason), /file_path: .*not a regular file/);
    }
    assert.equal((await access.readSourceFile(join(dir, 'ok.py'))).text, 'x = 1\n');
    // A hostname lookup (also on the worker pool) still answers.
    const { lookup } = await import('node:dns/promises');
    assert.ok((await lookup('localhost')).address);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a /proc file that refuses reads gives an error naming the argument, not a raw EIO/EACCES', async () => {
  const access = new FileAccess(['/proc']);
  for (const path of ['/proc/1/mem', '/proc/self/mem', '/proc/1/environ']) {
    const error = await access.readSourceFile(path, 'file_path').then(
      () => undefined,
      (e: unknown) => e,
    );
    if (error === undefined) continue; // readable here: nothing to check
    assert.match(String(error), /^InputError: file_path: /, path);
  }
});

test(
  'a directory without roots: never a secret location, by its path ' + 'or its real path; with a root, inside it',
  async () => {
    const access = new FileAccess();
    await refusal(
      access.resolveDirectory('/etc/ssh', 'source_dir'),
      /^source_dir: \/etc\/ssh is a location that holds secrets; it is never read without roots/,
    );
    await refusal(access.resolveDirectory('/proc/self', 'source_dir'), /under \/proc/);
    const link = join(dir, 'to-etc-ssh');
    await symlink('/etc/ssh', link).catch(() => undefined);
    await refusal(access.resolveDirectory(link, 'source_dir'), /holds secrets|does not exist/);
    assert.equal(await access.resolveDirectory(inside), inside);
    // A walk asks for each directory: refused inside a secret location, and only below one that holds some.
    assert.match(access.refusal('/etc/ssh/sshd_config.d') ?? '', /\/etc\/ssh holds secrets/);
    assert.equal(access.refusal('/etc/ssl/certs'), undefined);
    assert.equal(access.holdsRefusals('/etc'), true);
    assert.equal(access.holdsRefusals(inside), false);
    const rooted = new FileAccess(['/etc']);
    assert.equal(rooted.refusal('/etc/ssh'), undefined, 'roots the user gave are the rule then');
    assert.equal(await rooted.readRefusal('/etc/ssh/sshd_config'), undefined);
    assert.equal(await rooted.readRefusal(join(inside, 'a.py')), 'is outside the roots');
    assert.match((await access.readRefusal('/etc/shadow')) ?? '', /holds secrets/);
  },
);

test("secret locations: another user's /root whole, but the entries of one's own home when it is /root", () => {
  assert.ok(secretLocations('/home/me').includes('/root'));
  assert.ok(secretLocations('/home/me').includes('/home/me/.aws'));
  assert.ok(!secretLocations('/root').includes('/root'));
  assert.ok(secretLocations('/root').includes('/root/.ssh'));
  assert.ok(secretLocations(homedir()).includes(join(homedir(), '.ssh')));
});

test('readRegularFile: only regular files, never opened otherwise, read up to the bound', async () => {
  const fifo = join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  await symlink('/dev/zero', join(dir, 'zero'));
  await symlink(join(inside, 'a.py'), join(dir, 'a-link.py'));
  // More reads than libuv has workers: none blocks.
  const reads = await Promise.all(Array.from({ length: 8 }, () => readRegularFile(fifo, { maxBytes: 100 })));
  for (const read of reads)
    assert.deepEqual(read, { kind: 'not-regular', problem: 'is not a regular file (a FIFO, socket or device)' });
  assert.equal((await readRegularFile(join(dir, 'zero'), { maxBytes: 100 })).kind, 'not-regular');
  assert.deepEqual(await readRegularFile(join(dir, 'zero'), { maxBytes: 100, followSymlinks: false }), {
    kind: 'symlink',
    problem: 'is a symbolic link (not followed)',
  });
  assert.equal((await readRegularFile(join(dir, 'a-link.py'), { maxBytes: 100 })).kind, 'read');
  assert.equal(
    (await readRegularFile(join(dir, 'a-link.py'), { maxBytes: 100, followSymlinks: false })).kind,
    'symlink',
  );
  assert.deepEqual(await readRegularFile(join(inside, 'big.py'), { maxBytes: 1024 }), {
    kind: 'too-large',
    problem: 'is over 1.0 KB',
  });
  assert.deepEqual(await readRegularFile(join(dir, 'nothing-here'), { maxBytes: 1024 }), {
    kind: 'missing',
    problem: 'does not exist',
  });
  assert.equal((await readRegularFile(inside, { maxBytes: 1024 })).kind, 'not-regular');
  // A /proc file says its size is 0 and holds more: the bound still holds.
  const proc = await readRegularFile('/proc/self/maps', { maxBytes: 64 });
  assert.equal(proc.kind, 'too-large');
  const read = await readRegularFile(join(inside, 'big.py'), { maxBytes: 4096 });
  assert.equal(read.kind === 'read' && read.bytes.length, 2048);
});

test(
  'without roots a file with several hard links is refused (it may ' +
    'be another name of a secret); inside roots it is read',
  async () => {
    const base = await mkdtemp(join(tmpdir(), 'faultline-links-'));
    try {
      const secret = join(base, 'id_rsa');
      await writeFile(secret, '-----BEGIN OPENSSH PRIVATE KEY-----\n');
      const tree = join(base, 'tree');
      await mkdir(tree);
      await link(secret, join(tree, 'key.py'));
      await refusal(
        new FileAccess().readSourceFile(join(tree, 'key.py'), 'file_path'),
        /^file_path: .*key\.py has 2 hard links; without roots a file with more than one name is not read/,
      );
      assert.match((await new FileAccess([tree]).readSourceFile(join(tree, 'key.py'))).text, /PRIVATE KEY/);
      // Indexing without roots leaves it out (never sent to the embedder); a file with one name is indexed.
      await writeFile(join(tree, 'app.py'), 'def handler():\n    return 1\n');
      const stats = await indexSourceTree(
        { dataDir: join(base, 'data'), llm: makeConfig().llm, env: {} },
        { sourceDir: tree, access: new FileAccess() },
      );
      assert.deepEqual(stats.skippedFiles.unreadable, ['key.py']);
      assert.equal(stats.files, 1);
      assert.deepEqual(
        (
          await readRegularFile(join(tree, 'key.py'), {
            maxBytes: 1024,
            refuse: (info) => new FileAccess().fileRefusal(info),
          })
        ).kind,
        'refused',
      );
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  },
);

test('a refusal through a symbolic link names the link, never where it points', async () => {
  const base = await mkdtemp(join(tmpdir(), 'faultline-pointing-'));
  try {
    const access = new FileAccess();
    const target = join(homedir(), '.ssh');
    await symlink(join(target, 'deploy_key.py'), join(base, 'innocent.py'));
    await symlink(target, join(base, 'innocent-dir'));
    await symlink('/etc/hostname', join(base, 'plain.py'));
    // Each call is made as its turn comes: made all at once, a refusal that came while an earlier one was awaited had
    // no handler yet (an unhandled rejection fails the file, as it did once under load).
    for (const [call, named] of [
      [() => access.readSourceFile(join(base, 'innocent.py'), 'file'), 'innocent.py'],
      [() => access.resolveDirectory(join(base, 'innocent-dir'), 'source_dir'), 'innocent-dir'],
      [() => access.readSourceFile(join(base, 'plain.py'), 'file'), 'plain.py'],
    ] as const) {
      await assert.rejects(call(), (error: unknown) => {
        const message = (error as Error).message;
        assert.ok(message.includes(named), message);
        assert.ok(!message.includes('.ssh') && !message.includes('hostname'), `says where the link points: ${message}`);
        return true;
      });
    }
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('every home in the password database is a home for the secret-location rule', async (t) => {
  const base = await mkdtemp(join(tmpdir(), 'faultline-passwd-'));
  try {
    const passwd = join(base, 'passwd');
    await writeFile(
      passwd,
      `root:x:0:0:root:/root:/bin/sh\nother:x:1001:1001::${base}/home/other:/bin/sh\nodd:x:2:2::/:/bin/sh\n`,
    );
    assert.deepEqual(passwdHomes(passwd), ['/root', join(base, 'home', 'other')]);
    const secrets = secretLocations('/home/me', passwdHomes(passwd));
    assert.ok(secrets.includes(join(base, 'home', 'other', '.ssh')));
    assert.ok(secrets.includes('/home/me/.aws'));
    assert.ok(!secrets.includes('/.ssh'), 'a home of / adds nothing');
    // On the real path: FileAccess reads /etc/passwd itself (replaced in a mount namespace here).
    const key = join(base, 'home', 'other', '.ssh', 'key.py');
    await mkdir(join(base, 'home', 'other', '.ssh'), { recursive: true });
    await writeFile(key, 'PRIVATE = 1\n');
    const accessModule = new URL('../src/access.js', import.meta.url).href;
    const script = `const { FileAccess } = await import(${JSON.stringify(accessModule)});
      try { await new FileAccess().readSourceFile(${JSON.stringify(key)}, 'file'); console.log('READ'); }
      catch (error) { console.log(error.message); }`;
    const run = spawnSync(
      'unshare',
      ['-m', 'sh', '-c', 'mount --bind "$1" /etc/passwd && shift && exec "$@"', 'sh', passwd, process.execPath],
      { input: script, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '--input-type=module' } },
    );
    if (run.status !== 0 && /unshare|mount/.test(run.stderr)) {
      t.skip('no mount namespace here: only the password-file reading was checked');
      return;
    }
    assert.match(
      run.stdout,
      /^file: .*key\.py is under .*home\/other\/\.ssh, a location that holds secrets/,
      run.stderr,
    );
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
