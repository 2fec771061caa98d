/**
 * Loaded first in every test file's process (helpers/isolate.ts imports it) and, through
 * NODE_OPTIONS=--require, in every Node.js process those start and their children: V8 compiles
 * WebAssembly with its baseline compiler (Liftoff) only, never optimizing it with TurboFan.
 *
 * Why: the suite's time on 2 cores is its CPU, and its hundreds of short processes each compiled
 * the tree-sitter grammars they met with TurboFan, on background threads, for parses of a few
 * small files: `faultline index` of test/fixtures/index/tree took ~1.9 s of CPU, 0.6-0.8 s with
 * Liftoff only, with the same index and the same search results. The wasm means the same under
 * either compiler, so every assertion stands; what a tier costs and earns is the benchmarks'
 * subject (bench/ runs without this). CommonJS, so that a child that never loads an ES module
 * (the `faultline` launcher, cli-launch.cts) is not made to start the ES module loader for it.
 */
import v8 = require('node:v8');

v8.setFlagsFromString('--liftoff-only');

/** The NODE_OPTIONS entry that loads this file in the processes the suite starts (helpers/isolate.ts adds it). */
export const wasmTiersOption = `--require ${JSON.stringify(__filename)}`;

/** `env` without that entry: for a test of what V8 does by default in a process of ours. */
export function withoutWasmTiers(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_OPTIONS, ...rest } = env;
  const options = (NODE_OPTIONS ?? '').replace(wasmTiersOption, '').trim();
  return options ? { ...rest, NODE_OPTIONS: options } : rest;
}
