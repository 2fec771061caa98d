/** The code fixtures (test/fixtures/code) read through src/code, for the code test suites. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  extractFunction,
  listFunctions,
  requireLanguageForPath,
  type ExtractedFunction,
} from '../../src/code/index.js';
import { fixturePath } from './repo.js';

export const fixture = (name: string): string => readFileSync(fixturePath('code', name), 'utf8');

/** `kind qualifiedName start-end` for every function-like definition of a fixture, which must parse cleanly. */
export async function functionsOf(name: string): Promise<string[]> {
  const list = await listFunctions(fixture(name), requireLanguageForPath(name));
  assert.deepEqual(list.syntaxErrors, { count: 0, firstLines: [] }, `${name} should parse cleanly`);
  return list.definitions.map((d) => `${d.kind} ${d.qualifiedName} ${d.startLine}-${d.endLine}`);
}

export function extract(name: string, func: string): Promise<ExtractedFunction> {
  return extractFunction(fixture(name), requireLanguageForPath(name), func);
}

/** A 3,000-line TypeScript file: classes with methods, functions, arrow functions. */
export function generatedTypeScript(): string {
  let source = "import fs from 'node:fs';\n\n";
  for (let i = 0; source.split('\n').length < 3000; i += 1) {
    source +=
      `export function func_${i}(a: number, b: number): number {\n  let total = a + b;\n  for (let x = 0; x < total; x++) total += x;\n  return total;\n}\n\n` +
      `const arrow_${i} = (n: number): number => n * 2;\n\nclass Service${i}<T> {\n  constructor(private readonly name: T) {}\n\n  run(n: number): number {\n    return arrow_${i}(n);\n  }\n}\n\n`;
  }
  return source;
}
