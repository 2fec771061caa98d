/**
 * Indexing with a pool of chunking threads (src/search/chunk-pool.ts) gives the index a single
 * thread gives: on a copy of zod's own sources (94 TypeScript files nobody here wrote) plus the
 * index fixture tree, a run with 1 worker and a run with 2 write the same rows, and every search
 * answers the same hits with the same scores. The pool itself answers what the caller's thread
 * answers, starts its threads only as work comes, and a cancelled run stops its threads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeConfig } from '../src/config.js';
import { CancelledError } from '../src/kernel/errors.js';
import { indexWorkersFrom, INDEX_WORKERS_ENV, openChunkPool } from '../src/search/chunk-pool.js';
import { IndexError } from '../src/search/errors.js';
import { indexSourceTree, searchIndex, type IndexSettings } from '../src/search/index.js';
import type { FileJob } from '../src/search/prepare-file.js';
import { closeReaders } from '../src/search/sqlite-store.js';
import { fixturePath, repoRoot } from './helpers/repo.js';

const ZOD_V4 = join(repoRoot, 'node_modules', 'zod', 'src', 'v4');

/** A scratch tree: zod's v4 core, mini and locales (no tests) and the index fixture tree. */
function polyglotTree(): { base: string; tree: string; cleanup(): void } {
  const base = mkdtempSync(join(tmpdir(), 'faultline-index-workers-'));
  const tree = join(base, 'tree');
  for (const part of ['core', 'mini', 'locales'])
    cpSync(join(ZOD_V4, part), join(tree, 'zod', part), {
      recursive: true,
      filter: (source) => !source.includes(`${part}/tests`),
    });
  cpSync(fixturePath('index', 'tree'), join(tree, 'fixture'), { recursive: true });
  return { base, tree, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

const settingsFor = (dataDir: string): IndexSettings => ({ dataDir, llm: makeConfig().llm, env: {} });

/** Every table's rows in order, FTS5's own segments included: the local store's whole content. */
function storeRows(dataDir: string): Record<string, unknown[]> {
  const files = readdirSync(join(dataDir, 'index'), { recursive: true, encoding: 'utf8' }).filter((name) =>
    name.endsWith('.sqlite'),
  );
  assert.equal(files.length, 1, `one store under ${dataDir}`);
  const db = new Database(join(dataDir, 'index', files[0]!), { readonly: true });
  try {
    const rows: Record<string, unknown[]> = {};
    for (const table of ['chunks', 'lexical_terms', 'lexical_vocab', 'lexical_data', 'lexical_idx', 'meta'])
      rows[table] = db.prepare(`SELECT * FROM ${table} ORDER BY 1`).all();
    rows.symbols = db.prepare('SELECT * FROM symbols ORDER BY chunk, term').all();
    return rows;
  } finally {
    db.close();
  }
}

test('a pool of 2 indexes the same rows and ranks every search the same as a pool of 1', async (t) => {
  const { base, tree, cleanup } = polyglotTree();
  t.after(cleanup);
  const one = settingsFor(join(base, 'data-1'));
  const two = settingsFor(join(base, 'data-2'));
  const statsOne = await indexSourceTree(one, { sourceDir: tree, workers: 1 });
  const statsTwo = await indexSourceTree(two, { sourceDir: tree, workers: 2 });
  closeReaders();
  assert.ok(statsOne.files > 90, `files: ${statsOne.files}`);
  const { seconds: _1, store: _s1, ...sameOne } = statsOne;
  const { seconds: _2, store: _s2, ...sameTwo } = statsTwo;
  assert.deepEqual(sameTwo, sameOne);
  const rowsOne = storeRows(one.dataDir);
  const rowsTwo = storeRows(two.dataDir);
  assert.ok(rowsOne.chunks!.length > 500, `chunks: ${rowsOne.chunks!.length}`);
  for (const table of Object.keys(rowsOne)) assert.deepEqual(rowsTwo[table], rowsOne[table], `table ${table}`);

  const queries = ['safeParse', 'ZodError', '$ZodType', 'format the error message for a locale', 'retry with backoff'];
  for (const query of queries) {
    const hitsOne = await searchIndex(one, { query, sourceDir: tree, limit: 10 });
    const hitsTwo = await searchIndex(two, { query, sourceDir: tree, limit: 10 });
    assert.ok(hitsOne.length > 0, `hits for ${query}`);
    assert.deepEqual(
      hitsTwo.map(({ tree: _, path: __, ...hit }) => hit),
      hitsOne.map(({ tree: _, path: __, ...hit }) => hit),
      query,
    );
  }
  closeReaders();
});

test('the pool answers what the caller thread answers, starting threads only as jobs come', async () => {
  const text = readFileSync(join(ZOD_V4, 'core', 'util.ts'), 'utf8');
  const jobs: FileJob[] = [
    { path: 'core/util.ts', text, language: 'typescript', hasGrammar: true, treeName: 'zod' },
    { path: 'x/a.h', text: 'class A { public: int f(); };\n', language: 'c', hasGrammar: true, treeName: 'x' },
    { path: 'x/run.kt', text: 'fun main() {\n  println("hi")\n}\n', language: 'kotlin', hasGrammar: false },
  ];
  const inProcess = openChunkPool(1, 1_000);
  assert.equal(inProcess.size, 1);
  const expected = await Promise.all(jobs.map((job) => inProcess.prepare(job)()));
  assert.equal(inProcess.preparedByCaller, jobs.length);
  const pool = openChunkPool(3, 1_000, { cores: 3 });
  try {
    assert.equal(pool.size, 3);
    assert.equal(pool.threadsStarted, 0, 'no thread before the first job');
    // Each job asked for as soon as given, before a thread could start: the caller prepares it.
    const answered = await Promise.all(jobs.map((job) => pool.prepare(job)()));
    assert.equal(pool.threadsStarted, 2, 'a second worker thread while the first had a job; the caller is the third');
    assert.equal(pool.preparedByCaller, jobs.length, 'jobs asked for while still queued are prepared by the caller');
    assert.deepEqual(answered, expected);
    assert.ok(expected[0]!.length > 20 && expected[0]![0]!.terms !== undefined, 'chunks with their terms');
    assert.equal(expected[1]![0]!.language, 'cpp', 'a C++ header is chunked as C++ on either side');
    // Answers are read from a thread's port as asked for: a later one first keeps the earlier ones.
    const asked = [...jobs, ...jobs].map((job) => pool.prepare(job));
    await pool.whenPassed();
    const late = await asked.at(-1)!();
    const early = await Promise.all(asked.slice(0, -1).map((chunks) => chunks()));
    assert.deepEqual([...early, late], [...expected, ...expected]);
    assert.equal(pool.preparedByCaller, jobs.length, 'jobs the threads had answered are not prepared again');
  } finally {
    await pool.close();
  }
  await assert.rejects(pool.prepare(jobs[0]!)(), CancelledError, 'a closed pool takes no job');
  // More threads than cores: the workers keep the cores busy, the caller only writes.
  const crowded = openChunkPool(3, 1_000, { cores: 2 });
  try {
    assert.deepEqual(await Promise.all(jobs.map((job) => crowded.prepare(job)())), expected);
    assert.equal(crowded.preparedByCaller, 0, 'with more threads than cores the caller prepares nothing');
  } finally {
    await crowded.close();
  }
  assert.equal(openChunkPool(4, 10).size, 1, 'a tree of 10 files is chunked on the caller thread');
});

test('without callerPrepares, worker threads prepare every file, whatever the pool size and the tree', async () => {
  const text = readFileSync(join(ZOD_V4, 'core', 'util.ts'), 'utf8');
  const jobs: FileJob[] = [
    { path: 'core/util.ts', text, language: 'typescript', hasGrammar: true, treeName: 'zod' },
    { path: 'x/a.py', text: 'def f():\n    return 1\n', language: 'python', hasGrammar: true, treeName: 'x' },
  ];
  const expected = await Promise.all(jobs.map((job) => openChunkPool(1, 1).prepare(job)()));
  // A pool of 1 over a small tree (the caller's thread alone by default), and one sized to the cores.
  for (const [workers, cores] of [
    [1, 1],
    [2, 2],
  ] as const) {
    const pool = openChunkPool(workers, 3, { cores, callerPrepares: false });
    try {
      // Each job asked for as soon as given, still queued: by default the caller would prepare them all.
      assert.deepEqual(await Promise.all(jobs.map((job) => pool.prepare(job)())), expected);
      assert.equal(pool.preparedByCaller, 0, `pool of ${workers}: the caller prepared a file`);
      assert.equal(pool.threadsStarted, 1, `pool of ${workers}: one worker thread`);
    } finally {
      await pool.close();
    }
  }
});

test("without callerPrepares, the caller's event loop turns while a large file is prepared", async () => {
  // A 140 KB file of 3,000 functions: the caller's loop must answer a setImmediate ping before its chunks are ready.
  // A worker thread's start alone (tens of ms) outlasts a turn of the loop. Preparing it itself (the default pool of
  // 1, its grammar loaded), the caller answers none: the parse holds its loop from the hand-over to the chunks.
  const text = Array.from({ length: 3_000 }, (_, i) => `function f${i}(a, b) {\n  return a * ${i} + b;\n}\n`).join('');
  const jobs: FileJob[] = [{ path: 'big.js', text, language: 'javascript', hasGrammar: true }];
  await openChunkPool(1, 1).prepare({ ...jobs[0]!, text: 'function warm() {}\n' })();
  const pingsBeforeLast = async (callerPrepares: boolean): Promise<number> => {
    const pool = openChunkPool(1, jobs.length, { callerPrepares });
    let pings = 0;
    let stopped = false;
    const ping = (): void => {
      pings++;
      if (!stopped) setImmediate(ping);
    };
    try {
      const asked = jobs.map((job) => pool.prepare(job));
      setImmediate(ping);
      const chunks = await Promise.all(asked.map((chunksOf) => chunksOf()));
      assert.ok(chunks.every((list) => list.length === 3_000));
      return pings;
    } finally {
      stopped = true;
      await pool.close();
    }
  };
  assert.equal(await pingsBeforeLast(true), 0, "the caller's own parse holds its loop (the case guarded against)");
  assert.ok((await pingsBeforeLast(false)) > 0, 'no ping answered while a worker prepared the file');
});

test('a worker that exits on its own fails the pool: later jobs reject, none waits for ever', async () => {
  const job: FileJob = { path: 'a.py', text: 'def f():\n    return 1\n', language: 'python', hasGrammar: true };
  // More threads than cores: the caller only writes, so a job given to a dead thread would never be answered.
  const pool = openChunkPool(3, 1_000, { cores: 2 });
  try {
    await pool.prepare(job)();
    // Not through close(): as if the thread had called process.exit() (the pool's threads are private).
    const { threads } = pool as unknown as { threads: Array<{ worker: import('node:worker_threads').Worker }> };
    const exited = new Promise((resolve) => threads[0]!.worker.once('exit', resolve));
    await threads[0]!.worker.terminate();
    await exited;
    const answers = [pool.prepare(job)(), pool.prepare(job)()];
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('still waiting after 60 s')), 60_000);
    });
    try {
      for (const answer of answers) await assert.rejects(Promise.race([answer, bound]), IndexError);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await pool.close();
  }
});

