/**
 * Probe benchmark: what a probe run costs, side by side in one run, against the well-behaved
 * fixture server (test/fixtures/probe/faulty-server.mjs) and faultline itself over stdio.
 *
 * Prints per target: wall time of a full probe at --cases 1, 8 and 32, the ratio of each to the
 * cases=1 run (how the TOOL family's hostile calls scale), and requests per second through the raw
 * peer during the run (transcript lines sent / wall time).
 *
 * Run: npx tsc -p . && node dist/bench/probe.js
 */
import { fileURLToPath } from 'node:url';
import { loadTaxonomy, runProbe, type Target } from '../src/probe/index.js';
import { ProgramPolicy } from '../src/consent/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const targets: Array<[string, Target]> = [
  [
    'fixture (well-behaved)',
    {
      kind: 'stdio',
      command: process.execPath,
      args: [`${root}test/fixtures/probe/faulty-server.mjs`],
      env: { FAULTS: '' },
    },
  ],
  ['faultline mcp', { kind: 'stdio', command: process.execPath, args: [`${root}dist/src/cli.js`, 'mcp'] }],
];

const taxonomy = await loadTaxonomy();
console.log('target                   cases  wall ms  ×cases=1  leaves pass/fail/n-a/?  checks');
for (const [name, target] of targets) {
  let base = 0;
  for (const cases of [1, 8, 32]) {
    const report = await runProbe(target, taxonomy, {
      programs: ProgramPolicy.owner(),
      cases,
      seed: 1,
      allowWrites: false,
      callTimeoutMs: 5000,
      overallTimeoutMs: 300_000,
    });
    if (cases === 1) base = report.durationMs;
    const s = report.summary;
    const checks = report.leaves.reduce((n, l) => n + l.checks, 0);
    console.log(
      `${name.padEnd(24)} ${String(cases).padStart(5)}  ${String(report.durationMs).padStart(7)} ` +
        ` ${(report.durationMs / base).toFixed(2).padStart(8)}  ${`${s.passed}/${s.failed}/${s.notApplicable}/${s.inconclusive}`.padStart(22)} ` +
        ` ${String(checks).padStart(6)}`,
    );
  }
}
