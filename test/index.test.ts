/**
 * Indexing and search with the local store and the local hashed embedder, for real, on a scratch
 * copy of test/fixtures/index/tree: what is walked and skipped, search by identifier words,
 * incremental re-indexing, removal, cancellation and crash safety.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { closeReaders } from '../src/search/sqlite-store.js';
import { join } from 'node:path';
import { describeSkippedDirectories, indexSourceTree, searchIndex, IndexError } from '../src/search/index.js';
import { IgnoreFile, isIgnored } from '../src/search/gitignore.js';
import { CancelledError, InputError } from '../src/kernel/errors.js';
import { scratchTree } from './helpers/index-tree.js';
import { openStore } from '../src/search/open.js';
import { selectEmbedder } from '../src/search/embedder.js';
import { realpath } from 'node:fs/promises';

/** The paths in a tree's index, sorted. */
async function indexedPaths(settings: Parameters<typeof searchIndex>[0], dir: string): Promise<string[]> {
  const { store } = await openStore(settings, await realpath(dir), await selectEmbedder(settings.llm, settings.env));
  return [...(await store.fileHashes()).keys()].sort();
}

async function topSymbol(
  settings: Parameters<typeof searchIndex>[0],
  dir: string,
  query: string,
): Promise<string | undefined> {
  const hits = await searchIndex(settings, { query, sourceDir: dir, limit: 5 });
  return hits[0]?.symbol;
}

test('indexes the selected files, skipping ignored, dependency, binary and oversized ones', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.equal(stats.lang, 'all');
  assert.equal(stats.files, 5, 'config.py, keep.gen.py, server.go, rateLimiter.ts, build.kt');
  assert.equal(stats.changed, 5);
  assert.deepEqual(stats.skippedFiles, {
    tooLarge: ['app/huge.py'],
    binary: ['app/blob.py'],
    unreadable: [],
    directories: [
      { path: 'ignored/', reason: 'ignored by .gitignore', include: 'ignored' },
      { path: 'node_modules/', reason: 'dependency', include: 'node_modules' },
    ],
    unlistedDirectories: 0,
    symlinks: [],
  });
  assert.equal(stats.skipped, 4, 'two files, the ignored directory and the node_modules directory');
  assert.equal(stats.embedded, stats.chunks);
  assert.match(stats.store, /^local index .*hashed-v1-512\.sqlite$/);

  assert.deepEqual(await indexedPaths(tree.settings, tree.dir), [
    'app/config.py',
    'app/keep.gen.py',
    'lib/server.go',
    'web/build.kt',
    'web/rateLimiter.ts',
  ]);
  for (const expected of [
    'parse_config_file',
    'RetryPolicy',
    'RetryPolicy.next_delay',
    'Server.HandleHealthCheck',
    'TokenBucketRateLimiter.tryAcquireToken',
  ]) {
    assert.equal(
      await topSymbol(tree.settings, tree.dir, expected),
      expected,
      `${expected} is indexed and found by its name`,
    );
  }
});

test('search finds the function named by the query words first, with its lines and code', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  const cases: Array<[string, string]> = [
    ['parse config file', 'parse_config_file'],
    ['validate settings', 'validate_settings'],
    ['health check handler', 'Server.HandleHealthCheck'],
    ['acquire token', 'TokenBucketRateLimiter.tryAcquireToken'],
    ['retry next delay backoff', 'RetryPolicy.next_delay'],
    ['sleep milliseconds', 'sleepMilliseconds'],
    // Kotlin, cut in line windows before it had a grammar here, is cut by definition.
    ['invoice total', 'renderInvoiceTotal'],
  ];
  for (const [query, expected] of cases) assert.equal(await topSymbol(tree.settings, tree.dir, query), expected, query);

  const [hit] = await searchIndex(tree.settings, { query: 'parse config file', sourceDir: tree.dir, limit: 1 });
  assert.equal(hit!.path, join(tree.dir, 'app', 'config.py'));
  assert.equal(hit!.startLine, 8);
  assert.equal(hit!.endLine, 13);
  assert.ok(hit!.code.startsWith('def parse_config_file(path):'));
  assert.ok(hit!.score > 0 && hit!.score <= 1);
});

