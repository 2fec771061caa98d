/**
 * Code tools benchmark: listing and extraction on a generated ~2,000-line file per language and on
 * real files (zod's schemas.ts, 2,937 lines), plus the first call on a 20,000-line file.
 *
 * Prints, per file, side by side in one run:
 * - module warm: mean time per listFunctions / extractFunction call in this process, after warm-up
 *   (the grammar loaded, JIT warm), each call on a source it has not seen (so the definition cache
 *   cannot answer); "again": the same source every call, as an agent's list-then-extract does;
 *   "edited": the same document with one line added before each call, as an agent editing a file
 *   does, re-parsed incrementally from the previous version's tree;
 * - MCP warm: the same through the SDK client and the built CLI over stdio (`node dist/src/cli.js
 *   mcp`), file read included: uncached calls read a file at a new path each time (the server has
 *   no tree of it), "edited" calls the same path rewritten with one more line;
 * - cold: the first list call in a fresh process — module: `import` of src/code plus the first
 *   listFunctions (runtime init, grammar load, first parse); MCP: the first tools/call on a freshly
 *   spawned server after initialize (spawn and initialize not counted; shown separately);
 *   "after warm-up": the module's first listFunctions after warmUpCode(language) and 300 ms idle,
 *   as a server that warms up between start-up and the agent's first call would see it;
 * - the 20,000-line first call, also split into phases (grammar+query load, parse, definitions).
 * Targets: warm list/extract ≤ 50 ms up to 3,000 lines; first call ≤ 300 ms at 20k lines.
 *
 * With FAULTLINE_BENCH_BASELINE set to another build's dist/ directory (e.g. a copy of an earlier
 * commit's build, with grammars/ and node_modules/ beside it), that build is measured in the same
 * run beside this one: module warm list/extract per row (blocks interleaved, best of two), and
 * for the 20,000-line file the fresh-process first call and its phases (processes interleaved,
 * medians), so the two are compared under the same load.
 *
 * Run: npx tsc -p . && node dist/bench/code.js [iterations=30] [rows=RegExp, e.g. 'zod|typescript']
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { extractFunction, languageByName, listFunctions } from '../src/code/index.js';

const TARGET_LINES = 2000;
const iterations = Number(process.argv[2] ?? 30);
/** Which rows to measure (by label); the 20,000-line first call is always measured. */
const rowFilter = new RegExp(process.argv[3] ?? '.');
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const cliPath = join(repoRoot, 'dist', 'src', 'cli.js');
const thisDist = join(repoRoot, 'dist');
const baselineDist = process.env.FAULTLINE_BENCH_BASELINE;
const baselineCode: typeof import('../src/code/index.js') | undefined = baselineDist
  ? await import(pathToFileURL(join(baselineDist, 'src', 'code', 'index.js')).href)
  : undefined;

