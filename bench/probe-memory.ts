/**
 * What a hostile server's output costs the probe: peak resident memory (RSS) and wall time of a
 * `faultline probe` process whose target answers its first tool call with a 25 MB line, a 100 MB
 * line, a 50 MB HTTP body, or an SSE stream that never ends (test/fixtures/probe/
 * hostile-output-server.mjs), and what the report says about that call. With `--before DIR` (a
 * build of an earlier commit: DIR/dist/src/cli.js), each case runs on both builds, alternating,
 * side by side in one run.
 *
 * Target (exit 1 when missed): this build's peak RSS at most 200 MB in every case (the lines
 * and bodies themselves are 25 to 100 MB; the bounds keep at most 16 MiB of one message).
 *
 * Run: npx tsc -p . && node dist/bench/probe-memory.js [--before /tmp/before] [--rounds N]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFixtureServer } from '../test/helpers/fixture-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = `${root}test/fixtures/probe/hostile-output-server.mjs`;
const rssProbe = fileURLToPath(new URL('./peak-rss-probe.js', import.meta.url));
const argv = process.argv.slice(2);
const before = argv.includes('--before') ? argv[argv.indexOf('--before') + 1] : undefined;
const rounds = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : 1;

interface Case {
  name: string;
  env: Record<string, string>;
  http: boolean;
}

const cases: Case[] = [
  { name: '25 MB line', env: { MODE: 'big', SIZE_MB: '25' }, http: false },
  { name: '100 MB line', env: { MODE: 'big', SIZE_MB: '100' }, http: false },
  { name: '50 MB HTTP body', env: { MODE: 'big', SIZE_MB: '50' }, http: true },
  { name: 'SSE flood', env: { MODE: 'flood' }, http: true },
];

interface Outcome {
  rssMb: number;
  wallMs: number;
  code: number | null;
  said: string;
}

async function measure(cli: string, c: Case): Promise<Outcome> {
  const dir = await mkdtemp(join(tmpdir(), 'probe-memory-'));
  const server = c.http ? await startFixtureServer(fixture, c.env) : undefined;
  try {
    const target = server ? ['--url', server.url] : ['--', process.execPath, fixture];
    const args = [
      '--import',
      rssProbe,
      cli,
      'probe',
      '--quiet',
      '--family',
      'TOOL',
      '--family',
      'PROTO',
      '--cases',
      '1',
      '--call-timeout',
      '5000',
      '--timeout',
      '120000',
      '--json',
      join(dir, 'r.json'),
      ...target,
    ];
    const started = Date.now();
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, args, {
        env: { ...process.env, ...c.env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.on('close', (exit) => resolve({ code: exit, stderr: err }));
    });
    const wallMs = Date.now() - started;
    const rssKb = Number(/faultline-peak-rss-kb=(\d+)/.exec(stderr)?.[1] ?? NaN);
    const report = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8').catch(() => '{}')) as {
      leaves?: Array<{ findings: Array<{ leaf: string; message: string }> }>;
    };
    // What the report says about the hostile answer (the fixture also serves tools/list before initialize: not that).
    const findings = (report.leaves ?? [])
      .flatMap((leaf) => leaf.findings)
      .filter((f) => f.leaf !== 'FAULT-PROTO-PRE-INIT')
      .map((f) => `${f.leaf}: ${f.message}`);
    return { rssMb: Math.round(rssKb / 1024), wallMs, code, said: findings.join(' | ').slice(0, 160) || 'no finding' };
  } finally {
    server?.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

const builds: Array<[string, string]> = [
  ...(before ? ([['before', `${before}/dist/src/cli.js`]] as Array<[string, string]>) : []),
  ['after', `${root}dist/src/cli.js`],
];
const TARGET_RSS_MB = 200;
const missed: string[] = [];
console.log('case              build   peak RSS MB  wall ms  exit  what the report says');
for (const c of cases) {
  for (let round = 0; round < rounds; round++) {
    for (const [label, cli] of builds) {
      const o = await measure(cli, c);
      if (label === 'after' && !(o.rssMb <= TARGET_RSS_MB)) missed.push(`${c.name}: ${o.rssMb} MB`);
      console.log(
        `${c.name.padEnd(17)} ${label.padEnd(6)} ${String(o.rssMb).padStart(12)} ` +
          `${String(o.wallMs).padStart(8)} ${String(o.code).padStart(5)}  ${o.said}`,
      );
    }
  }
}
if (missed.length > 0) {
  console.log(`missed (target ${TARGET_RSS_MB} MB peak RSS): ${missed.join('; ')}`);
  process.exitCode = 1;
}
