/**
 * fault_index_source_code and fault_search_code through MCP: the real SDK client and server,
 * linked in memory, with the tool registry built as src/server.ts builds it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig } from '../src/config.js';
import { registerSearchTools } from '../src/tools/search.js';
import { MAX_HIT_CODE_CHARS } from '../src/search/search.js';
import { lintTool } from './helpers/schema-lint.js';
import { connectInMemory, connectTools } from './helpers/mcp.js';
import { scratchTree, type ScratchTree } from './helpers/index-tree.js';

function connect(tree: ScratchTree, roots: string[] = []): Promise<{ client: Client; close(): Promise<void> }> {
  return connectTools(registerSearchTools, makeConfig({ dataDir: tree.dataDir, roots }));
}

const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

test('both tools are listed and pass the schema lint', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const { client, close } = await connect(tree);
  t.after(close);
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['fault_index_source_code', 'fault_search_code'],
  );
  for (const tool of tools) assert.deepEqual(lintTool(tool), []);
});

test('an index that finds no file says why in its text as well as in its note', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const { client, close } = await connect(tree);
  t.after(close);
  const indexed = await client.callTool({
    name: 'fault_index_source_code',
    arguments: { source_dir: tree.dir, lang: 'ruby' },
  });
  assert.equal(indexed.isError, undefined);
  const { files, note } = indexed.structuredContent as { files: number; note: string };
  assert.equal(files, 0);
  assert.match(note, /^no source file in the selected languages \(ruby\) to index in /);
  assert.equal(
    text(indexed),
    'done\n\nskipped directories: ignored/ (ignored by .gitignore; ' +
      'include_dirs: ["ignored"]), node_modules/ (dependency; ' +
      `include_dirs: ["node_modules"])\n\nnote: ${note}`,
  );
  // Searching it right after does not contradict the index run that just answered.
  const search = await client.callTool({
    name: 'fault_search_code',
    arguments: { query: 'config', source_dir: tree.dir },
  });
  assert.equal(search.isError, true);
  // The domain says what is missing; the tool names the tool that does it.
  assert.match(
    text(search),
    /an index run that finds no source file leaves no index; its note says why\); to index: fault_index_source_code$/,
  );
});

test('index with progress, then search: text and structured content', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const { client, close } = await connect(tree);
  t.after(close);
  const progress: number[] = [];
  const indexed = await client.callTool(
    { name: 'fault_index_source_code', arguments: { source_dir: tree.dir, lang: 'all' } },
    undefined,
    {
      onprogress: (notification) => progress.push(notification.progress),
    },
  );
  assert.equal(indexed.isError, undefined);
  assert.match(
    text(indexed),
    /^done\n\nskipped directories: ignored\/ .*node_modules\/ \(dependency; include_dirs: \["node_modules"\]\)$/,
  );
  const stats = indexed.structuredContent as Record<string, unknown>;
  assert.equal(stats.files, 5);
  assert.equal(stats.skipped, 4);
  assert.deepEqual(stats.skipped_files, {
    too_large: ['app/huge.py'],
    binary: ['app/blob.py'],
    unreadable: [],
    directories: [
      { path: 'ignored/', reason: 'ignored by .gitignore', include: 'ignored' },
      { path: 'node_modules/', reason: 'dependency', include: 'node_modules' },
    ],
    symlinks: [],
  });
  assert.match(String(stats.store), /^local index /);
  assert.ok(progress.length >= 5, `progress notifications: ${progress.join(',')}`);
  assert.deepEqual(
    progress,
    [...progress].sort((a, b) => a - b),
  );

  const found = await client.callTool({
    name: 'fault_search_code',
    arguments: { query: 'health check', source_dir: tree.dir, limit: 2 },
  });
  assert.equal(found.isError, undefined);
  const { results } = found.structuredContent as { results: Array<Record<string, unknown>> };
  assert.equal(results.length, 2);
  assert.equal(results[0]!.symbol, 'Server.HandleHealthCheck');
  assert.equal(results[0]!.start_line, 10);
  assert.match(
    text(found),
    /^1\. .*lib\/server\.go:10-14 Server\.HandleHealthCheck \(method, score 0\.\d{3}\)\n```go\n\/\/ HandleHealthCheck/,
  );

  const anywhere = await client.callTool({ name: 'fault_search_code', arguments: { query: 'health check' } });
  assert.equal(
    (anywhere.structuredContent as { results: Array<{ symbol: string }> }).results[0]!.symbol,
    'Server.HandleHealthCheck',
  );
});

test('bad arguments are isError results naming the argument', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const { client, close } = await connect(tree, [tree.dir]);
  t.after(close);
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.equal(result.structuredContent, undefined);
    return text(result);
  };
  assert.match(
    await call('fault_index_source_code', { source_dir: '/definitely/not/here' }),
    /^source_dir: \/definitely\/not\/here does not exist/,
  );
  assert.match(
    await call('fault_index_source_code', { source_dir: join(tree.dir, '..') }),
    /^source_dir: .* is outside the allowed roots/,
  );
  assert.match(
    await call('fault_index_source_code', { source_dir: `${tree.dir}/app/config.py` }),
    /^source_dir: .* is not a directory/,
  );
  assert.match(
    await call('fault_index_source_code', { source_dir: tree.dir, lang: 'cobol' }),
    /^lang: 'cobol' is not supported; accepted: all, python/,
  );
  assert.match(
    await call('fault_search_code', { query: 'x', source_dir: tree.dir }),
    /has not been indexed .* index it first .*; to index: fault_index_source_code$/,
  );
  assert.match(await call('fault_search_code', { query: 'x', limit: 0 }), /limit/);
  assert.match(await call('fault_search_code', { query: ' ' }), /^query: empty/);
  assert.match(
    await call('fault_search_code', { query: 'parse '.repeat(200_000) }),
    /^query: \d+ characters is too long; at most 32000/,
  );
  assert.match(await call('fault_search_code', { query: 'x', limit: 1000 }), /limit/);
  // A relative path is taken from the root (one root here); this one is not there.
  assert.match(
    await call('fault_search_code', { query: 'x', source_dir: 'relative/dir' }),
    /^source_dir: .*\/tree\/relative\/dir does not exist/,
  );
  await client.callTool({ name: 'fault_index_source_code', arguments: { source_dir: tree.dir } });
  assert.match(
    await call('fault_search_code', { query: '!!!', source_dir: tree.dir }),
    /^query: "!!!" has no words or identifiers/,
  );
});

test('a directory inside an indexed tree, as source_dir or as the root, searches that part of its index', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  // 'lib2' shares the prefix 'lib' but not the path segment: it must stay out of a search of lib.
  tree.write(
    'lib2/health.go',
    'package lib2\n\n// HandleHealthCheck answers health checks.\nfunc HandleHealthCheck() bool {\n\treturn true\n}\n',
  );
  tree.write('app/health.py', 'def handle_health_check():\n    """Answer health checks."""\n    return True\n');
  const unrestricted = await connect(tree);
  t.after(unrestricted.close);
  const indexed = await unrestricted.client.callTool({
    name: 'fault_index_source_code',
    arguments: { source_dir: tree.dir },
  });
  assert.equal(indexed.isError, undefined, text(indexed));
  const paths = (result: unknown): string[] => {
    assert.equal((result as CallToolResult).isError, undefined, text(result));
    return ((result as CallToolResult).structuredContent as { results: Array<{ path: string }> }).results.map(
      (hit) => hit.path,
    );
  };
  const everywhere = paths(
    await unrestricted.client.callTool({ name: 'fault_search_code', arguments: { query: 'health check', limit: 50 } }),
  );
  assert.ok(
    everywhere.some((path) => path.startsWith(join(tree.dir, 'app') + '/')),
    everywhere.join('\n'),
  );

  const lib = join(tree.dir, 'lib');
  const underLib = paths(
    await unrestricted.client.callTool({
      name: 'fault_search_code',
      arguments: { query: 'health check', source_dir: lib, limit: 50 },
    }),
  );
  assert.ok(underLib.length > 0);
  assert.deepEqual(
    underLib.filter((path) => !path.startsWith(`${lib}/`)),
    [],
    'only chunks under lib/',
  );

  const rooted = await connect(tree, [lib]);
  t.after(rooted.close);
  const inRoot = paths(
    await rooted.client.callTool({ name: 'fault_search_code', arguments: { query: 'health check', limit: 50 } }),
  );
  assert.deepEqual(inRoot, underLib, 'the root limits the search as source_dir does');
});

test('a cancelled index request stops and leaves no index behind; search says the run was interrupted', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  for (let i = 0; i < 300; i++) tree.write(`bulk/m${i}.py`, `def bulk_${i}():\n    return ${i}\n`);
  const { client, close } = await connect(tree);
  t.after(close);
  // How long the whole index takes here, on a copy in another data directory.
  const timing = scratchTree();
  t.after(timing.cleanup);
  for (let i = 0; i < 300; i++) timing.write(`bulk/m${i}.py`, `def bulk_${i}():\n    return ${i}\n`);
  const timed = await connect(timing);
  t.after(timed.close);
  const started = performance.now();
  await timed.client.callTool({ name: 'fault_index_source_code', arguments: { source_dir: timing.dir } });
  const fullRun = performance.now() - started;

  const controller = new AbortController();
  const pending = client.callTool({ name: 'fault_index_source_code', arguments: { source_dir: tree.dir } }, undefined, {
    signal: controller.signal,
    onprogress: (notification) => {
      // Past the pool's window (files handed out ahead of the one stored: up to 16 a worker), so some were written.
      if (notification.progress >= 100) controller.abort();
    },
  });
  await assert.rejects(pending, /abort/i);
  // Had the server gone on, it would have committed the index within one full run's time.
  await sleep(Math.max(3 * fullRun, 200));
  const result = await client.callTool({
    name: 'fault_search_code',
    arguments: { query: 'bulk', source_dir: tree.dir },
  });
  assert.equal(result.isError, true);
  // Nothing was committed; what the run left is a database with no index, which search explains.
  assert.match(
    text(result),
    /an index run was interrupted before it finished .*nothing is indexed yet — index it again.*; to index: fault_index_source_code$/,
  );
});

test('other calls are answered while a large tree is being indexed', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  // A few thousand definitions (3,000): long enough to index that a server blocked by it would
  // answer nothing else meanwhile, where each of those calls takes milliseconds. The indexer hands
  // the event loop back between groups of files.
  const big = join(tree.dir, 'big');
  mkdirSync(big);
  for (let file = 0; file < 300; file++) {
    const functions = Array.from(
      { length: 10 },
      (_, i) =>
        `def handler_${file}_${i}(request, retries=3):\n    total = 0\n   ` +
        ` for attempt in range(retries):\n        total += attempt * ${i}\n ` +
        `   return total\n`,
    );
    writeFileSync(join(big, `module_${file}.py`), functions.join('\n\n'));
  }
  const small = join(tree.dir, 'small.py');
  writeFileSync(small, 'def ping():\n    return "pong"\n');
  const { client, close } = await connectInMemory(makeConfig({ dataDir: tree.dataDir }));
  t.after(close);

  let indexingDone = false;
  const indexing = client
    .callTool({ name: 'fault_index_source_code', arguments: { source_dir: big } }, undefined, { timeout: 120_000 })
    .finally(() => {
      indexingDone = true;
    });
  let answeredDuring = 0;
  while (!indexingDone && answeredDuring < 5) {
    const listed = await client.callTool({ name: 'fault_list_function_names', arguments: { file: small } });
    assert.equal(listed.isError, undefined, text(listed));
    assert.match(text(listed), /ping/);
    if (!indexingDone) answeredDuring++;
  }
  const indexed = await indexing;
  assert.equal(indexed.isError, undefined, text(indexed));
  assert.equal((indexed.structuredContent as { files: number }).files, 300);
  assert.ok(answeredDuring >= 3, `only ${answeredDuring} calls were answered while indexing`);
});

test(
  'a hit on a line the chunker cannot cut (a minified bundle) shows ' +
    'at most MAX_HIT_CODE_CHARS of it, and says where the rest is',
  async (t) => {
    const tree = scratchTree();
    t.after(tree.cleanup);
    // 600 KB on one line: one chunk the size of the line.
    const entries = Array.from({ length: 20_000 }, (_, i) => `"key${i}":"bundled value ${i}"`).join(',');
    tree.write('web/bundle.min.js', `window.BUNDLED_TABLE={${entries}};\n`);
    const { client, close } = await connect(tree);
    t.after(close);
    const indexed = await client.callTool({ name: 'fault_index_source_code', arguments: { source_dir: tree.dir } });
    assert.equal(indexed.isError, undefined, text(indexed));
    const found = await client.callTool({
      name: 'fault_search_code',
      arguments: { query: 'BUNDLED_TABLE bundled value', source_dir: tree.dir, limit: 3 },
    });
    assert.equal(found.isError, undefined, text(found));
    const { results } = found.structuredContent as {
      results: Array<{ path: string; start_line: number; end_line: number; code: string }>;
    };
    const hit = results.find((result) => result.path.endsWith('bundle.min.js'));
    assert.ok(hit, JSON.stringify(results.map((result) => result.path)));
    assert.equal(hit.start_line, 1);
    assert.ok(hit.code.length < MAX_HIT_CODE_CHARS + 200, `code is ${hit.code.length} characters`);
    assert.ok(hit.code.startsWith('window.BUNDLED_TABLE={"key0":'));
    assert.match(hit.code, /\n… \(\d+ more characters not shown; read line 1 of the file\)$/);
    assert.ok(text(found).length < 3 * (MAX_HIT_CODE_CHARS + 400), `the text is ${text(found).length} characters`);
  },
);