/** One repeating unit of source per language (a class with methods plus free functions). */
const UNITS: Record<string, { ext: string; head: string; unit: (i: number) => string; pick: string }> = {
  python: {
    ext: 'py',
    head: 'import os\n\n',
    unit: (i) =>
      `@decorator\ndef func_${i}(a, b):\n    total = a + b\n    for x ` +
      `in range(total):\n        total += x\n    return total\n\n\n` +
      `class Service${i}:\n    def __init__(self, name):\n        ` +
      `self.name = name\n\n    def run(self, n):\n        def inner():\n ` +
      `           return n * 2\n        return inner()\n\n\n`,
    pick: 'func_7',
  },
  javascript: {
    ext: 'js',
    head: "import fs from 'node:fs';\n\n",
    unit: (i) =>
      `export function func_${i}(a, b) {\n  let total = a + b;\n  for ` +
      `(let x = 0; x < total; x++) total += x;\n  return total;\n}\n\n` +
      `const arrow_${i} = (n) => n * 2;\n\nclass Service${i} {\n  ` +
      `constructor(name) {\n    this.name = name;\n  }\n\n  run(n) {\n  ` +
      `  return arrow_${i}(n);\n  }\n}\n\n`,
    pick: 'func_7',
  },
  typescript: {
    ext: 'ts',
    head: "import fs from 'node:fs';\n\n",
    unit: (i) =>
      `export function func_${i}(a: number, b: number): number {\n  let ` +
      `total = a + b;\n  for (let x = 0; x < total; x++) total += x;\n  ` +
      `return total;\n}\n\n` +
      `const arrow_${i} = (n: number): number => n * 2;\n\nclass ` +
      `Service${i}<T> {\n  constructor(private readonly name: T) {}\n\n ` +
      ` run(n: number): number {\n    return arrow_${i}(n);\n  }\n}\n\n`,
    pick: 'func_7',
  },
  go: {
    ext: 'go',
    head: 'package bench\n\n',
    unit: (i) =>
      `// Func${i} sums.\nfunc Func${i}(a, b int) int {\n\ttotal := a + ` +
      `b\n\tfor x := 0; x < total; x++ {\n\t\ttotal += x\n\t}\n\treturn ` +
      `total\n}\n\n` +
      `type Service${i} struct {\n\tname string\n}\n\nfunc (s *Service${i}) Run(n int) int {\n\treturn n * 2\n}\n\n`,
    pick: 'Func7',
  },
  rust: {
    ext: 'rs',
    head: 'use std::fmt;\n\n',
    unit: (i) =>
      `/// Sums.\n#[inline]\npub fn func_${i}(a: i64, b: i64) -> i64 {\n ` +
      `   let mut total = a + b;\n    for x in 0..total {\n        ` +
      `total += x;\n    }\n    total\n}\n\n` +
      `pub struct Service${i} {\n    name: String,\n}\n\nimpl Service${i} ` +
      `{\n    pub fn run(&self, n: i64) -> i64 {\n        n * 2\n    ` +
      `}\n}\n\n`,
    pick: 'func_7',
  },
  java: {
    ext: 'java',
    head: 'package bench;\n\n',
    unit: (i) =>
      `class Service${i} {\n    private final String name;\n\n    ` +
      `Service${i}(String name) {\n        this.name = name;\n    }\n\n ` +
      `   @Override\n    public String toString() {\n        return ` +
      `name;\n    }\n\n` +
      `    static int func${i}(int a, int b) {\n        int total = a + ` +
      `b;\n        for (int x = 0; x < total; x++) {\n            total ` +
      `+= x;\n        }\n        return total;\n    }\n}\n\n`,
    pick: 'func7',
  },
};

function generate(language: string, targetLines = TARGET_LINES): { source: string; lines: number } {
  const spec = UNITS[language]!;
  let source = spec.head;
  for (let i = 0; source.split('\n').length < targetLines; i += 1) source += spec.unit(i);
  return { source, lines: source.split('\n').length - 1 };
}

function meanMs(samples: number[]): number {
  return samples.reduce((a, b) => a + b, 0) / samples.length;
}

/**
 * Mean ms of `run` over `iterations` calls after 5 warm-up calls. `prepare` (not timed) runs
 * before each call: the uncached figures use it to hand every call a source never seen before.
 */
async function timeEach(run: () => Promise<unknown>, prepare: () => void = () => {}): Promise<number> {
  for (let i = 0; i < 5; i += 1) {
    prepare();
    await run();
  }
  const samples: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    prepare();
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return meanMs(samples);
}

/**
 * Sources that parse to the same definitions but are new to the definition cache (src/code keeps
 * the last few sources parsed): the text plus a growing run of trailing newlines.
 */
let variant = 0;
const fresh = (source: string): string => `${source}${'\n'.repeat(++variant)}`;

/**
 * The next version of a file an agent is editing: one comment line inserted at a different place
 * each time (edits accumulate, as they do in a session). Re-parsed incrementally when the tools
 * know the previous version (src/code/recent-trees.ts).
 */
let editCount = 0;
function edited(source: string): string {
  editCount += 1;
  const at = source.indexOf('\n', (editCount * 7919) % source.length);
  return at < 0
    ? `${source}\n// edit ${editCount}\n`
    : `${source.slice(0, at)}\n// edit ${editCount}${source.slice(at)}`;
}

/**
 * Module cold start in a fresh node process: import + first listFunctions, timed inside it. With
 * `warmUp`, warmUpCode(language) runs first and the process idles 300 ms (as a server would
 * between start-up and an agent's first call); then only the listFunctions call is timed.
 */
