/**
 * What indexing reads and how it stops, against real processes: the MCP server over stdio with a
 * fake HOME holding planted secrets, ignore files that are a FIFO or a link to /dev/zero, and
 * `faultline index` ended by SIGTERM and SIGINT.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, textOf } from './helpers/mcp.js';
import { cliPath } from './helpers/repo.js';
import { runCliProcess } from './helpers/processes.js';
import { LOCAL_PROVIDERS, pythonScratchTree, type ScratchTree } from './helpers/index-tree.js';
import { openStore } from '../src/search/open.js';
import { selectEmbedder } from '../src/search/embedder.js';
import { closeReaders } from '../src/search/sqlite-store.js';

// The one server here that lists code (the FIFO test's) starts with its listing thread, as users
// run it; the others only index and search, and keep the suite's default (test/helpers/isolate.ts:
// off, ~0.9 s of CPU saved per server).
const LISTING = { FAULTLINE_LISTING_THREAD: 'on' };

const SECRET = 'planted-secret-7f3a9c';

/**
 * A scratch directory. Node runs a test's after hooks in the order they were added, so a test
 * that starts a server in it removes it only after closing the server (the code tools write
 * their definition store after answering: a server still open can write while it is removed).
 */
function scratch(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }) };
}

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

type Structured = Record<string, unknown> & {
  skipped_files: { unreadable: string[]; directories: Array<{ path: string; reason: string; include?: string }> };
  note?: string;
};

