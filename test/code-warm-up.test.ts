/**
 * warmUpCode: it readies the grammars a first call needs (so that first call, in a fresh process,
 * is faster by a wide margin), keeps no trees, leaves answers unchanged, and never fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keptTreeCount } from '../src/code/grammar.js';
import { isFunctionKind, listDefinitions, listFunctions, supportedLanguages } from '../src/code/index.js';
import { warmUpCode, warmUpSample } from '../src/code/warm-up.js';
import { connectStdio, textOf } from './helpers/mcp.js';

const codeDir = fileURLToPath(new URL('../src/code/', import.meta.url));

/** A 3,000-line TypeScript file: classes with methods, functions, arrow functions. */
function generatedTypeScript(): string {
  let source = "import fs from 'node:fs';\n\n";
  for (let i = 0; source.split('\n').length < 3000; i += 1) {
    source +=
      `export function func_${i}(a: number, b: number): number {\n  let total = a + b;\n  for (let x = 0; x < total; x++) total += x;\n  return total;\n}\n\n` +
      `const arrow_${i} = (n: number): number => n * 2;\n\nclass Service${i}<T> {\n  constructor(private readonly name: T) {}\n\n  run(n: number): number {\n    return arrow_${i}(n);\n  }\n}\n\n`;
  }
  return source;
}

test('warming up keeps no trees, skips unknown languages, never rejects, and changes no answer', async () => {
  const source = generatedTypeScript();
  const before = keptTreeCount();
  await warmUpCode(['typescript', 'python', 'go', 'no-such-language', 'c++']);
  await warmUpCode([]);
  assert.equal(keptTreeCount(), before);
  const listed = await listFunctions(source, 'typescript');
  assert.equal(listed.definitions.filter((definition) => definition.name === 'run').length, listed.definitions.filter((definition) => definition.name.startsWith('func_')).length);
  assert.equal(listed.syntaxErrors.count, 0);
});

test('every language has a warm-up sample that parses cleanly into functions and types', async () => {
  for (const info of supportedLanguages()) {
    const sample = warmUpSample(info);
    assert.ok(sample !== undefined && sample.split('\n').length >= 100, info.name);
    const listed = await listDefinitions(sample, info);
    assert.equal(listed.syntaxErrors.count, 0, `${info.name}: ${JSON.stringify(listed.syntaxErrors)}`);
    assert.ok(listed.definitions.some((definition) => isFunctionKind(definition.kind)), `${info.name}: functions`);
    assert.ok(listed.definitions.some((definition) => !isFunctionKind(definition.kind)), `${info.name}: types`);
  }
});

/** The first listFunctions in a fresh node process, in ms, after a warm-up and a short idle spell or not. */
function firstCallMs(warm: boolean, source: string): number {
  const script = `
    const { listFunctions } = await import(${JSON.stringify(`${codeDir}index.js`)});
    const { warmUpCode } = await import(${JSON.stringify(`${codeDir}warm-up.js`)});
    const source = ${JSON.stringify(source)};
    if (${warm}) { await warmUpCode(['typescript']); await new Promise((resolve) => setTimeout(resolve, 200)); }
    const started = performance.now();
    await listFunctions(source, 'typescript');
    process.stdout.write(String(performance.now() - started));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

test('after a warm-up, the first listing of a 3,000-line file in a fresh process is much faster', (t) => {
  const source = generatedTypeScript();
  const cold: number[] = [];
  const warmed: number[] = [];
  // Interleaved, so load on the machine affects both alike; measured ~4x, asserted 1.25x.
  for (let round = 0; round < 3; round += 1) {
    cold.push(firstCallMs(false, source));
    warmed.push(firstCallMs(true, source));
  }
  t.diagnostic(`first call: warmed ${warmed.map((ms) => ms.toFixed(0)).join('/')} ms, cold ${cold.map((ms) => ms.toFixed(0)).join('/')} ms`);
  assert.ok(median(warmed) < median(cold) * 0.8, `warmed ${warmed.map((ms) => ms.toFixed(0)).join('/')} ms vs cold ${cold.map((ms) => ms.toFixed(0)).join('/')} ms`);
});

/** The first fault_list_function_names call of a spawned `faultline mcp`, in ms, after `idleMs` of idle time. */
async function firstMcpCallMs(file: string, idleMs: number): Promise<number> {
  const session = await connectStdio();
  try {
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const started = performance.now();
    const result = await session.client.callTool({ name: 'fault_list_function_names', arguments: { file } });
    assert.ok(!result.isError, textOf(result));
    return performance.now() - started;
  } finally {
    await session.close();
  }
}

test('faultline mcp spends its idle time after start-up warming the code tools: a later first call is much faster', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-warm-'));
  try {
    const file = join(dir, 'generated.ts');
    writeFileSync(file, generatedTypeScript());
    const immediate: number[] = [];
    const afterIdle: number[] = [];
    // Interleaved; the warm-up starts 1 s after start-up. Measured ~4x faster, asserted 1.25x.
    for (let round = 0; round < 2; round += 1) {
      immediate.push(await firstMcpCallMs(file, 0));
      afterIdle.push(await firstMcpCallMs(file, 2500));
    }
    const shown = `after idle ${afterIdle.map((ms) => ms.toFixed(0)).join('/')} ms, at once ${immediate.map((ms) => ms.toFixed(0)).join('/')} ms`;
    t.diagnostic(shown);
    assert.ok(Math.min(...afterIdle) < Math.min(...immediate) * 0.8, shown);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