test('re-indexing embeds only new and changed files and removes the chunks of deleted ones', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const first = await indexSourceTree(tree.settings, { sourceDir: tree.dir });

  const again = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual([again.changed, again.unchanged, again.embedded, again.removed], [0, 5, 0, 0]);
  assert.equal(again.chunks, first.chunks);

  tree.write(
    'lib/server.go',
    readFileSync(join(tree.dir, 'lib/server.go'), 'utf8') + '\nfunc ShutdownGracefully() {}\n',
  );
  const edited = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual([edited.changed, edited.unchanged, edited.removed], [1, 4, 0]);
  assert.equal(edited.embedded, 5, 'the four chunks of server.go plus the new function');
  assert.equal(edited.chunks, first.chunks + 1);
  assert.equal(await topSymbol(tree.settings, tree.dir, 'shutdown gracefully'), 'ShutdownGracefully');

  // An empty file is one of the files, with nothing to index: counted as empty, every run.
  tree.write('lib/empty.py', '');
  for (let run = 0; run < 2; run++) {
    const withEmpty = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.deepEqual([withEmpty.files, withEmpty.changed, withEmpty.unchanged, withEmpty.empty], [6, 0, 5, 1]);
  }
  tree.remove('lib/empty.py');

  tree.remove('web/rateLimiter.ts');
  const deleted = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual([deleted.changed, deleted.removed, deleted.embedded], [0, 1, 0]);
  const hits = await searchIndex(tree.settings, {
    query: 'token bucket rate limiter acquire',
    sourceDir: tree.dir,
    limit: 50,
  });
  assert.ok(hits.every((hit) => hit.relativePath !== 'web/rateLimiter.ts'));
  assert.equal(deleted.chunks, edited.chunks - 5, 'rateLimiter.ts had five chunks');
});

test('a language filter indexes that language alone and keeps the others already indexed', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const all = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  tree.write(
    'app/config.py',
    readFileSync(join(tree.dir, 'app/config.py'), 'utf8') + '\ndef added_later():\n    pass\n',
  );
  tree.remove('lib/server.go');
  const python = await indexSourceTree(tree.settings, { sourceDir: tree.dir, lang: 'python' });
  assert.equal(python.lang, 'python');
  assert.deepEqual([python.files, python.changed, python.removed], [2, 1, 0], 'server.go is not python: left alone');
  assert.equal(python.chunks, all.chunks + 1);

  const typescript = await indexSourceTree(tree.settings, { sourceDir: tree.dir, lang: 'ts' });
  assert.equal(typescript.lang, 'typescript,tsx');
  await assert.rejects(indexSourceTree(tree.settings, { sourceDir: tree.dir, lang: 'cobol' }), (error: unknown) => {
    assert.ok(error instanceof InputError);
    assert.match(error.message, /^lang: 'cobol' is not supported; accepted: all, python, javascript, typescript/);
    return true;
  });
});

test('a C++ .h header is chunked as C++, a C one as C; lang cpp and lang c both take .h headers', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  tree.write('include/widget.h', readFileSync(new URL('../../test/fixtures/code/widget.h', import.meta.url), 'utf8'));
  tree.write(
    'include/ring_buffer.h',
    readFileSync(new URL('../../test/fixtures/code/ring_buffer.h', import.meta.url), 'utf8'),
  );
  const cpp = await indexSourceTree(tree.settings, { sourceDir: tree.dir, lang: 'cpp' });
  assert.equal(cpp.files, 2, 'both headers');
  const invalidate = (
    await searchIndex(tree.settings, { query: 'Widget invalidate', sourceDir: tree.dir, limit: 5 })
  ).find((hit) => hit.symbol.endsWith('invalidate'));
  assert.deepEqual(
    [invalidate?.symbol, invalidate?.language, invalidate?.relativePath],
    ['ui::Widget::invalidate', 'cpp', 'include/widget.h'],
  );
  const ring = (await searchIndex(tree.settings, { query: 'ring_used', sourceDir: tree.dir, limit: 5 })).find(
    (hit) => hit.symbol === 'ring_used',
  );
  assert.equal(ring?.language, 'c');
  const c = await indexSourceTree(tree.settings, { sourceDir: tree.dir, lang: 'c' });
  assert.deepEqual([c.files, c.changed, c.removed], [2, 0, 0]);
});

