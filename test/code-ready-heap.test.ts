/**
 * readyHeap (src/code/grammar.ts): the listing thread makes tree-sitter's heap resident after its
 * warm-up, so a fresh server's first large listing does not page it in on the call's path. It must
 * change nothing a parse holds (a kept tree re-parses as before) and must leave the pages a large
 * parse needs mapped (fewer page faults in that parse: counted by the kernel, not timed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { findDefinitions } from '../src/code/definitions.js';
import { readyHeap, withTree } from '../src/code/grammar.js';
import { languageByName, type LanguageInfo } from '../src/code/languages.js';
import { warmUpSample } from '../src/code/warm-up.js';

/** ~10,000 lines of JavaScript: the warm-up's sample a hundred times, each copy's names its own. */
function largeSource(info: LanguageInfo): string {
  return Array.from({ length: 100 }, (_, copy) =>
    warmUpSample(info)!.replace(/(sum|twice|Service|make)(\d+)/g, `$1$2_${copy}`),
  ).join('');
}
const javascript = languageByName('javascript')!;
const large = largeSource(javascript);

/** Parsed here, without the caches in front of the parse (index.ts): what tree-sitter makes of it now. */
function definitionsOf(source: string, document?: string): Promise<unknown[]> {
  return withTree(source, javascript, (tree, grammar) => findDefinitions(tree, grammar, javascript, source), document);
}

test('readying the heap changes no listing and no kept tree', async () => {
  const document = '/virtual/ready-heap.js';
  const first = await definitionsOf(large, document);
  assert.ok(first.length > 1000);
  await readyHeap(8 * 1024 * 1024);
  await readyHeap(0);
  // The kept tree is edited and re-parsed incrementally: it must be intact.
  const edited = `${large}function after() {}\n`;
  const incremental = await definitionsOf(edited, document);
  assert.deepEqual(incremental, await definitionsOf(edited));
  assert.deepEqual(incremental.slice(0, -1), first);
  assert.equal((incremental.at(-1) as { name: string }).name, 'after');
});

/** Page faults of a first large listing in a fresh process after a warm-up, with or without readyHeap before it. */
function firstLargeListingFaults(ready: boolean): number {
  const url = (path: string): string => new URL(path, import.meta.url).href;
  const script = `
    const { readyHeap, withTree } = await import(${JSON.stringify(url('../src/code/grammar.js'))});
    const { findDefinitions } = await import(${JSON.stringify(url('../src/code/definitions.js'))});
    const { languageByName } = await import(${JSON.stringify(url('../src/code/languages.js'))});
    const { warmUpCode, warmUpSample } = await import(${JSON.stringify(url('../src/code/warm-up.js'))});
    const info = languageByName('javascript');
    await warmUpCode(['javascript']);
    // In steps, as the listing thread does: the whole block each time, one megabyte of it written.
    if (${ready}) for (let from = 0; from < 8 << 20; from += 1 << 20) await readyHeap(8 << 20, from, from + (1 << 20));
    const large = (${largeSource.toString()})(info);
    // This thread's faults (the parse runs on it), not the process's: V8's compiler and GC threads fault too, by
    // thousands when the machine is busy, and a count of the whole process once hid the difference.
    const { readFileSync } = await import('node:fs');
    const faults = () => Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[7]);
    const before = faults();
    const listed = await withTree(large, info, (tree, grammar) => findDefinitions(tree, grammar, info, large));
    if (listed.length < 1000) throw new Error('the large source lists ' + listed.length);
    process.stdout.write(String(faults() - before));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    encoding: 'utf8',
    env: { ...process.env, FAULTLINE_LISTING_THREAD: 'off' },
  });
  return Number(output);
}

test('a readied heap spares a first large parse its page faults', { skip: process.platform !== 'linux' }, () => {
  const cold = firstLargeListingFaults(false);
  const readied = firstLargeListingFaults(true);
  // ~10,000 lines page in ~4 MB of WebAssembly memory (~1,000 faults) when nothing readied it.
  assert.ok(cold - readied >= 400, `faults: ${cold} without readyHeap, ${readied} with`);
});