function moduleColdMs(file: string, language: string, warmUp = false, dist = thisDist): number {
  const warmUpModule = join(dist, 'src', 'code', 'warm-up.js');
  const codeModule = join(dist, 'src', 'code', 'index.js');
  const script =
    (warmUp
      ? `await (await ` +
        `import(${JSON.stringify(warmUpModule)})).warmUpCode([${JSON.stringify(language)}]); ` +
        `await new Promise((resolve) => setTimeout(resolve, 300));`
      : '') +
    `const t0 = performance.now(); const code = await import(${JSON.stringify(codeModule)});` +
    `const text = (await import('node:fs')).readFileSync(${JSON.stringify(file)}, 'utf8');` +
    `await code.listFunctions(text, ${JSON.stringify(language)}); ` +
    `process.stdout.write(String(performance.now() - t0));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

/**
 * Where a fresh process's first call goes: the same steps as listFunctions, timed one by one in a
 * fresh node process (src/code's internal modules, so the phases can be told apart). `matches`
 * runs the definitions query once more on the same tree afterwards: a second run, so it shows
 * the query's share of `definitions` only roughly (its code is warm by then).
 */
function moduleColdPhases(file: string, language: string, dist = thisDist): Phases {
  const dir = join(dist, 'src', 'code');
  const script = `
    const t0 = performance.now();
    const { loadGrammar, withTree } = await import(${JSON.stringify(join(dir, 'grammar.js'))});
    const { findDefinitions, MAX_TREE_DEPTH } = await import(${JSON.stringify(join(dir, 'definitions.js'))});
    const { languageByName } = await import(${JSON.stringify(join(dir, 'languages.js'))});
    const text = (await import('node:fs')).readFileSync(${JSON.stringify(file)}, 'utf8');
    const t1 = performance.now();
    const info = languageByName(${JSON.stringify(language)});
    await loadGrammar(info);
    const t2 = performance.now();
    let t3 = 0, t4 = 0, t5 = 0;
    await withTree(text, info, (tree, grammar) => {
      t3 = performance.now();
      findDefinitions(tree, grammar, info, text);
      t4 = performance.now();
      grammar.definitionsQuery.matches(tree.rootNode, { maxStartDepth: MAX_TREE_DEPTH });
      t5 = performance.now();
    });
    process.stdout.write(JSON.stringify({ import: t1 - t0, load: t2 - t1, parse: t3 - t2, definitions: t4 - t3, matches: t5 - t4 }));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

interface Phases {
  import: number;
  load: number;
  parse: number;
  definitions: number;
  matches: number;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

/** This build's and the baseline's fresh-process first call and phases on `file`, processes interleaved (medians of
 * `rounds`). */
function coldBesideBaseline(file: string, language: string, rounds: number): string {
  const runs: Record<'this' | 'baseline', { cold: number[]; phases: Phases[] }> = {
    this: { cold: [], phases: [] },
    baseline: { cold: [], phases: [] },
  };
  for (let round = 0; round < rounds; round += 1) {
    for (const [label, dist] of [
      ['this', thisDist],
      ['baseline', baselineDist!],
    ] as const) {
      runs[label].cold.push(moduleColdMs(file, language, false, dist));
      runs[label].phases.push(moduleColdPhases(file, language, dist));
    }
  }
  const line = (label: 'this' | 'baseline'): string => {
    const { cold, phases } = runs[label];
    // Median, and in brackets the fastest run: the least disturbed by other load on the machine.
    const phase = (key: keyof Phases): string => {
      const samples = phases.map((entry) => entry[key]);
      return `${fmt(median(samples))} (${fmt(Math.min(...samples))})`;
    };
    return (
      `  ${label === 'this' ? 'this build' : 'baseline  '}: first call ${fmt(median(cold))} ` +
      `(${fmt(Math.min(...cold))}) ms; phases: import ` +
      `${phase('import')}, ` +
      `runtime+grammar+query ${phase('load')}, parse ${phase('parse')}, ` +
      `definitions ${phase('definitions')} (query's matches again ` +
      `${phase('matches')})\n`
    );
  };
  return (
    `same file, fresh processes interleaved, medians (fastest) of ${rounds} ` +
    `(baseline ${baselineDist}):\n${line('this')}${line('baseline')}`
  );
}

interface McpSession {
  client: Client;
  close(): Promise<void>;
}

async function spawnServer(): Promise<{ session: McpSession; connectMs: number; hasCodeTools: boolean }> {
  const started = performance.now();
  const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], stderr: 'ignore' });
  const client = new Client({ name: 'faultline-bench', version: '0.0.0' });
  await client.connect(transport);
  const connectMs = performance.now() - started;
  const { tools } = await client.listTools();
  return {
    session: { client, close: () => client.close() },
    connectMs,
    hasCodeTools: tools.some((tool) => tool.name === 'fault_list_function_names'),
  };
}

