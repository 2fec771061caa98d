/**
 * Indexing and search with the local SQLite store and the local hashed embedder.
 *
 * 1. Generates a tree of 100,000 lines across Python, TypeScript, Go, Rust and Java (seeded, so
 *    every run indexes the same code), indexes it: chunks per second, peak RSS.
 * 2. Re-indexes it unchanged: time as a ratio of the first run.
 * 3. Builds a 100,000-chunk local store and runs queries through searchIndex, as the search tool
 *    does (lexical, symbol channels, fusion): warm p50/p99 in this process, and the wall time of
 *    one search in a fresh process (loading faultline and the driver, opening the database).
 *
 * Run: npx tsc -p . && node dist/bench/index.js
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeConfig } from '../src/config.js';
import { indexSourceTree, chunkId, searchIndex } from '../src/index/index.js';
import { HashedEmbedder } from '../src/index/hashed-embedder.js';
import { SqliteStore } from '../src/index/sqlite-store.js';
import { indexDirectory, registerTree, treeKey } from '../src/index/location.js';
import type { StoredChunk } from '../src/index/store.js';

const TARGET_LINES = 100_000;
const SEARCH_CHUNKS = 100_000;
const QUERIES = 300;

const WORDS = 'parse load save user config file request response retry timeout cache token session order invoice payment queue worker stream buffer index search render route handler client server health metric'.split(' ');

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const rand = random(42);
const word = (): string => WORDS[Math.floor(rand() * WORDS.length)]!;
const camel = (n: number): string => Array.from({ length: n }, (_, i) => (i === 0 ? word() : cap(word()))).join('');
const snake = (n: number): string => Array.from({ length: n }, word).join('_');
const cap = (text: string): string => text[0]!.toUpperCase() + text.slice(1);

function body(lines: number, indent: string, statement: () => string): string {
  return Array.from({ length: lines }, () => indent + statement()).join('\n');
}

/** One file of about `lines` lines in `ext`'s language: a few functions and a class/struct. */
function sourceFile(ext: string, index: number): string {
  const parts: string[] = [];
  for (let f = 0; f < 6; f++) {
    const size = 4 + Math.floor(rand() * 12);
    const name = ext === 'py' || ext === 'rs' ? `${snake(3)}_${index}_${f}` : `${camel(3)}${index}x${f}`;
    const stmt = () => `${ext === 'py' ? '' : 'let '}${snake(2)} = ${snake(2)}(${word()}, ${Math.floor(rand() * 100)})${ext === 'py' ? '' : ';'}`;
    if (ext === 'py') parts.push(`def ${name}(${word()}, ${word()}_arg):\n${body(size, '    ', stmt)}\n    return None\n`);
    else if (ext === 'ts') parts.push(`export function ${name}(${word()}: number): number {\n${body(size, '  ', stmt)}\n  return 0;\n}\n`);
    else if (ext === 'go') parts.push(`func ${cap(name)}(${word()} int) int {\n${body(size, '\t', () => `${camel(2)} := ${camel(2)}(${Math.floor(rand() * 100)})`)}\n\treturn 0\n}\n`);
    else if (ext === 'rs') parts.push(`pub fn ${name}(${word()}: i64) -> i64 {\n${body(size, '    ', stmt)}\n    0\n}\n`);
    else parts.push(`class ${cap(name)} {\n  int ${camel(2)}(int ${word()}) {\n${body(size, '    ', () => `int ${camel(2)} = ${camel(2)}(${Math.floor(rand() * 100)});`)}\n    return 0;\n  }\n}\n`);
  }
  return parts.join('\n');
}

