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
 * Up to this much walked source, `faultline index` runs on Liftoff only. Measured (CPU of the whole
 * process, load ~11): a 2 KB tree in six languages 1.8 s with tier-up, 0.7 s without; this repository's
 * src/ (2.6 MB, 400 files) 4.7 and 4.7 s; above that, TurboFan's code pays for itself.
 */
export const ONE_SHOT_INDEX_BYTES = 1024 * 1024;
