/**
 * Timing checks of the code tools (src/code): work that must stay linear in the file, the cheaper
 * query form, and what the warm-up buys a first call. The behaviour behind each (same answers,
 * same lengths, the warm-up's steps) is in the tests: code-parse-text, code-edge, code-query-paths,
 * code-warm-up.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Query } from 'web-tree-sitter';
import { loadGrammar } from '../../src/code/grammar.js';
import { listFunctions, supportedLanguages } from '../../src/code/index.js';
import { textToParse } from '../../src/code/parse-text.js';
import { generatedTypeScript } from '../../test/helpers/code-fixtures.js';
import { connectStdio } from '../../test/helpers/mcp.js';
import { repoRoot } from '../../test/helpers/repo.js';
import { interleaved, median, type BenchCheck, type Row } from '../lib/check.js';

/** How long `work` takes, in ms. */
function timed(work: () => unknown): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

const parseTextLinear: BenchCheck = {
  name: 'code.parse-text-linear',
  measures: 'the rewrite of a file with 20,000 split exports (TypeScript) or export macros (C++) before parsing',
  peer: 'the same rewrite of a file with 2,000 of them',
  target: 'ten times the rewrites cost at most 40 times the time (linear gives ~10, a copy per rewrite ~100)',
  tests: ['test/code-parse-text.test.ts'],
  async run() {
    const shapes: Array<[string, (i: number) => string]> = [
      ['typescript', (i) => `export\ndefault function f${i}() {}\nexport default abstract class { m${i}() {} }\n`],
      ['cpp', (i) => `class API_${i} C${i} : public B { void m() {} };\n`],
    ];
    const rows: Row[] = [];
    for (const [language, shape] of shapes) {
      const small = Array.from({ length: 2_000 }, (_, i) => shape(i)).join('');
      const large = Array.from({ length: 20_000 }, (_, i) => shape(i)).join('');
      // Best of 9, interleaved: the small side lasts a millisecond or two, so one pause would decide.
      const times = await interleaved(9, { small: () => timed(() => textToParse(small, language)), large: () => timed(() => textToParse(large, language)) });
      rows.push({
        label: language,
        ours: { label: '20,000 rewrites', value: Math.min(...times.large), unit: 'ms' },
        peer: { label: '2,000 rewrites', value: Math.max(Math.min(...times.small), 0.05), unit: 'ms' },
        target: { on: 'ratio', atMost: 40 },
      });
    }
    return rows;
  },
};

const minifiedOneLine: BenchCheck = {
  name: 'code.minified-one-line',
  measures: 'listFunctions on a minified file (every definition on one line: 20,000 object members; 10,000 functions)',
  peer: 'the same code with one definition per line',
  target: 'one line costs at most 4 times many lines (linear work gives ~1; a scan of the line per definition gave over 10)',
  tests: ['test/code-edge.test.ts'],
  async run() {
    const rows: Row[] = [];
    for (const [shape, entries, open, separator, close] of [
      ['object members', Array.from({ length: 20_000 }, (_, i) => `f${i}: (x) => x + ${i}`), 'const api = {', ',', '};'],
      ['functions', Array.from({ length: 10_000 }, (_, i) => `function f${i}(x) { return x + ${i}; }`), '', '', ''],
    ] as const) {
      const oneLine = `${open}${entries.join(`${separator} `)}${close}\n`;
      const manyLines = `${open}\n${entries.join(`${separator}\n`)}\n${close}\n`;
      // A source not listed before each time: the definition cache would answer a repeat at once.
      let run = 0;
      const list = async (source: string): Promise<number> => {
        const fresh = `// run ${run++}\n${source}`;
        const started = performance.now();
        const listed = await listFunctions(fresh, 'javascript');
        const ms = performance.now() - started;
        if (listed.definitions.length !== entries.length) throw new Error(`${shape}: listed ${listed.definitions.length} of ${entries.length}`);
        return ms;
      };
      const times = await interleaved(3, { oneLine: () => list(oneLine), manyLines: () => list(manyLines) });
      rows.push({
        label: shape,
        ours: { label: 'one line', value: Math.min(...times.oneLine), unit: 'ms' },
        peer: { label: 'many lines', value: Math.min(...times.manyLines), unit: 'ms' },
        target: { on: 'ratio', atMost: 4 },
      });
    }
    return rows;
  },
};

