/**
 * The definition store on disk: what a process listed, a later one reads back exactly, and only
 * for the same source, grammar, query and extraction code. A changed source or fingerprint misses;
 * a damaged, foreign or crafted entry misses (and is replaced); the store stays within its bounds;
 * concurrent writers in separate processes never make a reader see a wrong or half-written entry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DefinitionStore, type StoredDefinitions } from '../src/code/definition-store.js';
import { grammarFingerprint, grammarsDirectory } from '../src/code/grammar-files.js';
import { languageByName, listDefinitions, requireLanguageForPath, type LanguageInfo } from '../src/code/index.js';
import { fixture } from './helpers/code-fixtures.js';
import { runCliProcess } from './helpers/processes.js';
import { runCliBatch } from './helpers/cli-batch.js';
import { fixturePath, repoRoot } from './helpers/repo.js';

const python = languageByName('python')!;
const SOURCE = 'class A:\n    def m(self):\n        return 1\n\n\ndef f():\n    pass\n';

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A store with a fixed fingerprint, so a test decides when the "grammar" changes. */
function storeIn(
  directory: string,
  fingerprint = 'grammar-1',
  bounds: { maxEntries?: number; maxBytes?: number } = {},
): DefinitionStore {
  return new DefinitionStore({ directory, fingerprint: () => fingerprint, ...bounds });
}

/** Every entry file of a store directory, with its size. */
function entryFiles(directory: string): { path: string; size: number }[] {
  const found: { path: string; size: number }[] = [];
  for (const shard of readdirSync(directory)) {
    for (const name of readdirSync(join(directory, shard)))
      found.push({ path: join(directory, shard, name), size: statSync(join(directory, shard, name)).size });
  }
  return found;
}

async function parsed(source: string, language: LanguageInfo = python): Promise<StoredDefinitions> {
  const { definitions, syntaxErrors } = await listDefinitions(source, language);
  return { definitions, syntaxErrors };
}

test('an entry is read back exactly, for the same source only', async (t) => {
  const store = storeIn(scratch(t));
  const list = await parsed(SOURCE);
  assert.equal(await store.get(python, SOURCE), undefined);
  await store.put(python, SOURCE, list);
  assert.deepEqual(await store.get(python, SOURCE), list);
  // One character more, a different language or a lone surrogate in place of another: other keys.
  assert.equal(await store.get(python, `${SOURCE} `), undefined);
  assert.equal(await store.get(languageByName('ruby')!, SOURCE), undefined);
  const surrogates = 'x = "\uD800"\n';
  await store.put(python, surrogates, await parsed(surrogates));
  assert.equal(await store.get(python, 'x = "\uDBFF"\n'), undefined);
});

test('every fixture reads back from disk exactly as it was listed, in every language', async (t) => {
  const directory = scratch(t);
  const writer = storeIn(directory);
  const names = readdirSync(fixturePath('code')).filter((name) => !/\.(txt|md)$/.test(name));
  const lists = new Map<string, StoredDefinitions>();
  for (const name of names) {
    const language = requireLanguageForPath(name, fixture(name));
    const list = await parsed(fixture(name), language);
    lists.set(name, list);
    await writer.put(language, fixture(name), list);
  }
  // Another instance, as another process would have: nothing shared but the directory.
  const reader = storeIn(directory);
  for (const name of names)
    assert.deepEqual(
      await reader.get(requireLanguageForPath(name, fixture(name)), fixture(name)),
      lists.get(name),
      name,
    );
  assert.ok(names.length >= 25, `fixtures found: ${names.length}`);
});

test('a new grammar, query or extraction code fingerprint misses; the old one still hits', async (t) => {
  const directory = scratch(t);
  const list = await parsed(SOURCE);
  await storeIn(directory, 'grammar-1').put(python, SOURCE, list);
  assert.equal(await storeIn(directory, 'grammar-2').get(python, SOURCE), undefined);
  assert.deepEqual(await storeIn(directory, 'grammar-1').get(python, SOURCE), list);
});

