/**
 * Indexing and search with the local SQLite store and the local hashed embedder.
 *
 * 1. Indexing, on two corpora: a generated tree of about 100,000 chunks (1.1 million lines) across
 * Python, TypeScript, Go, Rust and Java (seeded, so every run indexes the same code) and the Python standard library of
 *    `python3` (skipped without it). Each run is a process of its own, measured two ways side by
 *    side: the module API (bench/index-child.ts: indexSourceTree) and the CLI as users run it
 *    (`faultline index`, spawned with the environment the MCP SDK gives servers, its peak RSS read
 *    by bench/peak-rss-probe.ts). Chunks per second and peak RSS (the process's maxRSS), median
 *    and worst over the runs; the module run also re-indexes unchanged (time as a share of the first).
 *    With `--compare DIR` (another checkout with dist/ built) the same runs of that build are
 *    interleaved with these and the ratios printed.
 * 2. Search: builds a 100,000-chunk local store and runs queries through searchIndex, as the search
 *    tool does (lexical, symbol channels, fusion): warm p50/p99 in this process. Then `faultline
 *    search` from a fresh process on that store and on the standard library's index, interleaved
 *    with `node -e 0` (same environment): median and p90 wall time, and the ratio.
 *
 * Run: npx tsc -p . && node dist/bench/index.js [--runs N] [--rounds N] [--compare DIR]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { makeConfig } from '../src/config.js';
import { chunkId, searchIndex } from '../src/search/index.js';
import { HashedEmbedder } from '../src/search/hashed-embedder.js';
import { SqliteStore } from '../src/search/sqlite-store.js';
import { indexDirectory, registerTree, treeKey } from '../src/search/location.js';
import type { StoredChunk } from '../src/search/store.js';
import { repoRoot } from '../test/helpers/repo.js';

/** About 100,000 chunks: the generated files average 7 definitions in 80 lines. */
const TARGET_LINES = 1_100_000;
const SEARCH_CHUNKS = 100_000;
const QUERIES = 300;

const WORDS = (
  'parse load save user config file request response retry timeout ' +
  'cache token session order invoice payment queue worker stream ' +
  'buffer index search render route handler client server health ' +
  'metric'
).split(' ');

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
    const stmt = () =>
      `${ext === 'py' ? '' : 'let '}${snake(2)} = ` +
      `${snake(2)}(${word()}, ${Math.floor(rand() * 100)})${ext === 'py' ? '' : ';'}`;
    if (ext === 'py')
      parts.push(`def ${name}(${word()}, ${word()}_arg):\n${body(size, '    ', stmt)}\n    return None\n`);
    else if (ext === 'ts')
      parts.push(`export function ${name}(${word()}: number): number {\n${body(size, '  ', stmt)}\n  return 0;\n}\n`);
    else if (ext === 'go')
      parts.push(
        `func ${cap(name)}(${word()} int) int ` +
          `{\n${body(size, '\t', () => `${camel(2)} := ${camel(2)}(${Math.floor(rand() * 100)})`)}\n\treturn ` +
          `0\n}\n`,
      );
    else if (ext === 'rs')
      parts.push(`pub fn ${name}(${word()}: i64) -> i64 {\n${body(size, '    ', stmt)}\n    0\n}\n`);
    else
      parts.push(
        `class ${cap(name)} {\n  int ${camel(2)}(int ${word()}) {\n${body(size, '    ', () => `int ${camel(2)} = ${camel(2)}(${Math.floor(rand() * 100)});`)}\n ` +
          `   return 0;\n  }\n}\n`,
      );
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

function option(name: string, fallback: number): number;
function option(name: string): string | undefined;
function option(name: string, fallback?: number): number | string | undefined {
  const at = process.argv.indexOf(name);
  const value = at === -1 ? undefined : process.argv[at + 1];
  return fallback === undefined ? value : value === undefined ? fallback : Number(value);
}

const RUNS = option('--runs', 3);
const ROUNDS = Math.max(9, option('--rounds', 9));
const childScript = fileURLToPath(new URL('./index-child.js', import.meta.url));
const probe = fileURLToPath(new URL('./peak-rss-probe.js', import.meta.url));
const environment = getDefaultEnvironment();

interface RunFigures {
  chunks: number;
  seconds: number;
  peakMb: number;
  again?: number;
}

