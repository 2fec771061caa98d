/**
 * Loaded before every test file (`node --test --import`): the files' own processes, and every
 * CLI they spawn, keep their data (the code tools' definition store, indexes, run records) in a
 * directory of this run instead of the user's ~/.local/share/faultline. A test that needs a data
 * directory of its own still sets FAULTLINE_DATA_DIR, which comes first.
 *
 * The MCP servers the files spawn start without the code listing thread
 * (FAULTLINE_LISTING_THREAD=off): its warm-up costs ~1 s of CPU per server, paid by every one of
 * the suite's many servers that never lists code, and on 2 cores the suite's time is its CPU. The
 * files about the thread, and those that list code through a spawned server, turn it back on in
 * their own process.env (`process.env.FAULTLINE_LISTING_THREAD = 'on'`), so it stays tested.
 */
import { wasmTiersOption } from './wasm-tiers.cjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

if (!process.env.FAULTLINE_TEST_DATA_HOME) {
  const home = mkdtempSync(join(tmpdir(), 'faultline-test-data-'));
  process.env.FAULTLINE_TEST_DATA_HOME = home;
  process.env.XDG_DATA_HOME = home;
  // It would come first: a developer's own setting must not receive the run's data either.
  delete process.env.FAULTLINE_DATA_DIR;
  process.on('exit', () => rmSync(home, { recursive: true, force: true }));
}
process.env.FAULTLINE_LISTING_THREAD ??= 'off';
// WebAssembly on V8's baseline compiler only, in this process (the import above) and in every
// Node.js process it starts that inherits its environment (helpers/wasm-tiers.cts says why).
if (!(process.env.NODE_OPTIONS ?? '').includes(wasmTiersOption))
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${wasmTiersOption}`.trim();