test('a cancelled index leaves the previous index searchable and unchanged', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  const before = await indexedPaths(tree.settings, tree.dir);
  for (let i = 0; i < 40; i++) tree.write(`extra/module${i}.py`, `def extra_function_${i}():\n    return ${i}\n`);
  tree.write('app/config.py', 'def replaced():\n    pass\n');
  const controller = new AbortController();
  await assert.rejects(
    indexSourceTree(tree.settings, {
      sourceDir: tree.dir,
      signal: controller.signal,
      onProgress: (progress) => {
        if (progress.filesDone === 20) controller.abort();
      },
    }),
    CancelledError,
  );
  assert.equal(await topSymbol(tree.settings, tree.dir, 'parse config file'), 'parse_config_file');
  const hits = await searchIndex(tree.settings, { query: 'extra function', sourceDir: tree.dir, limit: 50 });
  assert.equal(hits.filter((hit) => hit.symbol.startsWith('extra_function')).length, 0);
  assert.deepEqual(await indexedPaths(tree.settings, tree.dir), before);
});

test('a damaged index is reported naming its file, and the next index rebuilds it', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const first = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  const storeFile = first.store.replace(/^local index /, '');
  closeReaders();
  // Not something our writes produce (SQLite's transactions see to that), but disks fail.
  writeFileSync(storeFile, Buffer.alloc(8192, 0x5a));
  await assert.rejects(searchIndex(tree.settings, { query: 'config', sourceDir: tree.dir }), (error: unknown) => {
    assert.ok(error instanceof IndexError);
    assert.equal(
      error.message.startsWith(`the index of ${tree.dir} at ${storeFile} is damaged (`),
      true,
      error.message,
    );
    // The domain names no door: the CLI and the tool add how to index (withIndexHint).
    assert.match(error.message, /; rebuild it by indexing again$/);
    assert.equal(error.reindex, tree.dir);
    return true;
  });
  closeReaders();
  const rebuilt = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.equal(rebuilt.changed, first.changed);
  assert.equal(await topSymbol(tree.settings, tree.dir, 'parse config file'), 'parse_config_file');
});

test(
  'an index in the format before SQLite is reported by search and ' + 'rebuilt once by indexing, with a note',
  async (t) => {
    const tree = scratchTree();
    t.after(tree.cleanup);
    const first = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    const storeFile = first.store.replace(/^local index /, '');
    closeReaders();
    rmSync(storeFile);
    const legacy = storeFile.replace(/\.sqlite$/, '.index');
    writeFileSync(legacy, 'FLIDX001');
    await assert.rejects(
      searchIndex(tree.settings, { query: 'config', sourceDir: tree.dir }),
      /indexed by an older faultline .* index it again/,
    );
    const rebuilt = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.match(rebuilt.note ?? '', /older faultline .* rebuilt once/);
    assert.equal(existsSync(legacy), false);
    const again = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.equal(again.note, undefined);
    assert.equal(await topSymbol(tree.settings, tree.dir, 'parse config file'), 'parse_config_file');
  },
);

test('search without source_dir covers every accepted indexed tree; errors are clear', async (t) => {
  const one = scratchTree();
  t.after(one.cleanup);
  await assert.rejects(
    searchIndex(one.settings, { query: 'config' }),
    /no source tree has been indexed with local hashed/,
  );
  await assert.rejects(
    searchIndex(one.settings, { query: 'config', sourceDir: one.dir }),
    /has not been indexed .* index it first/,
  );
  await indexSourceTree(one.settings, { sourceDir: one.dir });
  const hits = await searchIndex(one.settings, { query: 'parse config file', limit: 3 });
  assert.equal(hits[0]!.symbol, 'parse_config_file');
  await assert.rejects(
    searchIndex(one.settings, { query: 'config', acceptTree: async () => false }),
    /no source tree has been indexed/,
  );
  await assert.rejects(searchIndex(one.settings, { query: '  ' }), /^InputError: query: empty/);
  await assert.rejects(
    searchIndex(one.settings, { query: 'x'.repeat(1 << 20) }),
    /^InputError: query: 1048576 characters is too long; at most 32000/,
  );
  for (const query of ['!!!', 'the of a']) {
    await assert.rejects(
      searchIndex(one.settings, { query, sourceDir: one.dir }),
      /^InputError: query: ".*" has no words or identifiers to look for/,
    );
  }
  for (const limit of [0, 51, 2.5]) {
    await assert.rejects(
      searchIndex(one.settings, { query: 'x', sourceDir: one.dir, limit }),
      /limit: .* from 1 to 50/,
    );
  }
});