async function callOk(client: Client, name: string, args: Record<string, string>): Promise<void> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
}

const fmt = (ms: number | undefined): string => (ms === undefined ? '-' : ms.toFixed(2));

/** One row of the table: `source` written to a file named `label.ext`, measured every way. */
async function measure(
  scratch: string,
  label: string,
  language: string,
  ext: string,
  source: string,
  pick?: string,
): Promise<string[]> {
  const file = join(scratch, `${label.replace(/[^\w.-]/g, '_')}.${ext}`);
  writeFileSync(file, source);
  const info = languageByName(language)!;
  const listed = await listFunctions(source, info);
  const func =
    pick ??
    listed.definitions.find(
      (definition) => !listed.definitions.some((other) => other !== definition && other.name === definition.name),
    )?.qualifiedName;
  let current = source;
  const nextSource = (): void => void (current = fresh(source));
  const moduleList = await timeEach(() => listFunctions(current, info), nextSource);
  const moduleExtract = func ? await timeEach(() => extractFunction(current, info, func), nextSource) : undefined;
  const moduleListRepeated = await timeEach(() => listFunctions(source, info));
  let editing = source;
  const nextEdit = (): void => void (editing = edited(editing));
  const moduleListEdited = await timeEach(() => listFunctions(editing, info, { document: file }), nextEdit);
  // The baseline build beside this one: blocks interleaved (this, baseline, this, baseline), best mean of each.
  let baselineList: number | undefined;
  let baselineExtract: number | undefined;
  let besideList = moduleList;
  let besideExtract = moduleExtract;
  if (baselineCode) {
    const base = baselineCode;
    baselineList = await timeEach(() => base.listFunctions(current, language), nextSource);
    besideList = Math.min(besideList, await timeEach(() => listFunctions(current, info), nextSource));
    baselineList = Math.min(baselineList, await timeEach(() => base.listFunctions(current, language), nextSource));
    if (func) {
      baselineExtract = await timeEach(() => base.extractFunction(current, language, func), nextSource);
      besideExtract = Math.min(
        besideExtract ?? Infinity,
        await timeEach(() => extractFunction(current, info, func), nextSource),
      );
      baselineExtract = Math.min(
        baselineExtract,
        await timeEach(() => base.extractFunction(current, language, func), nextSource),
      );
    }
  }
  const coldModule = moduleColdMs(file, language);
  const warmedModule = moduleColdMs(file, language, true);

  const { session, connectMs, hasCodeTools } = await spawnServer();
  let coldMcp: number | undefined;
  let mcpList: number | undefined;
  let mcpExtract: number | undefined;
  let mcpListRepeated: number | undefined;
  let mcpListEdited: number | undefined;
  try {
    if (hasCodeTools) {
      const started = performance.now();
      await callOk(session.client, 'fault_list_function_names', { file });
      coldMcp = performance.now() - started;
      // A file the server has not seen: a new path each call, so no kept tree can help.
      let newFile = file;
      const writeNewFile = (): void => {
        newFile = join(scratch, `new-${++variant}.${ext}`);
        writeFileSync(newFile, fresh(source));
      };
      mcpList = await timeEach(
        () => callOk(session.client, 'fault_list_function_names', { file: newFile }),
        writeNewFile,
      );
      if (func)
        mcpExtract = await timeEach(
          () => callOk(session.client, 'fault_extract_code_block', { file: newFile, func }),
          writeNewFile,
        );
      writeFileSync(file, source);
      mcpListRepeated = await timeEach(() => callOk(session.client, 'fault_list_function_names', { file }));
      // The same file edited between calls, as an agent does: re-parsed from its previous tree.
      let editingFile = source;
      const editFile = (): void => writeFileSync(file, (editingFile = edited(editingFile)));
      mcpListEdited = await timeEach(() => callOk(session.client, 'fault_list_function_names', { file }), editFile);
    }
  } finally {
    await session.close();
  }
  return [
    label,
    String(source.split('\n').length - 1),
    String(listed.definitions.length),
    fmt(moduleList),
    fmt(moduleExtract),
    fmt(mcpList),
    fmt(mcpExtract),
    fmt(moduleListRepeated),
    fmt(mcpListRepeated),
    fmt(moduleListEdited),
    fmt(mcpListEdited),
    mcpList === undefined ? '-' : (mcpList / moduleList).toFixed(2),
    fmt(coldModule),
    fmt(warmedModule),
    fmt(coldMcp),
    fmt(connectMs),
    ...(baselineCode ? [fmt(besideList), fmt(baselineList), fmt(besideExtract), fmt(baselineExtract)] : []),
  ];
}

