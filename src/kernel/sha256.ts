/**
 * sha256 with node:crypto loaded on first use: loading it costs ~5 ms (~15 M instructions) of a
 * start-up, which `faultline mcp` (tools/tool-list.ts, when the tool list's stamps match) and a
 * plain search (search/location.ts, when the index's marker names the tree) skip.
 */
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';

let crypto: typeof Crypto | undefined;

export function createSha256(): Crypto.Hash {
  crypto ??= createRequire(import.meta.url)('node:crypto') as typeof Crypto;
  return crypto.createHash('sha256');
}