const queryPathsCompile: BenchCheck = {
  name: 'code.query-paths-compile',
  measures: 'compiling the definitions queries that name definitions by a path (grammars/*/definitions.scm), TypeScript + C++',
  peer: 'compiling the whole two-field queries they replaced (test/fixtures/code-whole-queries), same answers',
  target: 'at most 0.75 of the whole queries\' time (measured ~1/3)',
  tests: ['test/code-query-paths.test.ts'],
  async run(context) {
    const total = { paths: 0, whole: 0 };
    for (const name of ['typescript', 'cpp']) {
      const info = supportedLanguages().find((language) => language.name === name)!;
      const grammar = await loadGrammar(info);
      const texts = {
        paths: readFileSync(join(repoRoot, 'grammars', info.grammarDir, 'definitions.scm'), 'utf8'),
        whole: readFileSync(join(repoRoot, 'test', 'fixtures', 'code-whole-queries', `${info.grammarDir}.scm`), 'utf8'),
      };
      const compile = (kind: 'paths' | 'whole') => (): number => timed(() => new Query(grammar.language, texts[kind]).delete());
      const times = await interleaved(9, { paths: compile('paths'), whole: compile('whole') });
      context.log(`${name}: paths ${Math.min(...times.paths).toFixed(1)} ms, whole ${Math.min(...times.whole).toFixed(1)} ms`);
      total.paths += Math.min(...times.paths);
      total.whole += Math.min(...times.whole);
    }
    return [
      {
        label: 'typescript + cpp, best of 9',
        ours: { label: 'paths', value: total.paths, unit: 'ms' },
        peer: { label: 'whole', value: total.whole, unit: 'ms' },
        target: { on: 'ratio', atMost: 0.75 },
      },
    ];
  },
};

const codeDir = join(repoRoot, 'dist', 'src', 'code');

/** The first listFunctions in a fresh node process, in ms, after a warm-up and a short idle spell or not. */
function firstCallMs(warm: boolean, source: string): number {
  const script = `
    const { listFunctions } = await import(${JSON.stringify(join(codeDir, 'index.js'))});
    const { warmUpCode } = await import(${JSON.stringify(join(codeDir, 'warm-up.js'))});
    const source = ${JSON.stringify(source)};
    if (${warm}) { await warmUpCode(['typescript']); await new Promise((resolve) => setTimeout(resolve, 200)); }
    const started = performance.now();
    await listFunctions(source, 'typescript');
    process.stdout.write(String(performance.now() - started));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

const warmUpFirstCall: BenchCheck = {
  name: 'code.warm-up-first-call',
  measures: 'the first listFunctions of a 3,000-line TypeScript file in a fresh process after warmUpCode and 200 ms idle',
  peer: 'the same first call in a fresh process without the warm-up (processes interleaved, medians of 5)',
  target: 'at most 0.8 of the cold first call (measured ~1/4)',
  tests: ['test/code-warm-up.test.ts'],
  async run() {
    const source = generatedTypeScript();
    const times = await interleaved(5, { cold: () => firstCallMs(false, source), warmed: () => firstCallMs(true, source) });
    return [
      {
        label: '3,000-line file',
        ours: { label: 'warmed', value: median(times.warmed), unit: 'ms' },
        peer: { label: 'cold', value: median(times.cold), unit: 'ms' },
        target: { on: 'ratio', atMost: 0.8 },
      },
    ];
  },
};

/** The first fault_list_function_names call of a spawned `faultline mcp`, in ms, after `idleMs` of idle time. */
async function firstMcpCallMs(file: string, idleMs: number): Promise<number> {
  const session = await connectStdio();
  try {
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const started = performance.now();
    const result = await session.client.callTool({ name: 'fault_list_function_names', arguments: { file } });
    if (result.isError) throw new Error(JSON.stringify(result.content));
    return performance.now() - started;
  } finally {
    await session.close();
  }
}

const mcpIdleWarmUp: BenchCheck = {
  name: 'code.mcp-idle-warm-up',
  measures: 'the first fault_list_function_names call (3,000-line TypeScript file) of `faultline mcp` made 2.5 s after start-up, once its idle-time warm-up ran',
  peer: 'the same first call made at once after initialize (servers interleaved, best of 3)',
  target: 'at most 0.8 of the immediate first call (measured ~1/4)',
  tests: ['test/code-warm-up.test.ts'],
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-warm-'));
    try {
      const file = join(dir, 'generated.ts');
      writeFileSync(file, generatedTypeScript());
      const times = await interleaved(3, { immediate: () => firstMcpCallMs(file, 0), afterIdle: () => firstMcpCallMs(file, 2500) });
      return [
        {
          label: '3,000-line file',
          ours: { label: 'after idle', value: Math.min(...times.afterIdle), unit: 'ms' },
          peer: { label: 'at once', value: Math.min(...times.immediate), unit: 'ms' },
          target: { on: 'ratio', atMost: 0.8 },
        },
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const checks: BenchCheck[] = [parseTextLinear, minifiedOneLine, queryPathsCompile, warmUpFirstCall, mcpIdleWarmUp];
