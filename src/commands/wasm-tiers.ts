/**
 * V8's WebAssembly tiers for commands that parse a little and exit (`faultline code list|extract`,
 * `faultline index` of a small tree): Liftoff, V8's baseline compiler, only. With tier-up, TurboFan
 * recompiles a grammar's hot, huge functions (lexer, parse tables) in background threads, which such a
 * process never gains from and whose exit waits for them: `code list` of a 26-line Swift file cost
 * 7.5 s of CPU, 0.46 s on Liftoff (docs/code.md). The flag is process-wide and holds for modules
 * compiled after it, the index's worker threads included, so it is set before the first grammar loads.
 * The MCP server keeps tier-up: its listing thread's warm listings, and its index runs over big trees,
 * need TurboFan's code.
 */
import { setFlagsFromString } from 'node:v8';

export function compileWasmForOneShot(): void {
  setFlagsFromString('--liftoff-only');
}

/**
 * V8's WebAssembly tiers for a long-lived host (the MCP server), set before its listing thread compiles anything:
 * tier-up kept, without TurboFan's loop unrolling and peeling. TurboFan recompiling tree-sitter's runtime and the
 * grammars' lexers is most of the listing thread's warm-up (~0.5 of its ~0.75 s of CPU, on V8's background
 * threads, beside the main thread's start); unrolling and peeling copy every loop of those huge functions. Without
 * them the warm-up's background CPU was 358–405 ms against 450–499 (3 interleaved runs each, load 11), and the
 * steady parse and query of jquery.js (79–102 + 24–33 ms) and zod's schemas.ts (31–49 + 13–16) were those of the
 * default (94–106 + 26–36, 36–48 + 10–18) within noise.
 */
export function compileWasmForServer(): void {
  setFlagsFromString('--no-wasm-loop-unrolling');
  setFlagsFromString('--no-wasm-loop-peeling');
}

/**
 * Up to this much walked source, `faultline index` runs on Liftoff only. Measured (CPU of the whole
 * process, load ~11): a 2 KB tree in six languages 1.8 s with tier-up, 0.7 s without; this repository's
 * src/ (2.6 MB, 400 files) 4.7 and 4.7 s; above that, TurboFan's code pays for itself.
 */
export const ONE_SHOT_INDEX_BYTES = 1024 * 1024;
