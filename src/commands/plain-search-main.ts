/**
 * The entry of the plain search's bundle: the build (scripts/search-bundle.ts) bundles this module
 * and everything a plain search loads, better-sqlite3's JavaScript included, into one CommonJS
 * file that cli-launch.cts compiles with V8's code cache. A fresh `faultline search` then skips
 * the ES module loader, resolving each module, compiling what the cache holds and the stream
 * modules behind process.stdout; what it runs is the same search-action.ts as the ES path's.
 */
import { writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import { makeConfig, type Config } from '../config.js';
import { asksForProvider } from '../search/embedder.js';
import { wantsQdrant } from '../search/open.js';
import { useDriver } from '../search/sqlite-store.js';
import { plainSearch } from './plain-search.js';
import { runSearchCommand } from './search-action.js';

/**
 * Runs `argv` when it is a plain search (plain-search.ts) on the local index with the local
 * embedder, and says whether it did: an embedding provider or Qdrant means loading their ES
 * modules with import(), which Node 20 does not offer to a script compiled with a code cache, so
 * the launcher leaves those to the ES entry (it was their cost anyway). `addon` is better-sqlite3's
 * compiled addon, which the launcher checked is the one this bundle was built with.
 */
export async function runPlainSearch(argv: readonly string[], addon: string): Promise<boolean> {
  const plain = plainSearch(argv);
  if (!plain) return false;
  let config: Config;
  try {
    config = makeConfig();
  } catch {
    return false; // the ES entry reports it as the search command does
  }
  if (asksForProvider(config.llm) || wantsQdrant(process.env)) return false;
  useDriver(Database, addon);
  await runSearchCommand(plain.query, plain, () => config, writeStdout);
  return true;
}

/**
 * Writes to descriptor 1 directly: process.stdout would load net and the stream modules (about
 * 13 M instructions) to print one string. A reader that went away ends the output quietly, as
 * cli.ts's EPIPE handler does; a non-blocking descriptor that is full is waited on.
 */
function writeStdout(text: string): void {
  const bytes = Buffer.from(text);
  for (let offset = 0; offset < bytes.length; ) {
    try {
      offset += writeSync(1, bytes, offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      if (code !== 'EAGAIN') throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}
