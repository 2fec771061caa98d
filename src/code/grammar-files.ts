/**
 * Where the vendored grammars are, and what identifies a language's grammar and query, without
 * loading tree-sitter: a process that answers from the definition store (definition-store.ts)
 * never pays for the runtime.
 *
 * grammars/manifest.json records, per grammar package, the sha256 of each .wasm (written by
 * scripts/refresh-grammars.mjs and checked against the files by test/code.test.ts);
 * grammars/<dir>/definitions.scm is our own query.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageInfo } from './languages.js';

/**
 * The grammars/ directory. Searched upwards from this module because the compiled file sits at a
 * different depth (dist/src/code) than the source (src/code), and an installed package keeps
 * grammars/ at its root.
 */
export const grammarsDirectory: string = findGrammarsDirectory();

function findGrammarsDirectory(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'grammars');
    if (existsSync(join(candidate, 'manifest.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('faultline: the grammars/ directory (with manifest.json) was not found');
    dir = parent;
  }
}

interface Manifest {
  grammars?: { dir?: unknown; package?: unknown; version?: unknown; files?: { name?: unknown; sha256?: unknown }[] }[];
}

/**
 * A fingerprint of everything that decides a language's definitions: its grammar (the package,
 * version and sha256 the manifest records, and the .wasm's size and mtime, so a file swapped by
 * hand without the manifest still changes it), its definitions query's text, the web-tree-sitter
 * runtime's version, and `codeVersion` (src/code's own modules, see sourceCodeVersion). Two
 * processes agree on it exactly when they would list the same source the same way.
 */
export function grammarFingerprint(
  info: LanguageInfo,
  codeVersion: string,
  directory: string = grammarsDirectory,
): string {
  const manifest = JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8')) as Manifest;
  const entry = manifest.grammars?.find((grammar) => grammar.dir === info.grammarDir);
  const file = entry?.files?.find((candidate) => candidate.name === info.wasmFile);
  const wasm = statSync(join(directory, info.grammarDir, info.wasmFile));
  const query = readFileSync(join(directory, info.grammarDir, 'definitions.scm'), 'utf8');
  return createHash('sha256')
    .update(
      JSON.stringify([
        info.name,
        entry?.package,
        entry?.version,
        file?.sha256,
        wasm.size,
        wasm.mtimeMs,
        runtimeVersion(),
        codeVersion,
      ]),
    )
    .update(query)
    .digest('hex');
}

let runtime: string | undefined;

/** web-tree-sitter's version, from its package.json (its exports map hides it from import). */
function runtimeVersion(): string {
  if (runtime === undefined) {
    let dir = dirname(fileURLToPath(import.meta.resolve('web-tree-sitter')));
    while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
    runtime = String((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version);
  }
  return runtime;
}

let ownCode: string | undefined;

/**
 * A hash of src/code's compiled modules (this directory's .js files): the extraction rules live
 * in them, so a build that changes any of them gets a new fingerprint. Hashing the whole
 * directory rather than a hand-kept list means a module added later cannot be forgotten; a change
 * that does not alter definitions only costs the store its entries.
 */
export function sourceCodeVersion(): string {
  if (ownCode === undefined) {
    const dir = dirname(fileURLToPath(import.meta.url));
    const hash = createHash('sha256');
    for (const name of readdirSync(dir)
      .filter((file) => file.endsWith('.js'))
      .sort())
      hash
        .update(name)
        .update('\0')
        .update(readFileSync(join(dir, name)));
    ownCode = hash.digest('hex');
  }
  return ownCode;
}
