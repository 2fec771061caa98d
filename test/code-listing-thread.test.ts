/**
 * The listing thread (src/code/listing-thread.ts): what it answers is what the caller's thread
 * parses; a cancelled request frees it for the next; it never keeps a process alive, ends when
 * idle and starts again on the next request. What it buys a fresh server's first call in time is
 * measured by bench/checks/code.ts (code.listing-first-call, code.mcp-start-warm-up).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sourceText } from '../src/access.js';
import { CancelledError } from '../src/kernel/errors.js';
import { languageByName, listDefinitions } from '../src/code/index.js';
import { withTree } from '../src/code/grammar.js';
import { KEEP_SHARED_BYTES, ListingThread, startListingThread, stopListingThread } from '../src/code/listing-thread.js';
import { generatedTypeScript } from './helpers/code-fixtures.js';
import { repoRoot } from './helpers/repo.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

// The listing thread is what this file tests (test/helpers/isolate.ts turns it off for the rest of the suite).
process.env.FAULTLINE_LISTING_THREAD = 'on';

const javascript = 'class A {\n  m() {\n    return function inner() {};\n  }\n}\nconst f = (x) => x;\n';

test('the thread answers what the caller thread parses, incremental re-parses included', async () => {
  const thread = new ListingThread(['typescript']);
  try {
    thread.start();
    // The warming thread is unreferenced: something else must keep this process alive meanwhile.
    const alive = setInterval(() => {}, 1000);
    await thread.warmedUp.finally(() => clearInterval(alive));
    const source = generatedTypeScript();
    assert.deepEqual(await thread.list(source, 'typescript'), await listDefinitions(source, 'typescript'));
    assert.deepEqual(await thread.list(javascript, 'javascript'), await listDefinitions(javascript, 'javascript'));
    // The next version of a document is re-parsed from its kept tree, on the thread.
    const edited = `${source}\nexport function added(a: number) {\n  return a;\n}\n`;
    await thread.list(source, 'typescript', '/doc.ts');
    assert.deepEqual(await thread.list(edited, 'typescript', '/doc.ts'), await listDefinitions(edited, 'typescript'));
    // Syntax errors, bodiless definitions and a name with a NUL (sent unpacked) come back as they are parsed.
    const broken = 'interface I { m(): void }\nfunction f( {\n}\nclass C { n() {} }\nconst o = { "a\0b"() {} };\n';
    assert.deepEqual(await thread.list(broken, 'typescript'), await listDefinitions(broken, 'typescript'));
    assert.ok((await thread.list(broken, 'typescript')).syntaxErrors.count > 0);
    await assert.rejects(thread.list('x', 'no-such-language'), /unknown language/);
  } finally {
    await thread.close();
  }
});

test('sources handed over as bytes are decoded as the read decoded them, each request its own', async () => {
  const thread = new ListingThread();
  try {
    const large = `// é\n${generatedTypeScript()}`;
    const sources = [
      // A byte-order mark, non-Latin-1 names and a name outside the BMP; then a larger source, then a smaller one
      // again: the shared buffer is grown once and reused, and no answer may read another request's bytes.
      Buffer.from('\ufeffexport function naïve() { return "日本"; }\nclass Ünï { método() {} }\nconst 𝑓 = () => 1;\n'),
      Buffer.from(large),
      Buffer.from('function a() {}\n'),
      // Invalid UTF-8 is replaced on both sides alike.
      Buffer.concat([
        Buffer.from('function a() {}\n// '),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('\nfunction b() {}\n'),
      ]),
    ];
    // Sent together: each waits on this side while the one before is on the thread.
    const answers = await Promise.all(
      sources.map((bytes) =>
        thread.list('unused: the bytes are sent', 'typescript', undefined, undefined, undefined, bytes),
      ),
    );
    for (const [index, bytes] of sources.entries()) {
      const text = sourceText(bytes);
      assert.deepEqual(answers[index], await listDefinitions(text, 'typescript'), `source ${index}`);
    }
    assert.deepEqual(
      answers[0]!.definitions.map((definition) => definition.name),
      ['naïve', 'Ünï', 'método', '𝑓'],
    );
  } finally {
    await thread.close();
  }
});

test('a big source gets a shared buffer of its own, not kept; smaller ones reuse one buffer', async () => {
  const thread = new ListingThread();
  const kept = () => (thread as unknown as { shared: Uint8Array | undefined }).shared;
  const list = (text: string) =>
    thread.list('unused: the bytes are sent', 'javascript', undefined, undefined, undefined, Buffer.from(text));
  try {
    const small = 'function a() {}\n';
    assert.equal((await list(small)).definitions.length, 1);
    const buffer = kept();
    assert.ok(buffer !== undefined && thread.sharedBytes <= KEEP_SHARED_BYTES);
    // Most of it one comment: cheap to parse, and 1.5 times the bytes kept.
    const big = `// ${'x'.repeat(KEEP_SHARED_BYTES * 1.5)}\nfunction big() {}\n`;
    assert.deepEqual(
      (await list(big)).definitions.map((definition) => definition.name),
      ['big'],
    );
    assert.equal(kept(), buffer, 'the big source did not replace the kept buffer');
    assert.ok(thread.sharedBytes <= KEEP_SHARED_BYTES, `${thread.sharedBytes} bytes kept after a big source`);
    assert.equal((await list(`${small}function b() {}\n`)).definitions.length, 2);
    assert.equal(kept(), buffer, 'a small source reuses the kept buffer');
  } finally {
    await thread.close();
  }
});

test('a cancelled request fails at once and frees the thread for the next', async () => {
  const thread = new ListingThread();
  try {
    // Large enough that the parse is still under way when the abort lands.
    const large = Array.from({ length: 8 }, () => generatedTypeScript()).join('\n');
    const running = new AbortController();
    const queued = new AbortController();
    const first = thread.list(large, 'typescript', undefined, running.signal);
    const second = thread.list(large, 'typescript', undefined, queued.signal);
    const third = thread.list(javascript, 'javascript');
    queued.abort();
    running.abort();
    await assert.rejects(first, CancelledError);
    await assert.rejects(second, CancelledError);
    assert.deepEqual(await third, await listDefinitions(javascript, 'javascript'));
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(thread.list(javascript, 'javascript', undefined, aborted.signal), CancelledError);
  } finally {
    await thread.close();
  }
});

test('a parse stopped midway leaves the parser ready for the next source (no resumed parse)', async () => {
  // The store's answer cancels a parse under way on the thread (listDefinitions), so this happens on every such call.
  const info = languageByName('typescript')!;
  // Unlike the start of the stopped source: a resumed parse would answer that source's tree.
  const source = 'function a() {}\nclass B {\n  m() {}\n}\n';
  const shape = (text: string) => withTree(text, info, (tree) => tree.rootNode.toString());
  const expected = await shape(source);
  const large = Array.from({ length: 8 }, () => generatedTypeScript()).join('\n');
  let asked = 0;
  await assert.rejects(
    withTree(
      large,
      info,
      () => 'parsed',
      undefined,
      () => ++asked > 2,
    ),
    CancelledError,
  );
  assert.ok(asked > 2, 'the parse was stopped midway');
  assert.equal(await shape(source), expected);
});

test('the thread ends when idle and after close, and starts again on the next request', async () => {
  const thread = new ListingThread([], 50);
  try {
    await thread.list(javascript, 'javascript');
    assert.equal(thread.running, true);
    for (let i = 0; i < 400 && thread.running; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(thread.running, false, 'ended after 50 ms idle');
    assert.deepEqual(await thread.list(javascript, 'javascript'), await listDefinitions(javascript, 'javascript'));
    const pending = assert.rejects(thread.list(generatedTypeScript(), 'typescript'), /closed/);
    await thread.close();
    await pending;
    assert.deepEqual(await thread.list(javascript, 'javascript'), await listDefinitions(javascript, 'javascript'));
  } finally {
    await thread.close();
  }
});

test('listDefinitions parses on the started thread, and a started thread never keeps a process alive', async () => {
  startListingThread(['javascript']);
  try {
    assert.deepEqual(
      (await listDefinitions(`${javascript}// on the thread\n`, 'javascript')).definitions,
      (await listDefinitions(javascript, 'javascript')).definitions,
    );
  } finally {
    await stopListingThread();
  }
  // A process whose only work is the warming thread exits on its own (execFileSync's timeout fails it otherwise).
  const module = join(repoRoot, 'dist', 'src', 'code', 'listing-thread.js');
  const script = `const { startListingThread } = await import(${JSON.stringify(module)}); startListingThread();`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: HANG_GUARD_MS });
});

test('a process that ends right after a listing on the thread still leaves its definition store entry', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-listing-thread-'));
  try {
    const code = join(repoRoot, 'dist', 'src', 'code');
    const script = `
      const { startListingThread } = await import(${JSON.stringify(join(code, 'listing-thread.js'))});
      const { listDefinitions, definitionStoreIn } = await import(${JSON.stringify(join(code, 'index.js'))});
      startListingThread([]);
      await listDefinitions(${JSON.stringify(javascript)}, 'javascript', { store: definitionStoreIn(${JSON.stringify(dir)}) });`;
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: HANG_GUARD_MS });
    const entries = readdirSync(join(dir, 'cache', 'definitions'), { recursive: true, encoding: 'utf8' });
    assert.equal(entries.filter((name) => name.endsWith('.json')).length, 1, entries.join(' '));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
