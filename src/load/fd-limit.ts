/**
 * How many file descriptors this process may open (the soft RLIMIT_NOFILE), so a run that would
 * need more sockets than that is refused before it starts instead of failing with EMFILE halfway
 * and blaming the target for "resets". Node has no getrlimit; Linux shows it in /proc/self/limits.
 * Elsewhere the answer is undefined and only the generator's own cap applies.
 */
import { readFileSync } from 'node:fs';

let cached: number | null | undefined;

export function openFileLimit(): number | undefined {
  if (cached === undefined) {
    try {
      const line = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'));
      cached = !line ? null : line[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(line[1]);
    } catch {
      cached = null;
    }
  }
  return cached ?? undefined;
}

/** Descriptors kept free for everything else the process does (files, the MCP transport, logs). */
export const RESERVED_FDS = 256;