test('the fingerprint changes with the query text, the manifest and the extraction code', (t) => {
  const grammars = scratch(t);
  cpSync(join(grammarsDirectory, 'manifest.json'), join(grammars, 'manifest.json'));
  cpSync(join(grammarsDirectory, 'python'), join(grammars, 'python'), { recursive: true });
  const base = grammarFingerprint(python, 'code-1', grammars);
  assert.equal(grammarFingerprint(python, 'code-1', grammars), base);
  assert.notEqual(grammarFingerprint(python, 'code-2', grammars), base);

  const query = join(grammars, 'python', 'definitions.scm');
  writeFileSync(query, `${readFileSync(query, 'utf8')}\n; one more comment\n`);
  const editedQuery = grammarFingerprint(python, 'code-1', grammars);
  assert.notEqual(editedQuery, base);

  const manifestPath = join(grammars, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { grammars: { dir: string; version: string }[] };
  manifest.grammars.find((grammar) => grammar.dir === 'python')!.version = '99.0.0';
  writeFileSync(manifestPath, JSON.stringify(manifest));
  assert.notEqual(grammarFingerprint(python, 'code-1', grammars), editedQuery);
});

test('a damaged, foreign or crafted entry is a miss', async (t) => {
  const directory = scratch(t);
  const store = storeIn(directory);
  const list = await parsed(SOURCE);
  await store.put(python, SOURCE, list);
  const [entry] = entryFiles(directory);
  const good = readFileSync(entry!.path);
  const newline = good.indexOf(0x0a);
  const header = JSON.parse(good.subarray(0, newline).toString('utf8')) as Record<string, unknown>;
  const body = good.subarray(newline + 1).toString('utf8');
  /** An entry with a header whose checksum matches the given body: only the shape checks can refuse it. */
  const resealed = (newBody: string): Buffer => {
    const bytes = Buffer.from(newBody, 'utf8');
    const sealed = { ...header, bodyBytes: bytes.length, bodySha256: createHash('sha256').update(bytes).digest('hex') };
    return Buffer.concat([Buffer.from(`${JSON.stringify(sealed)}\n`), bytes]);
  };
  const damaged: [string, Buffer | string][] = [
    ['empty', ''],
    ['truncated', good.subarray(0, good.length - 7)],
    ['a byte changed in the body', Buffer.from(good.toString('utf8').replace('"m"', '"n"'))],
    ['not an entry at all', 'garbage\n{"definitions":[]}'],
    [
      'another format',
      Buffer.from(good.toString('utf8').replace('faultline-definitions/1', 'faultline-definitions/0')),
    ],
    ['another key', Buffer.from(good.toString('utf8').replace(String(header.key), 'f'.repeat(64)))],
    ['offsets beyond the source', resealed(body.replace(/,(\d+)\]/, `,${SOURCE.length + 5}]`))],
    ['a kind that does not exist', resealed(body.replace('"method"', '"macro"'))],
    ['a line beyond the source', resealed(body.replace(/\["A","A","class",1,/, '["A","A","class",99,'))],
  ];
  for (const [what, bytes] of damaged) {
    writeFileSync(entry!.path, bytes);
    assert.equal(await store.get(python, SOURCE), undefined, what);
  }
  // The checks are not what refuses them: the same entry resealed unchanged is read.
  writeFileSync(entry!.path, resealed(body));
  assert.deepEqual(await store.get(python, SOURCE), list);
});

test('a listing answers from the store without parsing: a planted entry comes back as it is', async (t) => {
  const directory = scratch(t);
  const store = storeIn(directory);
  const source = `${SOURCE}# planted\n`;
  // Listed from another source (this one must be new to the in-memory cache); its offsets fit this one.
  const real = await parsed(SOURCE);
  const planted: StoredDefinitions = {
    ...real,
    definitions: real.definitions.map((definition) => ({ ...definition, name: `${definition.name}_planted` })),
  };
  await store.put(python, source, planted);
  const listed = await listDefinitions(source, python, { store });
  assert.deepEqual(
    listed.definitions.map((definition) => definition.name),
    ['A_planted', 'm_planted', 'f_planted'],
  );
});

test('the store keeps within its entry and byte bounds, least recently used out first', async (t) => {
  const directory = scratch(t);
  const store = storeIn(directory, 'grammar-1', { maxEntries: 32 });
  const sources = Array.from({ length: 120 }, (_, i) => `def f${i}():\n    return ${i}\n`);
  for (const source of sources) await store.put(python, source, await parsed(source));
  const entries = entryFiles(directory);
  assert.ok(entries.length <= 32, `${entries.length} entries`);
  assert.ok(entries.length >= 8, `${entries.length} entries: eviction should keep what fits`);
});

test('eviction takes the least recently used entry of a shard, and a read counts as a use', async (t) => {
  // Two entries per shard (32 / 16); three sources that land in one shard, found by trying.
  const directory = scratch(t);
  const store = storeIn(directory, 'grammar-1', { maxEntries: 32 });
  const empty: StoredDefinitions = { definitions: [], syntaxErrors: { count: 0, firstLines: [] } };
  const shardOf = async (source: string): Promise<string> => {
    const probe = scratch(t);
    await storeIn(probe).put(python, source, empty);
    return readdirSync(probe)[0]!;
  };
  const target = await shardOf('a = 0\n');
  const sameShard: string[] = [];
  for (let i = 0; sameShard.length < 3; i++) if ((await shardOf(`a = ${i}\n`)) === target) sameShard.push(`a = ${i}\n`);
  const [oldest, read, newest] = sameShard as [string, string, string];
  await store.put(python, oldest, empty);
  await store.put(python, read, empty);
  // Both aged by hand, so the order does not depend on the clock's resolution; then one is read.
  const past = new Date(Date.now() - 60_000);
  for (const file of entryFiles(directory)) utimesSync(file.path, past, past);
  assert.deepEqual(await store.get(python, read), empty);
  await store.put(python, newest, empty);
  assert.equal(await store.get(python, oldest), undefined);
  assert.deepEqual(await store.get(python, read), empty);
  assert.deepEqual(await store.get(python, newest), empty);
});

test('an entry larger than its share of the byte bound is not kept; the byte bound holds', async (t) => {
  const directory = scratch(t);
  const maxBytes = 16 * 4096;
  const store = storeIn(directory, 'grammar-1', { maxBytes });
  const big = Array.from({ length: 400 }, (_, i) => `def long_function_name_number_${i}():\n    pass\n`).join('');
  await store.put(python, big, await parsed(big));
  assert.equal(entryFiles(directory).length, 0);
  for (let i = 0; i < 200; i++) {
    const source = `def f${i}():\n    return ${i}\n\ndef g${i}():\n    return ${i}\n`;
    await store.put(python, source, await parsed(source));
  }
  const total = entryFiles(directory).reduce((sum, file) => sum + file.size, 0);
  assert.ok(total <= maxBytes, `${total} bytes`);
  assert.ok(entryFiles(directory).length > 0);
});

test('bounds below one entry per shard are refused', () => {
  assert.throws(() => new DefinitionStore({ directory: tmpdir(), maxEntries: 8 }), /maxEntries/);
  assert.throws(() => new DefinitionStore({ directory: tmpdir(), maxBytes: 1 }), /maxBytes/);
});

test('writers in several processes at once: every read is a whole, right entry or a miss; bounds hold', async (t) => {
  const directory = scratch(t);
  const storeModule = pathToFileURL(join(repoRoot, 'dist', 'src', 'code', 'definition-store.js')).href;
  const languagesModule = pathToFileURL(join(repoRoot, 'dist', 'src', 'code', 'languages.js')).href;
  // Each process writes and reads 40 sources, 30 of them shared with every other process (same
  // key, written concurrently), in a store small enough that eviction runs all the time. The
  // definitions of a source name it, so a reader can tell a right entry from a wrong one.
  const script = `
    const { DefinitionStore } = await import(${JSON.stringify(storeModule)});
    const { languageByName } = await import(${JSON.stringify(languagesModule)});
    const python = languageByName('python');
    const store = new DefinitionStore({ directory: process.argv[1], fingerprint: () => 'grammar-1', maxEntries: 16 * 4 });
    const me = Number(process.argv[2]);
    const listOf = (source) => ({
      definitions: [{ name: source.slice(4, source.indexOf('(')), qualifiedName: source.slice(4, source.indexOf('(')), kind: 'function', startLine: 1, endLine: 2, startOffset: 0, endOffset: source.length - 1, body: { startLine: 2, endLine: 2, startOffset: source.indexOf('\\n') + 1, endOffset: source.length - 1 } }],
      syntaxErrors: { count: 0, firstLines: [] },
    });
    let hits = 0, wrong = 0;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 40; i++) {
        const source = i < 30 ? 'def shared_' + i + '():\\n    pass\\n' : 'def own_' + me + '_' + i + '():\\n    pass\\n';
        const before = await store.get(python, source);
        if (before) {
          hits++;
          if (JSON.stringify(before) !== JSON.stringify(listOf(source))) wrong++;
        }
        await store.put(python, source, listOf(source));
      }
    }
    process.stdout.write(JSON.stringify({ hits, wrong }));`;
  const runs = await Promise.all(
    Array.from({ length: 6 }, (_, me) => {
      return new Promise<{ hits: number; wrong: number }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, directory, String(me)], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          if (code === 0) resolve(JSON.parse(out) as { hits: number; wrong: number });
          else reject(new Error(`writer ${me} exited ${code}: ${err}`));
        });
      });
    }),
  );
  assert.equal(
    runs.reduce((sum, run) => sum + run.wrong, 0),
    0,
  );
  assert.ok(runs.reduce((sum, run) => sum + run.hits, 0) > 0, 'the processes should have read each other’s entries');
  const files = entryFiles(directory);
  assert.ok(files.length <= 64, `${files.length} files`);
  // Nothing half-written or left over: every file is a whole entry.
  for (const file of files) {
    assert.match(file.path, /[0-9a-f]{64}\.json$/);
    const header = JSON.parse(readFileSync(file.path, 'utf8').split('\n')[0]!) as { format: string };
    assert.equal(header.format, 'faultline-definitions/1');
  }
  assert.ok(files.length > 0);
});