test('.gitignore rules: anchoring, directories, globs, negation, nested files', () => {
  const root = new IgnoreFile(
    '',
    ['# comment', '/build', 'logs/', '*.gen.*', '!keep.gen.ts', 'docs/**/draft?.md', 'a/**', '\\#hash'].join('\n'),
  );
  const nested = new IgnoreFile('pkg', 'local.py\n!/logs/\n');
  const ignored = (path: string, dir = false) => isIgnored([root, nested], path, dir);
  assert.equal(ignored('build', true), true);
  assert.equal(ignored('src/build', true), false, 'a leading slash anchors');
  assert.equal(ignored('src/logs', true), true, 'no slash: any depth');
  assert.equal(ignored('src/logs', false), false, 'a trailing slash: directories only');
  assert.equal(ignored('x/y.gen.py'), true);
  assert.equal(ignored('x/keep.gen.ts'), false, 'negation re-includes');
  assert.equal(ignored('docs/a/b/draft1.md'), true);
  assert.equal(ignored('docs/draft1.md'), true, '**/ matches zero directories');
  assert.equal(ignored('docs/a/draft10.md'), false, '? is one character');
  assert.equal(ignored('a/deep/file.py'), true);
  assert.equal(ignored('#hash'), true);
  assert.equal(ignored('pkg/local.py'), true, 'a nested .gitignore applies below it');
  assert.equal(ignored('local.py'), false, 'and not above it');
  assert.equal(ignored('pkg/logs', true), false, 'a deeper rule wins');
});

test('.gitignore details as git reads them: ** inside a name, classes, bad patterns, whitespace, CRLF', () => {
  // Each expectation was checked with `git ls-files --others --exclude-standard`.
  const file = new IgnoreFile(
    '',
    ['gen**', '[[:upper:]]*.py', '[c-a].js', '[abc', 'tab.js\t', 'spaces.js  ', 'crlf.js\r', '[!]]x.ts'].join('\n'),
  );
  const ignored = (path: string, dir = false) => isIgnored([file], path, dir);
  assert.equal(ignored('generated', true), true);
  assert.equal(ignored('gen/a.ts'), false, '** that is not a whole segment does not cross a slash');
  assert.equal(ignored('Config.py'), true, 'a POSIX class');
  assert.equal(ignored('config.py'), false);
  assert.equal(ignored('c.js'), false, 'a reversed range matches nothing');
  assert.equal(ignored('[abc'), false, 'an unclosed [ matches nothing');
  assert.equal(ignored('tab.js'), false, 'a trailing tab is part of the pattern');
  assert.equal(ignored('spaces.js'), true, 'trailing spaces are not');
  assert.equal(ignored('crlf.js'), true, 'a CRLF line ending is not part of the pattern');
  assert.equal(ignored('ax.ts'), true, 'a leading ] in a negated class is a member');
  assert.equal(ignored(']x.ts'), false);
});

test('a .gitignore line git cannot match does not disable the rest of that file', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  tree.write('.gitignore', `${readFileSync(join(tree.dir, '.gitignore'), 'utf8')}[z-a].py\nlib/\n`);
  const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.equal(stats.files, 4, 'lib/server.go is ignored by the line after the reversed range');
  const paths = await indexedPaths(tree.settings, tree.dir);
  assert.ok(paths.length > 0 && paths.every((path) => !path.startsWith('lib/') && !path.startsWith('ignored/')));
});

test("two index calls of one tree at once in one process keep each other's files", async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  for (let i = 0; i < 100; i++) tree.write(`py/m${i}.py`, `def python_function_${i}():\n    return ${i}\n`);
  await Promise.all([
    indexSourceTree(tree.settings, { sourceDir: tree.dir, lang: 'python' }),
    indexSourceTree(tree.settings, { sourceDir: tree.dir, lang: 'go' }),
  ]);
  const all = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual([all.changed, all.unchanged], [2, 103], 'only rateLimiter.ts and build.kt were not indexed yet');
});

test('unreadable files and directories are listed as skipped, not indexed, and do not stop the run', {
  skip: process.getuid?.() === 0 && 'root reads every file',
}, async (t) => {
  const tree = scratchTree();
  t.after(() => {
    chmodSync(join(tree.dir, 'locked'), 0o755);
    tree.cleanup();
  });
  tree.write('locked/hidden.py', 'def hidden():\n    pass\n');
  tree.write('app/secret.py', 'def secret():\n    pass\n');
  chmodSync(join(tree.dir, 'locked'), 0o000);
  chmodSync(join(tree.dir, 'app/secret.py'), 0o000);
  const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual(stats.skippedFiles.unreadable, ['locked/', 'app/secret.py']);
  assert.equal(stats.files, 5);
});

