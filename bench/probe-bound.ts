/**
 * The probe's overall bound, measured: against servers that hang (test/fixtures/probe/
 * hang-server.mjs: HANG=all answers nothing, HANG=calls never answers a tool call; both ignore
 * SIGTERM and the end of stdin and start a child that ignores SIGTERM too), the run's wall time
 * next to its bound, side by side for several bounds in one run: the overshoot (ms) and the
 * ratio wall / bound. Before the bound covered stopping the server, a 3 s bound took 6.1 s
 * (HANG=all) and 9.5 s (HANG=calls).
 *
 * Run: npx tsc -p . && node dist/bench/probe-bound.js
 */
import { fileURLToPath } from 'node:url';
import { loadTaxonomy, runProbe } from '../src/probe/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const taxonomy = await loadTaxonomy();
console.log('server        bound ms  wall ms  overshoot ms  wall/bound');
for (const hang of ['all', 'calls']) {
  for (const bound of [1000, 2000, 4000]) {
    const started = Date.now();
    await runProbe({ kind: 'stdio', command: process.execPath, args: [`${root}test/fixtures/probe/hang-server.mjs`], env: { HANG: hang } }, taxonomy, {
      cases: 8,
      seed: 1,
      allowWrites: false,
      callTimeoutMs: 60_000,
      overallTimeoutMs: bound,
    });
    const wall = Date.now() - started;
    console.log(`HANG=${hang.padEnd(8)} ${String(bound).padStart(8)}  ${String(wall).padStart(7)}  ${String(wall - bound).padStart(12)}  ${(wall / bound).toFixed(3).padStart(10)}`);
  }
}