/** Real files present on every machine with this repo installed, measured beside the generated ones. */
const REAL_FILES = [
  {
    label: 'zod schemas.ts',
    language: 'typescript',
    ext: 'ts',
    path: join(repoRoot, 'node_modules', 'zod', 'src', 'v4', 'classic', 'schemas.ts'),
  },
];

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'faultline-bench-code-'));
  const rows: string[][] = [];
  try {
    for (const language of Object.keys(UNITS).filter((label) => rowFilter.test(label))) {
      const spec = UNITS[language]!;
      rows.push(await measure(scratch, language, language, spec.ext, generate(language).source, spec.pick));
    }
    for (const real of REAL_FILES) {
      if (existsSync(real.path) && rowFilter.test(real.label))
        rows.push(await measure(scratch, real.label, real.language, real.ext, readFileSync(real.path, 'utf8')));
    }
    // The cold-start target is for large files: a 20,000-line TypeScript file, first call only.
    const big = generate('typescript', 20_000).source;
    const bigFile = join(scratch, 'big.ts');
    writeFileSync(bigFile, big);
    const { session } = await spawnServer();
    try {
      const started = performance.now();
      await callOk(session.client, 'fault_list_function_names', { file: bigFile });
      const coldMcp = performance.now() - started;
      const phases = moduleColdPhases(bigFile, 'typescript');
      process.stdout.write(
        `20,000-line TypeScript file, first call in a fresh process: ` +
          `module ${fmt(moduleColdMs(bigFile, 'typescript'))} ms, MCP ${fmt(coldMcp)} ` +
          `ms (target ≤ 300 ms); ` +
          `module after warmUpCode and 300 ms idle ${fmt(moduleColdMs(bigFile, 'typescript', true))} ms; ` +
          `phases in another fresh process: import ${fmt(phases.import)}, ` +
          `runtime+grammar+query ${fmt(phases.load)}, parse ` +
          `${fmt(phases.parse)}, ` +
          `definitions ${fmt(phases.definitions)} ms (of which the query's ` +
          `matches ${fmt(phases.matches)} ms, measured again on the same ` +
          `tree after)\n`,
      );
      if (baselineDist) process.stdout.write(coldBesideBaseline(bigFile, 'typescript', 7));
    } finally {
      await session.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const header = [
    'file',
    'lines',
    'definitions',
    'module list ms',
    'module extract ms',
    'MCP list ms',
    'MCP extract ms',
    'module list again ms',
    'MCP list again ms',
    'module list edited ms',
    'MCP list edited ms',
    'MCP/module list',
    'cold module ms',
    'module 1st call after warm-up ms',
    'cold MCP 1st call ms',
    'MCP spawn+init ms',
    ...(baselineCode ? ['list ms (beside)', 'baseline list ms', 'extract ms (beside)', 'baseline extract ms'] : []),
  ];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]): string => cells.map((cell, column) => cell.padStart(widths[column]!)).join('  ');
  process.stdout.write(`code tools, ${iterations} warm calls each (mean), node ${process.version}\n`);
  process.stdout.write(`${line(header)}\n${rows.map(line).join('\n')}\n`);
  process.stdout.write(
    'targets: warm list/extract ≤ 50 ms on files up to 3,000 lines. ' +
      '"list"/"extract": a file never seen (a new path each ' +
      'MCP call); "again": the same source, answered from the ' +
      'definition cache; "edited": one line added to the same file ' +
      'before ' +
      'each call, re-parsed incrementally from its previous tree\n',
  );
}

await main();