test('faultline code list prints the same with the store, from it, without it, and over damaged entries', async (t) => {
  const dataDir = scratch(t);
  const names = ['sample.py', 'sample.go', 'sample.mts', 'edge.cpp', 'broken.py'];
  // Each round is one process listing every file once (helpers/cli-batch.ts): what one process
  // reads of a file it has not listed before comes from the store on disk or from a parse, as in a
  // process of its own, and the rounds are separate processes, so a later round reads what an
  // earlier one wrote. What a process without the store prints: it reads no store, so one round
  // serves both comparisons.
  const round = (env: Record<string, string>) =>
    runCliBatch(names.map((name) => ({ args: ['code', 'list', fixturePath('code', name)], env })));
  const withoutRound = await round({ FAULTLINE_CODE_CACHE: 'off', FAULTLINE_DATA_DIR: dataDir });
  const firstRound = await round({ FAULTLINE_DATA_DIR: dataDir });
  const secondRound = await round({ FAULTLINE_DATA_DIR: dataDir });
  const withoutStore = new Map<string, string>();
  for (const [i, name] of names.entries()) {
    const without = withoutRound[i]!;
    assert.equal(without.code, 0, without.stderr);
    assert.equal(firstRound[i]!.stdout, without.stdout, name);
    assert.equal(secondRound[i]!.stdout, without.stdout, name);
    withoutStore.set(name, without.stdout);
  }
  const store = join(dataDir, 'cache', 'definitions');
  assert.equal(entryFiles(store).length, names.length);

  // Damaged entries: the next process parses around them, prints the same, and writes good ones.
  for (const file of entryFiles(store)) writeFileSync(file.path, readFileSync(file.path).subarray(0, 40));
  const reader = new DefinitionStore({ directory: store });
  const againRound = await round({ FAULTLINE_DATA_DIR: dataDir });
  for (const [i, name] of names.entries()) {
    const again = againRound[i]!;
    assert.equal(again.stdout, withoutStore.get(name), name);
    assert.notEqual(
      await reader.get(requireLanguageForPath(name, fixture(name)), fixture(name)),
      undefined,
      `${name}: a good entry again`,
    );
  }
});