test(
  'symbolic links are not followed, and the ones to a directory or ' + 'a source file are listed as skipped',
  async (t) => {
    const tree = scratchTree();
    t.after(tree.cleanup);
    const outside = mkdtempSync(join(tmpdir(), 'faultline-outside-'));
    t.after(() => rmSync(outside, { recursive: true, force: true }));
    writeFileSync(join(outside, 'elsewhere.py'), 'def outside_the_tree():\n    return 1\n');
    symlinkSync(join(tree.dir, 'app', 'config.py'), join(tree.dir, 'app', 'config_link.py'));
    symlinkSync(join(outside, 'elsewhere.py'), join(tree.dir, 'escape.py'));
    symlinkSync(outside, join(tree.dir, 'shared'));
    symlinkSync(tree.dir, join(tree.dir, 'app', 'loop'));
    symlinkSync(join(tree.dir, 'gone.py'), join(tree.dir, 'broken.py'));
    symlinkSync(join(tree.dir, 'README.md'), join(tree.dir, 'notes.txt'));
    symlinkSync(outside, join(tree.dir, 'ignored', 'inside_ignored'));
    const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    // Not the link named like no source file (notes.txt), nor the one under an ignored directory.
    assert.deepEqual(stats.skippedFiles.symlinks, [
      'app/config_link.py',
      'app/loop/',
      'broken.py',
      'escape.py',
      'shared/',
    ]);
    assert.equal(stats.skipped, 4 + 5);
    assert.equal(stats.files, 5, 'nothing behind a link was indexed');
    assert.deepEqual(await indexedPaths(tree.settings, tree.dir), [
      'app/config.py',
      'app/keep.gen.py',
      'lib/server.go',
      'web/build.kt',
      'web/rateLimiter.ts',
    ]);
  },
);

test(
  'in a git checkout: the .gitignore files above the tree apply, ' + 'and .gitignore decides about build output',
  async (t) => {
    const tree = scratchTree();
    t.after(tree.cleanup);
    const checkout = join(tree.dir, '..');
    mkdirSync(join(checkout, '.git', 'info'), { recursive: true });
    writeFileSync(join(checkout, '.git', 'info', 'exclude'), 'rateLimiter.ts\n');
    writeFileSync(join(checkout, '.gitignore'), '/tree/lib\ndist/\n');
    tree.write('build/tool.py', 'def build_tool():\n    pass\n');
    tree.write('dist/bundle.py', 'def bundled():\n    pass\n');

    const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.deepEqual(await indexedPaths(tree.settings, tree.dir), [
      'app/config.py',
      'app/keep.gen.py',
      'build/tool.py',
      'web/build.kt',
    ]);
    assert.equal(stats.files, 4);
  },
);

test(
  'an index that finds no file says why: what git ignores there, or ' +
    'that the tree has none of the selected languages',
  async (t) => {
    const tree = scratchTree();
    t.after(tree.cleanup);
    const checkout = join(tree.dir, '..');
    mkdirSync(join(checkout, '.git'), { recursive: true });
    // Every file of the tree excluded by a .gitignore above it, and one directory by the tree's own.
    writeFileSync(join(checkout, '.gitignore'), '*.py\n*.go\n*.ts\n*.kt\n*.java\n*.rs\n*.js\n');
    tree.write('.gitignore', 'vendored/\n');
    tree.write('vendored/lib.c', 'int lib(void) { return 1; }\n');
    const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.equal(stats.files, 0);
    assert.match(
      stats.note ?? '',
      /^no source file to index in .*: git's ignore rules .* exclude \d+ files and 1 directory there; `git check-ignore -v PATH`/,
    );

    // The ignored directory could hold Ruby: it is still named.
    const ruby = await indexSourceTree(tree.settings, { sourceDir: tree.dir, lang: 'ruby' });
    assert.match(
      ruby.note ?? '',
      /^no source file in the selected languages \(ruby\) to index in .*: git's ignore rules .* exclude 1 directory there;/,
    );
    const empty = join(tree.dataDir, '..', 'empty');
    mkdirSync(join(empty, '.hidden'), { recursive: true });
    writeFileSync(join(empty, '.hidden', 'a.py'), 'def hidden():\n    pass\n');
    const none = await indexSourceTree(tree.settings, { sourceDir: empty });
    assert.match(
      none.note ?? '',
      /^no source file to index in .*empty \(hidden directories, dependency directories and symlinks are not entered\)$/,
    );

    rmSync(join(checkout, '.gitignore'));
    const found = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.ok(found.files > 0);
    assert.equal(found.note, undefined, 'no note when files were found');
  },
);

