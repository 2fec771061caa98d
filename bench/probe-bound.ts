/**
 * The probe's overall bound, measured: against servers that hang (test/fixtures/probe/
 * hang-server.mjs: HANG=all answers nothing, HANG=calls never answers a tool call; both ignore
 * SIGTERM and the end of stdin and start a child that ignores SIGTERM too) and one that leaves a
 * setsid() daemon holding its stdout (setsid-server.mjs, HANG_CALLS=1), the run's wall time next
 * to its bound, side by side for several bounds in one run: the overshoot (ms), the ratio
 * wall / bound, and how long after runProbe returned anything of the server still ran (the
 * daemon lived 600 s before the tree was tracked). Before the bound covered stopping the server, a
 * 3 s bound took 6.1 s (HANG=all) and 9.5 s (HANG=calls).
 *
 * Targets (exit 1 when one is missed): the overshoot at most 1000 ms, and nothing of the server
 * running more than 1000 ms after runProbe returned.
 *
 * Run: npx tsc -p . && node dist/bench/probe-bound.js
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTaxonomy, runProbe } from '../src/probe/index.js';
import { ProgramPolicy } from '../src/consent/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const taxonomy = await loadTaxonomy();

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Milliseconds after `since` until none of `pids` runs (-1: still running after 5 s). */
async function lingering(pids: number[], since: number): Promise<number> {
  while (pids.some(running)) {
    if (Date.now() - since > 5000) return -1;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Date.now() - since;
}

const TARGET_MS = 1000;
const missed: string[] = [];
const servers: Array<[string, string, Record<string, string>]> = [
  ['HANG=all', 'hang-server.mjs', { HANG: 'all' }],
  ['HANG=calls', 'hang-server.mjs', { HANG: 'calls' }],
  ['setsid daemon', 'setsid-server.mjs', { HANG_CALLS: '1' }],
];
console.log('server          bound ms  wall ms  overshoot ms  wall/bound  ran on after ms');
for (const [name, file, env] of servers) {
  for (const bound of [1000, 2000, 4000]) {
    const dir = await mkdtemp(join(tmpdir(), 'probe-bound-'));
    const pidFile = join(dir, 'pids');
    const started = Date.now();
    await runProbe(
      {
        kind: 'stdio',
        command: process.execPath,
        args: [`${root}test/fixtures/probe/${file}`],
        env: { ...env, PIDS: pidFile },
      },
      taxonomy,
      {
        programs: ProgramPolicy.owner(),
        cases: 8,
        seed: 1,
        allowWrites: false,
        callTimeoutMs: 60_000,
        overallTimeoutMs: bound,
      },
    );
    const returned = Date.now();
    const wall = returned - started;
    const pids = (await readFile(pidFile, 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
    const after = await lingering(pids, returned);
    await rm(dir, { recursive: true, force: true });
    if (wall - bound > TARGET_MS) missed.push(`${name} at ${bound} ms: overshoot ${wall - bound} ms`);
    if (after < 0 || after > TARGET_MS)
      missed.push(
        `${name} at ${bound} ms: the server ran on ${after < 0 ? 'over 5 s' : `${after} ms`} after the return`,
      );
    console.log(
      `${name.padEnd(15)} ${String(bound).padStart(8)}  ${String(wall).padStart(7)} ` +
        ` ${String(wall - bound).padStart(12)}  ${(wall / bound).toFixed(3).padStart(10)} ` +
        ` ${String(after).padStart(15)}`,
    );
  }
}
if (missed.length > 0) {
  console.log(`missed (target ${TARGET_MS} ms): ${missed.join('; ')}`);
  process.exitCode = 1;
}