function generateTree(root: string): number {
  const exts = ['py', 'ts', 'go', 'rs', 'java'];
  let lines = 0;
  for (let i = 0; lines < TARGET_LINES; i++) {
    const ext = exts[i % exts.length]!;
    const text = ext === 'go' ? `package p${i % 20}\n\n${sourceFile(ext, i)}` : sourceFile(ext, i);
    const dir = join(root, `pkg${i % 20}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `file${i}.${ext}`), text);
    lines += text.split('\n').length;
  }
  return lines;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'faultline-bench-index-'));
  try {
    const tree = join(base, 'tree');
    const lines = generateTree(tree);
    const settings = { dataDir: join(base, 'data'), llm: makeConfig().llm, env: {} };

    const rssBefore = process.resourceUsage().maxRSS / 1024;
    const first = await indexSourceTree(settings, { sourceDir: tree });
    const peakRss = process.resourceUsage().maxRSS / 1024;
    const again = await indexSourceTree(settings, { sourceDir: tree });

    console.log(`index: ${lines} lines, ${first.files} files, ${first.chunks} chunks in ${first.seconds.toFixed(2)} s`);
    console.log(`  chunks/s (walk+read+parse+chunk+embed+write): ${Math.round(first.chunks / first.seconds)}  (target >= 3000)`);
    console.log(`  peak RSS: ${peakRss.toFixed(0)} MB (before indexing: ${rssBefore.toFixed(0)} MB)  (target < 300)`);
    console.log(`  unchanged re-index: ${again.seconds.toFixed(3)} s = ${((again.seconds / first.seconds) * 100).toFixed(1)}% of the first run, embedded ${again.embedded}  (target < 10%)`);

    // A 100,000-chunk store of another tree, searched as the tool searches it.
    const embedder = new HashedEmbedder();
    const searchTree = join(base, 'search-tree');
    mkdirSync(searchTree);
    await registerTree(settings.dataDir, searchTree);
    const file = join(indexDirectory(settings.dataDir), treeKey(searchTree), `${embedder.id}.sqlite`);
    const store = await SqliteStore.open(file, { tree: searchTree, embedder: embedder.id, vectors: false });
    const rssBeforeStore = process.resourceUsage().maxRSS / 1024;
    const buildStarted = performance.now();
    for (let f = 0; f < SEARCH_CHUNKS / 50; f++) {
      const texts = Array.from({ length: 50 }, (_, c) => `def ${snake(3)}_${f}_${c}():\n    ${snake(2)} = ${snake(2)}(${word()})\n    return ${camel(2)}`);
      const chunks: StoredChunk[] = texts.map((text, c) => {
        const chunk = { path: `f${f}.py`, language: 'python', symbol: `s${c}`, kind: 'function' as const, startLine: c * 3 + 1, endLine: c * 3 + 3, text, hash: `${f}:${c}` };
        return { ...chunk, id: chunkId(chunk), fileHash: String(f) };
      });
      await store.replaceFile(`f${f}.py`, chunks);
    }
    await store.commit();
    const buildSeconds = (performance.now() - buildStarted) / 1000;
    const storePeakRss = process.resourceUsage().maxRSS / 1024;

    const times: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const query = `${word()} ${word()} ${camel(2)}`;
      const started = performance.now();
      await searchIndex(settings, { query, sourceDir: searchTree, limit: 10 });
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const fresh: number[] = [];
    const script = `const {searchIndex}=await import(${JSON.stringify(new URL('../src/index/index.js', import.meta.url).href)});` +
      `await searchIndex(${JSON.stringify(settings)},{query:'parse user config',sourceDir:${JSON.stringify(searchTree)},limit:10});`;
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      execFileSync(process.execPath, ['--input-type=module', '-e', script]);
      fresh.push(performance.now() - started);
    }
    const bare: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      execFileSync(process.execPath, ['--input-type=module', '-e', '']);
      bare.push(performance.now() - started);
    }
    fresh.sort((a, b) => a - b);
    bare.sort((a, b) => a - b);
    console.log(`search: ${await store.count()} chunks, ${QUERIES} queries, top 10 (searchIndex: lexical + symbol channels, fused)`);
    console.log(`  warm p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms  (target p50 < 20)`);
    console.log(`  fresh process, one search: median ${percentile(fresh, 50).toFixed(0)} ms wall, of which ${percentile(bare, 50).toFixed(0)} ms is starting node itself  (target < 150)`);
    console.log(`  store of ${SEARCH_CHUNKS} chunks written in ${buildSeconds.toFixed(2)} s; peak RSS ${storePeakRss.toFixed(0)} MB (before: ${rssBeforeStore.toFixed(0)} MB)`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