/** Indexing through the module API in a fresh process. */
function moduleRun(root: string, tree: string, dataDir: string): RunFigures {
  const out = execFileSync(process.execPath, [childScript, root, tree, dataDir], {
    encoding: 'utf8',
    env: environment,
    maxBuffer: 1 << 24,
  });
  const result = JSON.parse(out) as { chunks: number; seconds: number; again: number; peakKb: number };
  return { chunks: result.chunks, seconds: result.seconds, peakMb: result.peakKb / 1024, again: result.again };
}

/** `faultline index TREE` as users run it, with the peak-RSS probe loaded. */
function cliRun(root: string, tree: string, dataDir: string): RunFigures {
  const child = spawnSync(
    process.execPath,
    ['--import', probe, join(root, 'dist', 'src', 'cli.js'), 'index', tree, '--root', tree],
    {
      encoding: 'utf8',
      env: { ...environment, FAULTLINE_DATA_DIR: dataDir },
      maxBuffer: 1 << 24,
    },
  );
  if (child.status !== 0) throw new Error(`faultline index failed: ${child.stderr}`);
  const stats = JSON.parse(child.stdout) as { chunks: number; seconds: number };
  const peak = /faultline-peak-rss-kb=(\d+)/.exec(child.stderr);
  return { chunks: stats.chunks, seconds: stats.seconds, peakMb: Number(peak?.[1]) / 1024 };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function summary(runs: readonly RunFigures[]): {
  rate: number;
  peak: number;
  worst: number;
  again: number | undefined;
} {
  const againShares = runs.filter((run) => run.again !== undefined).map((run) => run.again! / run.seconds);
  return {
    rate: median(runs.map((run) => run.chunks / run.seconds)),
    peak: median(runs.map((run) => run.peakMb)),
    worst: Math.max(...runs.map((run) => run.peakMb)),
    again: againShares.length > 0 ? median(againShares) : undefined,
  };
}

function pythonLib(): string | undefined {
  try {
    return (
      execFileSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], {
        encoding: 'utf8',
      }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

/** Wall milliseconds of spawned commands, interleaved round by round. */
function interleaved(commands: Record<string, string[]>, env: NodeJS.ProcessEnv): Record<string, number[]> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, args] of Object.entries(commands)) {
      const started = performance.now();
      const child = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
      if (child.status !== 0) throw new Error(`${name} failed: ${child.stderr}`);
      times[name]!.push(performance.now() - started);
    }
  }
  return times;
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'faultline-bench-index-'));
  try {
    const tree = join(base, 'tree');
    const lines = generateTree(tree);
    const stdlib = pythonLib();
    const corpora = [
      { name: `generated tree (${lines} lines)`, dir: tree },
      ...(stdlib ? [{ name: `Python standard library (${stdlib})`, dir: stdlib }] : []),
    ];
    const compare = option('--compare');
    const builds = [
      { label: 'this build', root: repoRoot },
      ...(compare ? [{ label: `--compare ${compare}`, root: compare }] : []),
    ];
    let stdlibData: string | undefined;

    console.log(`index: ${RUNS} runs per corpus, each a fresh process (module API, then the CLI), builds interleaved`);
    for (const corpus of corpora) {
      const results = builds.map(() => ({ module: [] as RunFigures[], cli: [] as RunFigures[] }));
      for (let run = 0; run < RUNS; run++) {
        builds.forEach((build, at) => {
          const data = join(base, `data-${at}-${run}`);
          results[at]!.module.push(moduleRun(build.root, corpus.dir, `${data}-module`));
          results[at]!.cli.push(cliRun(build.root, corpus.dir, `${data}-cli`));
          rmSync(`${data}-module`, { recursive: true, force: true });
          if (at === 0 && run === RUNS - 1 && corpus.dir === stdlib) stdlibData = `${data}-cli`;
          else rmSync(`${data}-cli`, { recursive: true, force: true });
        });
      }
      console.log(`  ${corpus.name}: ${results[0]!.cli[0]!.chunks} chunks`);
      builds.forEach((build, at) => {
        for (const kind of ['module', 'cli'] as const) {
          const { rate, peak, worst, again } = summary(results[at]![kind]);
          const each = results[at]![kind].map((run) => run.peakMb.toFixed(0)).join(', ');
          console.log(
            `    ${build.label}, ` +
              `${kind === 'cli' ? '`faultline index`' : 'module API     '}: ${Math.round(rate)} ` +
              `chunks/s (target >= 3000 on the standard library), ` +
              `peak RSS median ${peak.toFixed(0)} MB, worst ${worst.toFixed(0)} MB [${each}] (target < 300)` +
              (again !== undefined
                ? `; unchanged re-index ${(again * 100).toFixed(1)}% of the first run (target < 10%)`
                : ''),
          );
        }
      });
      if (builds.length > 1) {
        for (const kind of ['module', 'cli'] as const) {
          const ours = summary(results[0]![kind]);
          const theirs = summary(results[1]![kind]);
          console.log(
            `    ratio this/compare (${kind}): chunks/s ` +
              `${(ours.rate / theirs.rate).toFixed(2)}, peak RSS median ` +
              `${(ours.peak / theirs.peak).toFixed(2)}, worst ${(ours.worst / theirs.worst).toFixed(2)}`,
          );
        }
      }
    }

    // A 100,000-chunk store of another tree, searched as the tool searches it.
    const settings = { dataDir: join(base, 'data'), llm: makeConfig().llm, env: {} };
    const embedder = new HashedEmbedder();
    const searchTree = join(base, 'search-tree');
    mkdirSync(searchTree);
    await registerTree(settings.dataDir, searchTree);
    const file = join(indexDirectory(settings.dataDir), treeKey(searchTree), `${embedder.id}.sqlite`);
    const store = await SqliteStore.open(file, { tree: searchTree, embedder: embedder.id, vectors: false });
    const buildStarted = performance.now();
    for (let f = 0; f < SEARCH_CHUNKS / 50; f++) {
      const texts = Array.from(
        { length: 50 },
        (_, c) => `def ${snake(3)}_${f}_${c}():\n    ${snake(2)} = ${snake(2)}(${word()})\n    return ${camel(2)}`,
      );
      const chunks: StoredChunk[] = texts.map((text, c) => {
        const chunk = {
          path: `f${f}.py`,
          language: 'python',
          symbol: `s${c}`,
          kind: 'function' as const,
          startLine: c * 3 + 1,
          endLine: c * 3 + 3,
          text,
          hash: `${f}:${c}`,
        };
        return { ...chunk, id: chunkId(chunk), fileHash: String(f) };
      });
      await store.replaceFile(`f${f}.py`, chunks);
    }
    await store.commit();
    const buildSeconds = (performance.now() - buildStarted) / 1000;

    const times: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const query = `${word()} ${word()} ${camel(2)}`;
      const started = performance.now();
      await searchIndex(settings, { query, sourceDir: searchTree, limit: 10 });
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    console.log(
      `search: ${await store.count()} chunks (written in ${buildSeconds.toFixed(2)} ` +
        `s), ${QUERIES} queries, top 10 (searchIndex: lexical + symbol ` +
        `channels, fused)`,
    );
    console.log(
      `  warm p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ` +
        `ms  (target p50 < 20)`,
    );

    const cli = join(repoRoot, 'dist', 'src', 'cli.js');
    const fresh: Array<{ name: string; data: string; dir: string; queries: string[] }> = [
      {
        name: `the ${SEARCH_CHUNKS}-chunk store`,
        data: settings.dataDir,
        dir: searchTree,
        queries: ['parse user config', 'retry_timeout_cache', 'sessionToken'],
      },
      ...(stdlib && stdlibData
        ? [
            {
              name: 'the standard library index',
              data: stdlibData,
              dir: stdlib,
              queries: ['urlencode', 'cancel a task', 'read data from the stream until a separator is found'],
            },
          ]
        : []),
    ];
    for (const target of fresh) {
      const commands: Record<string, string[]> = { 'node -e 0': ['-e', '0'] };
      for (const query of target.queries)
        commands[query] = [cli, 'search', query, '--dir', target.dir, '--root', target.dir];
      const measured = interleaved(commands, { ...environment, FAULTLINE_DATA_DIR: target.data });
      const bare = measured['node -e 0']!;
      const searches = target.queries.flatMap((query) => measured[query]!);
      const p90 = (values: number[]): number =>
        percentile(
          [...values].sort((a, b) => a - b),
          90,
        );
      console.log(
        `  \`faultline search\` from a fresh process on ${target.name}, ${ROUNDS} ` +
          `interleaved rounds of ${target.queries.length} queries: ` +
          `median ${median(searches).toFixed(0)} ms, p90 ${p90(searches).toFixed(0)} ms wall (target < 150); ` +
          `\`node -e 0\` median ${median(bare).toFixed(0)} ms, p90 ${p90(bare).toFixed(0)} ` +
          `ms; ratio ${(median(searches) / median(bare)).toFixed(2)}`,
      );
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