test(
  'without roots, secret locations under HOME are never indexed nor ' + 'searched, by path, URI, link or include_dirs',
  async (t) => {
    const base = scratch('faultline-secrets-');
    const home = join(base.dir, 'home');
    write(
      join(home, '.aws', 'credentials.py'),
      `AWS_SECRET_ACCESS_KEY = "${SECRET}"\ndef aws_credentials():\n    return AWS_SECRET_ACCESS_KEY\n`,
    );
    write(join(home, '.ssh', 'keys.py'), `PRIVATE_KEY = "${SECRET}"\n`);
    write(join(home, 'project', 'app.py'), 'def application_entry():\n    return 1\n');
    symlinkSync(join(home, '.aws'), join(home, 'project', 'aws'));
    const session = await connectStdio(['mcp'], {
      ...LOCAL_PROVIDERS,
      HOME: home,
      FAULTLINE_DATA_DIR: join(base.dir, 'data'),
    });
    t.after(async () => {
      await session.close();
      base.cleanup();
    });
    const call = (name: string, args: Record<string, unknown>) =>
      session.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

    for (const sourceDir of [
      join(home, '.aws'),
      pathToFileURL(join(home, '.ssh')).href,
      join(home, '.aws', '..', '.ssh'),
      join(home, 'project', 'aws'),
    ]) {
      const refused = await call('fault_index_source_code', { source_dir: sourceDir });
      assert.equal(refused.isError, true, sourceDir);
      // A symbolic link is refused without saying where it points (issue 36).
      assert.match(
        textOf(refused),
        sourceDir.endsWith(join('project', 'aws'))
          ? /^source_dir: .*\/project\/aws resolves into a location that holds secrets; it is never read without roots/
          : /^source_dir: .*\/\.(aws|ssh) is a location that holds secrets; it is never read without roots/,
        sourceDir,
      );
    }
    // The whole file system is no project: refused without roots, named or through a link to it.
    symlinkSync('/', join(base.dir, 'everything'));
    for (const sourceDir of ['/', join(base.dir, 'everything'), pathToFileURL('/').href]) {
      const refused = await call('fault_index_source_code', { source_dir: sourceDir });
      assert.equal(refused.isError, true, sourceDir);
      assert.match(textOf(refused), /^source_dir: \/\S* is the whole file system; without roots give a project's/);
    }
    // HOME itself may be indexed: its secret locations are listed as skipped, and nothing includes them.
    const indexed = await call('fault_index_source_code', { source_dir: home, include_dirs: ['.aws', '.ssh'] });
    assert.equal(indexed.isError, undefined, textOf(indexed));
    const stats = indexed.structuredContent as Structured;
    assert.deepEqual(
      stats.skipped_files.directories.filter((directory) => directory.reason === 'secret location'),
      [
        { path: '.aws/', reason: 'secret location' },
        { path: '.ssh/', reason: 'secret location' },
      ],
    );
    assert.match(textOf(indexed), /\.aws\/ \(secret location; never read without roots\)/);

    for (const args of [
      { query: SECRET },
      { query: 'AWS_SECRET_ACCESS_KEY' },
      { query: 'aws credentials', source_dir: home },
      { query: 'PRIVATE_KEY' },
    ]) {
      const found = await call('fault_search_code', args);
      const results =
        (found.structuredContent as { results?: Array<{ path: string; code: string }> } | undefined)?.results ?? [];
      assert.ok(
        results.length === 0 || results.every((hit) => !hit.code.includes(SECRET) && !hit.path.includes('/.aws/')),
        JSON.stringify(results),
      );
      assert.doesNotMatch(textOf(found), new RegExp(SECRET));
    }
    const app = await call('fault_search_code', { query: 'application_entry', source_dir: home });
    assert.equal(
      (app.structuredContent as { results: Array<{ symbol: string }> }).results[0]?.symbol,
      'application_entry',
    );

    // The CLI follows the same rule.
    const cli = await runCliProcess(['index', join(home, '.aws')], {
      ...LOCAL_PROVIDERS,
      HOME: home,
      FAULTLINE_DATA_DIR: join(base.dir, 'cli-data'),
    });
    assert.equal(cli.code, 2, cli.stderr);
    assert.match(cli.stderr, /^faultline: dir: .*\.aws is a location that holds secrets/);
  },
);

test(
  'a FIFO or a link to /dev/zero as an ignore file neither blocks ' +
    'nor fills the server; its rules are said not to apply',
  async (t) => {
    const base = scratch('faultline-fifo-ignore-');
    const checkout = join(base.dir, 'checkout');
    const tree = join(checkout, 'tree');
    write(join(tree, 'app.py'), 'def fifo_safe_function():\n    return 1\n');
    write(join(tree, 'sub', 'mod.py'), 'def under_dev_zero_link():\n    return 2\n');
    write(join(tree, 'deeper', 'mod.py'), 'def under_exclude_link():\n    return 3\n');
    mkdirSync(join(checkout, '.git', 'info'), { recursive: true });
    execFileSync('mkfifo', [join(checkout, '.git', 'info', 'exclude')]);
    execFileSync('mkfifo', [join(tree, '.gitignore')]);
    symlinkSync('/dev/zero', join(tree, 'sub', '.gitignore'));
    // A second tree whose .git/info/exclude (which git follows when it is a link) is /dev/zero.
    const other = join(base.dir, 'other');
    write(join(other, 'mod.py'), 'def other_tree_function():\n    return 4\n');
    mkdirSync(join(other, '.git', 'info'), { recursive: true });
    symlinkSync('/dev/zero', join(other, '.git', 'info', 'exclude'));

    const session = await connectStdio(['mcp'], {
      ...LOCAL_PROVIDERS,
      ...LISTING,
      FAULTLINE_DATA_DIR: join(base.dir, 'data'),
    });
    t.after(async () => {
      await session.close();
      base.cleanup();
    });
    const call = (name: string, args: Record<string, unknown>) =>
      session.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

    // More calls at once than libuv has workers (4): a blocking read would hold them all, and the server with them.
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => call('fault_index_source_code', { source_dir: tree })),
    );
    for (const run of runs) {
      assert.equal(run.isError, undefined, textOf(run));
      const stats = run.structuredContent as Structured;
      assert.equal(stats.files, 3);
      assert.deepEqual(stats.skipped_files.unreadable, ['../.git/info/exclude', '.gitignore', 'sub/.gitignore']);
      assert.match(
        stats.note!,
        /the rules of \.gitignore were not applied: it is not a regular file \(a FIFO, socket or device\)/,
      );
      assert.match(
        stats.note!,
        /the rules of sub\/\.gitignore were not applied: it is a symbolic link \(not followed\)/,
      );
      assert.match(stats.note!, /the rules of \.\.\/\.git\/info\/exclude were not applied: it is not a regular file/);
    }
    const linked = await call('fault_index_source_code', { source_dir: other });
    assert.equal(linked.isError, undefined, textOf(linked));
    assert.deepEqual((linked.structuredContent as Structured).skipped_files.unreadable, ['.git/info/exclude']);
    // The server still answers other calls, and the index holds the files.
    const found = await call('fault_search_code', { query: 'under_dev_zero_link', source_dir: tree });
    assert.equal(
      (found.structuredContent as { results: Array<{ symbol: string }> }).results[0]?.symbol,
      'under_dev_zero_link',
    );
    const list = await call('fault_list_function_names', { file: join(tree, 'app.py') });
    assert.equal(list.isError, undefined, textOf(list));
  },
);

interface Run {
  code: number | null;
  signal: string | null;
  stderr: string;
}

