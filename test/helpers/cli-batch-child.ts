/**
 * Runs many `faultline` command lines one after another in this one process (test/helpers/cli-batch.ts
 * spawns it): each through main(), the command-line program src/cli.ts runs, with its own
 * environment on top of this process's, what it wrote to stdout and stderr, and its exit code.
 * Reads the command lines as JSON on stdin; writes the outcomes as JSON on fd 1 once all have run.
 */
import { readFileSync, writeSync } from 'node:fs';
import { main } from '../../src/main.js';
import { cliPath } from './repo.js';
import type { CliInvocation } from './cli-batch.js';
import type { CliOutcome } from './processes.js';

const invocations = JSON.parse(readFileSync(0, 'utf8')) as CliInvocation[];
const outcomes: CliOutcome[] = [];
const writers = { stdout: process.stdout.write, stderr: process.stderr.write };
for (const { args, env = {} } of invocations) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  let stdout = '';
  let stderr = '';
  const capture =
    (append: (text: string) => void) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const callback = rest.find((item) => typeof item === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    };
  process.stdout.write = capture((text) => (stdout += text)) as typeof process.stdout.write;
  process.stderr.write = capture((text) => (stderr += text)) as typeof process.stderr.write;
  process.exitCode = undefined;
  let code: number;
  try {
    await main([process.execPath, cliPath, ...args]);
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    // What src/cli.ts would do with it: an uncaught error, exit code 1.
    stderr += `${error instanceof Error ? error.stack : String(error)}\n`;
    code = 1;
  } finally {
    process.stdout.write = writers.stdout;
    process.stderr.write = writers.stderr;
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
  outcomes.push({ code, stdout, stderr });
}
process.exitCode = 0;
writeSync(1, JSON.stringify(outcomes));
