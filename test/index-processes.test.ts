/**
 * The local index across processes, with the real CLI: two `faultline index` runs of one tree at
 * once keep each other's files, and a run killed with SIGKILL while it writes the index leaves
 * the previous index readable (SQLite rolls the unfinished transaction back) and the next run
 * indexes what it could not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { openStore } from '../src/search/open.js';
import { selectEmbedder } from '../src/search/embedder.js';
import { closeReaders } from '../src/search/sqlite-store.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { indexSourceTree, searchIndex } from '../src/search/index.js';
import { cliPath } from './helpers/repo.js';
import { LOCAL_PROVIDERS, pythonScratchTree, scratchTree, type ScratchTree } from './helpers/index-tree.js';

function startIndex(
  tree: ScratchTree,
  ...args: string[]
): ChildProcess & { done: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
  const child = spawn(process.execPath, [cliPath, 'index', tree.dir, ...args], {
    env: {
      ...process.env,
      FAULTLINE_DATA_DIR: tree.dataDir,
      ...LOCAL_PROVIDERS,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const done = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
  return Object.assign(child, { done });
}

/** The paths in the tree's index, sorted. */
async function indexed(tree: ScratchTree): Promise<string[]> {
  const { store } = await openStore(
    tree.settings,
    await realpath(tree.dir),
    await selectEmbedder(tree.settings.llm, tree.settings.env),
  );
  return [...(await store.fileHashes()).keys()].sort();
}

test('two index runs of one tree at once, for different languages, keep both', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  // Enough work that the two runs overlap.
  for (let i = 0; i < 150; i++) {
    tree.write(`py/m${i}.py`, `def python_function_${i}():\n    return ${i}\n`);
    tree.write(`go/m${i}.go`, `package m\n\nfunc GoFunction${i}() int {\n\treturn ${i}\n}\n`);
  }
  const [python, go] = await Promise.all([
    startIndex(tree, '--lang', 'python').done,
    startIndex(tree, '--lang', 'go').done,
  ]);
  assert.equal(python.code, 0, python.stderr);
  assert.equal(go.code, 0, go.stderr);
  // Nothing of either run was lost: indexing everything now only adds the two other languages' files.
  const all = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual(
    [all.changed, all.unchanged],
    [2, 303],
    'rateLimiter.ts and build.kt are new; 152 Python and 151 Go files are not',
  );
});

test('a run killed with SIGKILL while writing the index leaves the previous index readable', async (t) => {
  // 8 definitions a file: enough rows that the transaction spills pages to the log before its commit.
  const tree = pythonScratchTree();
  t.after(tree.cleanup);
  const first = startIndex(tree);
  assert.equal((await first.done).code, 0);
  const before = await indexed(tree);
  closeReaders();
  const storeDir = readdirSync(`${tree.dataDir}/index`).map((key) => `${tree.dataDir}/index/${key}`)[0]!;

  // A large next run, killed once its transaction has written to the write-ahead log.
  for (let i = 0; i < 600; i++) {
    const functions = Array.from(
      { length: 8 },
      (_, j) => `def attempt_module_${i}_function_${j}(value):\n    return value + ${j}\n`,
    );
    tree.write(`bulk/m${i}.py`, functions.join('\n'));
  }
  const child = startIndex(tree);
  const wal = `${storeDir}/hashed-v1-512.sqlite-wal`;
  while (child.exitCode === null && child.signalCode === null) {
    if (existsSync(wal) && statSync(wal).size > 0) {
      child.kill('SIGKILL');
      break;
    }
    await sleep(1);
  }
  const { signal } = await child.done;
  assert.equal(signal, 'SIGKILL', 'the run was killed while it wrote');
  assert.deepEqual(
    await indexed(tree),
    before,
    'the previous index is intact and nothing of the killed run is visible',
  );
  closeReaders();

  const next = startIndex(tree);
  const result = await next.done;
  assert.equal(result.code, 0, result.stderr);
  const [hit] = await searchIndex(tree.settings, {
    query: 'attempt module function value',
    sourceDir: tree.dir,
    limit: 1,
  });
  assert.match(hit!.symbol, /^attempt_module_\d+_function_\d$/, 'the next run indexed what the killed one could not');
  closeReaders();
});

test(
  'Ctrl-C during a first run: search says the run was interrupted ' + 'and to index again, not "not indexed"',
  async (t) => {
    const tree = pythonScratchTree();
    t.after(tree.cleanup);
    // The interruption comes at the run's first write, however much follows: 2 definitions a file
    // cost the next run less CPU than 8.
    for (let i = 0; i < 600; i++) {
      const functions = Array.from(
        { length: 2 },
        (_, j) => `def interrupted_module_${i}_function_${j}(value):\n    return value + ${j}\n`,
      );
      tree.write(`bulk/m${i}.py`, functions.join('\n'));
    }
    const child = startIndex(tree);
    // The database appears with the run's first write (its transaction begins there): interrupt then.
    const database = (): string | undefined => {
      const index = `${tree.dataDir}/index`;
      if (!existsSync(index)) return undefined;
      return readdirSync(index)
        .map((key) => `${index}/${key}/hashed-v1-512.sqlite`)
        .find((file) => existsSync(file));
    };
    const deadline = Date.now() + 60_000;
    while (child.exitCode === null && child.signalCode === null && database() === undefined && Date.now() < deadline)
      await sleep(1);
    child.kill('SIGINT');
    const { code, stderr } = await child.done;
    assert.equal(code, 130, `the run was interrupted while it wrote: ${stderr}`);
    assert.ok(database(), 'the interrupted first run left its database');

    const search = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const run = spawn(process.execPath, [cliPath, 'search', 'interrupted module function', ...args], {
          env: {
            ...process.env,
            FAULTLINE_DATA_DIR: tree.dataDir,
            ...LOCAL_PROVIDERS,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let err = '';
        run.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
        run.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
        const timer = setTimeout(() => run.kill('SIGKILL'), 60_000);
        run.on('error', reject);
        run.on('close', (exit) => {
          clearTimeout(timer);
          resolve({ code: exit, stdout, stderr: err });
        });
      });
    const dir = await realpath(tree.dir);
    for (const args of [['--dir', tree.dir], []]) {
      const result = await search(args);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        /an index run was interrupted before it finished \(Ctrl-C, a kill or a failure/,
        `search ${args.join(' ')}`,
      );
      assert.match(
        result.stderr,
        args.length > 0
          ? new RegExp(
              `index it again; if a run is still going, wait for it to finish; to index: faultline index ${dir}`,
            )
          : /index it again; if a run is still going, wait for it to finish; to index: faultline index DIR/,
      );
    }

    // Indexing again finishes the job, and search finds it.
    const next = await startIndex(tree).done;
    assert.equal(next.code, 0, next.stderr);
    const found = await search(['--dir', tree.dir, '--json', '--limit', '1']);
    assert.equal(found.code, 0, found.stderr);
    assert.match(
      (JSON.parse(found.stdout) as Array<{ symbol: string }>)[0]!.symbol,
      /^interrupted_module_\d+_function_\d$/,
    );
  },
);