test('indexing stops early over the file or byte limit, naming the limit and how to raise it', async (t) => {
  const tree = scratchTree();
  t.after(tree.cleanup);
  const few = { ...tree.settings, env: { FAULTLINE_INDEX_MAX_FILES: '3' } };
  await assert.rejects(indexSourceTree(few, { sourceDir: tree.dir }), (error: unknown) => {
    assert.ok(error instanceof InputError);
    assert.match(
      error.message,
      /^source_dir: .* has more than 3 source files, the limit of one index; .* raise the limit with FAULTLINE_INDEX_MAX_FILES$/,
    );
    return true;
  });
  const small = { ...tree.settings, env: { FAULTLINE_INDEX_MAX_BYTES: '100' } };
  await assert.rejects(
    indexSourceTree(small, { sourceDir: tree.dir }),
    /^InputError: source_dir: .* more than 100 bytes .* FAULTLINE_INDEX_MAX_BYTES$/,
  );
  const wrong = { ...tree.settings, env: { FAULTLINE_INDEX_MAX_FILES: 'many' } };
  await assert.rejects(
    indexSourceTree(wrong, { sourceDir: tree.dir }),
    /FAULTLINE_INDEX_MAX_FILES must be a positive whole number \(got "many"\)/,
  );
  // Nothing was indexed by the refused runs; within the limits (the binary file counts until read), the tree indexes.
  await assert.rejects(searchIndex(tree.settings, { query: 'config', sourceDir: tree.dir }), /has not been indexed/);
  const enough = await indexSourceTree(
    { ...tree.settings, env: { FAULTLINE_INDEX_MAX_FILES: '6' } },
    { sourceDir: tree.dir },
  );
  assert.equal(enough.files, 5);
});

test(
  'every skipped directory is listed with its reason and what ' +
    "includes it; the standard library's venv package is source",
  async (t) => {
    const tree = scratchTree();
    t.after(tree.cleanup);
    tree.write('Lib/venv/__init__.py', 'def create(env_dir):\n    return env_dir\n');
    tree.write('Lib/site-packages/pkg/mod.py', 'def vendored():\n    return 1\n');
    tree.write('env/pyvenv.cfg', 'home = /usr/bin\n');
    tree.write('env/lib/mod.py', 'def in_a_virtual_environment():\n    return 1\n');
    tree.write('packages/web/dist/bundle.js', 'function builtBundle() { return 1; }\n');
    tree.write('.github/scripts/release.py', 'def release_script():\n    return 1\n');
    const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.deepEqual(stats.skippedFiles.directories, [
      { path: '.github/', reason: 'hidden', include: '.github' },
      { path: 'Lib/site-packages/', reason: 'dependency', include: 'site-packages' },
      { path: 'env/', reason: 'dependency', include: 'env' },
      { path: 'ignored/', reason: 'ignored by .gitignore', include: 'ignored' },
      { path: 'node_modules/', reason: 'dependency', include: 'node_modules' },
      { path: 'packages/web/dist/', reason: 'build output', include: 'dist' },
    ]);
    assert.equal(stats.skipped, 2 + 6);
    assert.ok((await indexedPaths(tree.settings, tree.dir)).includes('Lib/venv/__init__.py'));
    assert.equal(
      describeSkippedDirectories(stats, (name) => `--include-dir ${name}`),
      '.github/ (hidden; --include-dir .github), Lib/site-packages/ ' +
        '(dependency; --include-dir site-packages), env/ (dependency; ' +
        '--include-dir env), ignored/ (ignored by .gitignore; ' +
        '--include-dir ignored), node_modules/ (dependency; --include-dir ' +
        'node_modules), packages/web/dist/ (build output; --include-dir dist)',
    );

    // Included by name or by path, each is indexed; a file inside still follows the .gitignore rules that name it.
    const included = await indexSourceTree(tree.settings, {
      sourceDir: tree.dir,
      includeDirs: ['dist', '.github', 'ignored', 'Lib/site-packages/'],
    });
    assert.deepEqual(
      included.skippedFiles.directories.map((directory) => directory.path),
      ['env/', 'node_modules/'],
    );
    const paths = await indexedPaths(tree.settings, tree.dir);
    for (const path of [
      'packages/web/dist/bundle.js',
      '.github/scripts/release.py',
      'ignored/secret.py',
      'Lib/site-packages/pkg/mod.py',
    ]) {
      assert.ok(paths.includes(path), `${path} is indexed: ${paths.join(', ')}`);
    }
  },
);