test('a cancelled pooled run throws CancelledError and leaves no thread running', async (t) => {
  const { base, tree, cleanup } = polyglotTree();
  t.after(cleanup);
  const controller = new AbortController();
  await assert.rejects(
    indexSourceTree(settingsFor(join(base, 'data')), {
      sourceDir: tree,
      workers: 2,
      signal: controller.signal,
      onProgress: ({ filesDone }) => filesDone === 20 && controller.abort(),
    }),
    CancelledError,
  );
  // The test process would not exit with a worker left running; the runner's timeout would say so.
});

test('the pool size: the argument, else FAULTLINE_INDEX_WORKERS, else the cores; bad values named', () => {
  assert.equal(indexWorkersFrom({}, 3), 3);
  assert.equal(indexWorkersFrom({ [INDEX_WORKERS_ENV]: '2' }), 2);
  assert.equal(indexWorkersFrom({ [INDEX_WORKERS_ENV]: '2' }, 1), 1);
  assert.ok(indexWorkersFrom({}) >= 1);
  assert.throws(() => indexWorkersFrom({ [INDEX_WORKERS_ENV]: 'two' }), /FAULTLINE_INDEX_WORKERS must be/);
  assert.throws(() => indexWorkersFrom({ [INDEX_WORKERS_ENV]: '0' }), IndexError);
  assert.throws(() => indexWorkersFrom({}, 0), /workers must be/);
  assert.throws(() => indexWorkersFrom({}, 1_000), /workers must be/);
});
