/** The code fixtures (test/fixtures/code) read through src/code, for the code test suites. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { extractFunction, listFunctions, requireLanguageForPath, type ExtractedFunction } from '../../src/code/index.js';
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