function startIndex(tree: ScratchTree): { child: ReturnType<typeof spawn>; done: Promise<Run>; stderr: () => string } {
  const child = spawn(process.execPath, [cliPath, 'index', tree.dir], {
    env: { ...process.env, ...LOCAL_PROVIDERS, FAULTLINE_DATA_DIR: tree.dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
  return { child, done, stderr: () => stderr };
}

async function indexedPaths(tree: ScratchTree): Promise<string[]> {
  const { store } = await openStore(
    tree.settings,
    await realpath(tree.dir),
    await selectEmbedder(tree.settings.llm, tree.settings.env),
  );
  const paths = [...(await store.fileHashes()).keys()].sort();
  closeReaders();
  return paths;
}

function storeFile(tree: ScratchTree): string {
  const index = join(tree.dataDir, 'index');
  return readdirSync(index)
    .map((key) => join(index, key, 'hashed-v1-512.sqlite'))
    .find((file) => existsSync(file))!;
}

for (const [signal, code] of [
  ['SIGTERM', 143],
  ['SIGINT', 130],
] as const) {
  test(
    `${signal} ends \`faultline index\` while it writes (exit ` + `${code}), leaving the previous index whole`,
    async (t) => {
      const tree = pythonScratchTree();
      t.after(tree.cleanup);
      const first = await startIndex(tree).done;
      assert.equal(first.code, 0, first.stderr);
      const before = await indexedPaths(tree);
      // Files, not definitions, make the run long: 2 a file cost the next run a third less CPU than 8.
      for (let i = 0; i < 600; i++) {
        const functions = Array.from(
          { length: 2 },
          (_, j) => `def signalled_module_${i}_function_${j}(value):\n    return value + ${j}\n`,
        );
        tree.write(`bulk/m${i}.py`, functions.join('\n'));
      }
      // The write-ahead log appears when the run opens its write transaction, at its first changed
      // file, and its frames only at the commit, 600 files later.
      const wal = `${storeFile(tree)}-wal`;
      // The last connection to close checkpoints the log into the database and removes it.
      const last = new Database(storeFile(tree));
      last.pragma('wal_checkpoint(TRUNCATE)');
      last.close();
      assert.ok(!existsSync(wal));
      const { child, done } = startIndex(tree);
      while (child.exitCode === null && !existsSync(wal)) await sleep(1);
      const signalled = performance.now();
      child.kill(signal);
      const run = await done;
      const seconds = (performance.now() - signalled) / 1000;
      assert.equal(run.code, code, run.stderr);
      assert.match(run.stderr, new RegExp(`indexing was cancelled \\(${signal}\\)`));
      // "At once": it stops at its next step; 10 s is a bound far above that on a busy machine.
      assert.ok(seconds < 10, `exited ${seconds.toFixed(1)} s after ${signal}`);
      assert.deepEqual(await indexedPaths(tree), before, 'nothing of the interrupted run is visible');
      // The next run finishes the job. Asked once: both signals take the same cancellation and leave
      // the same index (asserted just above), and a next run after Ctrl-C is index-processes' too;
      // each is a 600-file run (~2.5 s of CPU).
      if (signal !== 'SIGTERM') return;
      const next = await startIndex(tree).done;
      assert.equal(next.code, 0, next.stderr);
      assert.equal((await indexedPaths(tree)).length, before.length + 600);
    },
  );
}

test('a first run killed while it writes leaves no index; the next builds it whole, in WAL mode', async (t) => {
  const tree = pythonScratchTree();
  t.after(tree.cleanup);
  for (let i = 0; i < 600; i++)
    tree.write(`bulk/m${i}.py`, `def killed_module_${i}(value):\n    return value + ${i}\n`);
  const opened = async () => {
    const { store, exists, unfinished } = await openStore(
      tree.settings,
      await realpath(tree.dir),
      await selectEmbedder(tree.settings.llm, tree.settings.env),
    );
    closeReaders();
    return { store, exists, unfinished };
  };
  // The run's write-ahead log appears as it opens the database to write, 600 files before the commit.
  const { child, done } = startIndex(tree);
  const writing = (): boolean => existsSync(join(tree.dataDir, 'index')) && existsSync(`${storeFile(tree)}-wal`);
  while (child.exitCode === null && !writing()) await sleep(1);
  child.kill('SIGKILL');
  assert.equal((await done).signal, 'SIGKILL', 'killed before it committed');
  assert.deepEqual(
    { exists: (await opened()).exists, unfinished: (await opened()).unfinished },
    { exists: false, unfinished: true },
    'no index, nor a damaged one: the killed run wrote nothing to the database',
  );
  const next = await startIndex(tree).done;
  assert.equal(next.code, 0, next.stderr);
  assert.ok((await indexedPaths(tree)).includes('bulk/m599.py'));
  const db = new Database(storeFile(tree), { readonly: true });
  t.after(() => db.close());
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal', 'readers never wait for the next run');
});

test("SIGTERM ends a run waiting for another writer's lock, and the lock holder's work is untouched", async (t) => {
  const tree = pythonScratchTree();
  t.after(tree.cleanup);
  assert.equal((await startIndex(tree).done).code, 0);
  tree.write('app/added.py', 'def added_while_locked():\n    return 1\n');
  // Another writer holds the database (as a second `faultline index` of the tree would).
  const holder = new Database(storeFile(tree));
  holder.pragma('journal_mode = WAL');
  holder.exec('BEGIN IMMEDIATE');
  t.after(() => holder.close());
  const { child, done, stderr } = startIndex(tree);
  // The run says when it starts waiting (however long a busy machine takes to get there).
  while (child.exitCode === null && !stderr().includes('waiting for another indexing run')) await sleep(5);
  assert.equal(child.exitCode, null, 'the run waits for the lock');
  const signalled = performance.now();
  child.kill('SIGTERM');
  const run = await done;
  assert.equal(run.code, 143, run.stderr);
  assert.ok((performance.now() - signalled) / 1000 < 10);
  holder.exec('ROLLBACK');
  assert.ok(!(await indexedPaths(tree)).includes('app/added.py'));
});
