/**
 * The local index across processes, with the real CLI: two `faultline index` runs of one tree at
 * once keep each other's files, and a run killed with SIGKILL while it writes the index leaves
 * the previous index readable and the next run cleans up after it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { indexSourceTree, searchIndex } from '../src/index/index.js';
import { cliPath } from './helpers/repo.js';
import { scratchTree, type ScratchTree } from './helpers/index-tree.js';

function startIndex(tree: ScratchTree, ...args: string[]): ChildProcess & { done: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
  const child = spawn(process.execPath, [cliPath, 'index', tree.dir, ...args], {
    env: { ...process.env, FAULTLINE_DATA_DIR: tree.dataDir, OPENAI_API_KEY: '', OPENROUTER_API_KEY: '', GEMINI_API_KEY: '', OLLAMA_HOST: '', QDRANT_URL: '' },
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

async function indexed(tree: ScratchTree): Promise<string[]> {
  const hits = await searchIndex(tree.settings, { query: 'config', sourceDir: tree.dir, limit: 50 });
  return [...new Set(hits.map((hit) => hit.relativePath))].sort();
}

test('two index runs of one tree at once, for different languages, keep both', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  // Enough work that the two runs overlap.
  for (let i = 0; i < 150; i++) {
    tree.write(`py/m${i}.py`, `def python_function_${i}():\n    return ${i}\n`);
    tree.write(`go/m${i}.go`, `package m\n\nfunc GoFunction${i}() int {\n\treturn ${i}\n}\n`);
  }
  const [python, go] = await Promise.all([startIndex(tree, '--lang', 'python').done, startIndex(tree, '--lang', 'go').done]);
  assert.equal(python.code, 0, python.stderr);
  assert.equal(go.code, 0, go.stderr);
  // Nothing of either run was lost: indexing everything now only adds the two other languages' files.
  const all = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual([all.changed, all.unchanged], [2, 303], 'rateLimiter.ts and build.kt are new; 152 Python and 151 Go files are not');
});

test('a run killed with SIGKILL while writing the index leaves the previous index readable', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const first = startIndex(tree);
  assert.equal((await first.done).code, 0);
  const before = await indexed(tree);
  const storeDir = readdirSync(`${tree.dataDir}/index`).map((key) => `${tree.dataDir}/index/${key}`)[0]!;

  // A large next write, so that the window between creating the temporary and renaming it is wide.
  let killedMidWrite = false;
  for (let attempt = 0; attempt < 5 && !killedMidWrite; attempt++) {
    for (let i = 0; i < 600; i++) {
      const functions = Array.from({ length: 8 }, (_, j) => `def attempt_${attempt}_module_${i}_function_${j}(value):\n    return value + ${j}\n`);
      tree.write(`bulk/a${attempt}/m${i}.py`, functions.join('\n'));
    }
    const child = startIndex(tree);
    while (child.exitCode === null && child.signalCode === null) {
      if (readdirSync(storeDir).some((name) => name.includes('.index.tmp-'))) {
        child.kill('SIGKILL');
        break;
      }
      await sleep(1);
    }
    const { signal } = await child.done;
    // Killed before the rename: the temporary is still there (otherwise the write finished first).
    killedMidWrite = signal === 'SIGKILL' && readdirSync(storeDir).some((name) => name.includes('.index.tmp-'));
    if (!killedMidWrite) {
      const cleanup = startIndex(tree);
      assert.equal((await cleanup.done).code, 0);
    }
  }
  assert.ok(killedMidWrite, 'one of five runs was killed between creating and renaming the temporary');
  assert.deepEqual(await indexed(tree), before, 'the previous index is intact and nothing of the killed run is visible');
  assert.ok(existsSync(`${storeDir}/hashed-v1-512.index.lock`), 'the killed run held the lock');

  const next = startIndex(tree);
  const result = await next.done;
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(readdirSync(storeDir).sort(), ['hashed-v1-512.index', 'tree.json'], 'the temporary and the dead lock are gone');
  const [hit] = await searchIndex(tree.settings, { query: 'attempt module function value', sourceDir: tree.dir, limit: 1 });
  assert.match(hit!.symbol, /^attempt_\d_module_\d+_function_\d$/, 'the next run indexed what the killed one could not');
});
