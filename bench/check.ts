/**
 * `npm run bench:check`: runs the timing checks of bench/checks/ (every `checks` export of every
 * file there), one at a time, each in a fresh process of its own (no JIT state, cache or leaked
 * handle carries from one to the next; a check that hangs is killed with what it started), and
 * prints each row: our figure, its peer measured in the same run, the ratio or difference, the
 * target and PASS or MISS. Exits 1 when a row misses, a check fails or outlasts its bound; 2 on a
 * usage error.
 *
 *   npm run bench:check                      every check
 *   npm run bench:check -- proxy             the checks of an area (names starting "proxy.")
 *   npm run bench:check -- proxy.latency-accuracy code.parse-text-linear
 *   npm run bench:check -- --list            names, what each measures, its peer and target
 *   npm run bench:check -- --markdown        the same as bench/README.md's list of checks
 *   npm run bench:check -- --json out.json   also write the results as JSON
 *
 * The build must be current (`npm run bench:check` builds first). `--dir DIR` reads the check
 * files from another directory of compiled modules (the runner's own tests use it).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  comparedValue,
  formatCompared,
  formatFigure,
  formatTarget,
  meets,
  type BenchCheck,
  type Row,
} from './lib/check.js';
import { CHECKS_DIRECTORY, checksMarkdown, discoverChecks, type Located } from './lib/registry.js';

const DEFAULT_TIMEOUT_MS = 120_000;

interface Outcome {
  name: string;
  seconds: number;
  rows: Row[];
  /** Why the check produced no verdict: it threw, timed out or died. */
  error?: string;
}

/** The checks a selector names: a whole name, or an area (the part before a dot). */
function select(all: Located[], selectors: string[]): Located[] {
  if (selectors.length === 0) return all;
  const unknown = selectors.filter(
    (selector) => !all.some(({ check }) => check.name === selector || check.name.startsWith(`${selector}.`)),
  );
  if (unknown.length > 0) {
    throw new UsageError(
      `no check named ${unknown.map((s) => `"${s}"`).join(', ')}; ` +
        `known: ${all.map(({ check }) => check.name).join(', ')}`,
    );
  }
  return all.filter(({ check }) =>
    selectors.some((selector) => check.name === selector || check.name.startsWith(`${selector}.`)),
  );
}

class UsageError extends Error {}

/** Runs one check in a child process (this file with --child), its own process group, bounded. */
function runInChild({ file, check }: Located): Promise<Outcome> {
  const started = performance.now();
  const timeoutMs = check.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolvePromise) => {
    // The child's stdout goes to our stderr: our stdout carries the results only.
    const child = fork(fileURLToPath(import.meta.url), ['--child', file, check.name], {
      stdio: ['ignore', 2, 2, 'ipc'],
      detached: process.platform !== 'win32',
    });
    running = child;
    let settled = false;
    let result: { rows?: Row[]; error?: string } | undefined;
    const finish = (outcome: Omit<Outcome, 'name' | 'seconds'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      killGroup(child);
      running = undefined;
      resolvePromise({ name: check.name, seconds: (performance.now() - started) / 1000, ...outcome });
    };
    const timer = setTimeout(
      () => finish({ rows: [], error: `no result within ${timeoutMs / 1000} s (killed)` }),
      timeoutMs,
    );
    child.on('message', (message) => (result = message as typeof result));
    child.on('error', (error) => finish({ rows: [], error: error.message }));
    child.on('exit', (code, signal) => {
      if (result?.error !== undefined) finish({ rows: [], error: result.error });
      else if (result?.rows) finish({ rows: result.rows });
      else finish({ rows: [], error: `the check's process exited (${signal ?? code}) without a result` });
    });
  });
}

let running: ChildProcess | undefined;