test('faultline code list answers from the store a later process finds (a planted entry shows it)', async (t) => {
  const dataDir = scratch(t);
  const name = 'sample.rb';
  const source = fixture(name);
  const language = requireLanguageForPath(name, source);
  const real = await parsed(source, language);
  // The CLI's own store: the default fingerprint, computed from this build as the CLI computes it.
  const store = new DefinitionStore({ directory: join(dataDir, 'cache', 'definitions') });
  await store.put(language, source, {
    ...real,
    definitions: real.definitions.map((definition) => ({ ...definition, name: `planted_${definition.name}` })),
  });
  const run = await runCliProcess(['code', 'list', fixturePath('code', name)], { FAULTLINE_DATA_DIR: dataDir });
  assert.equal(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { names: string[] };
  assert.ok(report.names.length > 0 && report.names.every((listed) => listed.startsWith('planted_')), run.stdout);
  const off = await runCliProcess(['code', 'list', fixturePath('code', name)], {
    FAULTLINE_DATA_DIR: dataDir,
    FAULTLINE_CODE_CACHE: 'off',
  });
  assert.ok((JSON.parse(off.stdout) as { names: string[] }).names.every((listed) => !listed.startsWith('planted_')));
});

test('a file edited in place (same path, length and mtime) is listed anew by the next process', async (t) => {
  const dir = scratch(t);
  const dataDir = join(dir, 'data');
  const file = join(dir, 'edited.py');
  writeFileSync(file, 'def alpha():\n    pass\n');
  const mtime = statSync(file).mtime;
  const before = await runCliProcess(['code', 'list', file], { FAULTLINE_DATA_DIR: dataDir });
  assert.equal(before.code, 0, before.stderr);
  assert.deepEqual((JSON.parse(before.stdout) as { names: string[] }).names, ['alpha']);
  // Only the content tells the versions apart: the entry is keyed by it, not by path, size or time.
  writeFileSync(file, 'def gamma():\n    pass\n');
  utimesSync(file, mtime, mtime);
  const after = await runCliProcess(['code', 'list', file], { FAULTLINE_DATA_DIR: dataDir });
  assert.equal(after.code, 0, after.stderr);
  assert.deepEqual((JSON.parse(after.stdout) as { names: string[] }).names, ['gamma']);
  assert.equal(entryFiles(join(dataDir, 'cache', 'definitions')).length, 2, 'one entry per version');
  // And back: the first version is answered from its own entry, as parsed.
  writeFileSync(file, 'def alpha():\n    pass\n');
  const again = await runCliProcess(['code', 'list', file], { FAULTLINE_DATA_DIR: dataDir });
  assert.equal(again.stdout, before.stdout);
});