/** Kills the child and whatever it started (a server, a load generator's process). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(process.platform === 'win32' ? child.pid : -child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** In the child: runs the named check of `file` and sends its rows (or its error) to the parent. */
async function child(file: string, name: string): Promise<void> {
  let message: { rows?: Row[]; error?: string };
  try {
    const module = (await import(pathToFileURL(file).href)) as { checks: BenchCheck[] };
    const check = module.checks.find((candidate) => candidate.name === name);
    if (!check) throw new Error(`no check "${name}" in ${file}`);
    const rows = await check.run({ log: (line) => process.stderr.write(`  ${name}: ${line}\n`) });
    message = rows.length > 0 ? { rows } : { error: 'the check measured nothing (no rows)' };
  } catch (error) {
    message = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  // Exit once the message is out: a check may leave a timer or socket behind, and the parent waits for exit.
  process.send!(message, () => process.exit(0));
}

const out = (line = ''): void => void process.stdout.write(`${line}\n`);

/** Prints a check's rows, aligned, each with PASS or MISS. */
function printOutcome(outcome: Outcome, check: BenchCheck): void {
  out(`${outcome.name}  (${outcome.seconds.toFixed(1)} s): ${check.measures}`);
  if (outcome.error !== undefined) {
    out(`  FAIL  ${outcome.error.split('\n').join('\n        ')}`);
    return;
  }
  const cells = outcome.rows.map((row) => [
    meets(row) ? 'PASS' : 'MISS',
    row.label,
    formatFigure(row.ours),
    row.peer ? `vs ${formatFigure(row.peer)}` : '',
    formatCompared(row),
    `target ${formatTarget(row)}`,
  ]);
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((line) => line[column]!.length)));
  for (const line of cells)
    out(
      `  ${line
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()}`,
    );
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--child') {
    await child(argv[1]!, argv[2]!);
    return 0;
  }
  let dir = CHECKS_DIRECTORY;
  let json: string | undefined;
  let list = false;
  let markdown = false;
  const selectors: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--list') list = true;
    else if (arg === '--markdown') markdown = true;
    else if (arg === '--json' || arg === '--dir') {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      if (arg === '--json') json = resolve(value);
      else dir = resolve(value);
    } else if (arg.startsWith('-'))
      throw new UsageError(`unknown option ${arg} (accepted: --list, --markdown, --json FILE, --dir DIR)`);
    else selectors.push(arg);
  }
  const chosen = select(await discoverChecks(dir), selectors);
  if (markdown) {
    out(checksMarkdown(chosen.map(({ check }) => check)));
    return 0;
  }
  if (list) {
    for (const { check } of chosen)
      out(`${check.name}\n  measures: ${check.measures}\n  peer:     ${check.peer}\n  target:   ${check.target}`);
    return 0;
  }
  const loadBefore = loadavg()[0]!;
  out(
    `bench:check: ${chosen.length} checks, one at a time; load ` +
      `average ${loadBefore.toFixed(2)} on ${availableParallelism()} ` +
      `cores`,
  );
  const outcomes: Outcome[] = [];
  for (const located of chosen) {
    const outcome = await runInChild(located);
    outcomes.push(outcome);
    printOutcome(outcome, located.check);
  }
  const failed = outcomes.filter((outcome) => outcome.error !== undefined);
  const missed = outcomes.flatMap((outcome) =>
    outcome.rows.filter((row) => !meets(row)).map((row) => `${outcome.name} ${row.label}`),
  );
  const rows = outcomes.reduce((sum, outcome) => sum + outcome.rows.length, 0);
  out();
  out(
    `bench:check: ${outcomes.length} checks, ${rows} rows: ${rows - missed.length} met, ${missed.length} missed` +
      `${failed.length > 0 ? `, ${failed.length} failed (${failed.map((outcome) => outcome.name).join(', ')})` : ''}` +
      `; ${outcomes.reduce((sum, outcome) => sum + outcome.seconds, 0).toFixed(0)} ` +
      `s; load average ${loadBefore.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`,
  );
  for (const name of missed) out(`  missed: ${name}`);
  if (json) {
    const results = outcomes.map((outcome) => ({
      ...outcome,
      rows: outcome.rows.map((row) => ({ ...row, compared: comparedValue(row), pass: meets(row) })),
    }));
    writeFileSync(json, `${JSON.stringify({ loadAverage: [loadBefore, loadavg()[0]], checks: results }, null, 2)}\n`);
  }
  return failed.length > 0 || missed.length > 0 ? 1 : 0;
}

// A reader that stops early (`| head`) is not an error of the checks.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  if (running) killGroup(running);
  process.exit(process.exitCode ?? 0);
});

process.on('SIGINT', () => {
  if (running) killGroup(running);
  process.exit(130);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench:check: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
