/**
 * Many `faultline` command lines in one process: for the tests of what the command-line program
 * parses and prints (help, usage errors, refusals before anything starts), which need main() and
 * not a process of their own each. A process start costs ~0.5 s of CPU and the suite's time on 2
 * cores is its CPU; the end-to-end runs of the built CLI stay with runCliProcess.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CliOutcome } from './processes.js';
import { HANG_GUARD_MS } from './wait.js';

export interface CliInvocation {
  args: string[];
  /** On top of this process's environment, for this command line only. */
  env?: Record<string, string>;
}

const childPath = fileURLToPath(new URL('./cli-batch-child.js', import.meta.url));

/**
 * Runs the command lines in order in one child process, each to its end; rejects if the child
 * does not finish within HANG_GUARD_MS (a hang guard: a command line that serves instead of refusing).
 */
export function runCliBatch(invocations: readonly CliInvocation[]): Promise<CliOutcome[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childPath], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`the batch exited (${code ?? signal}):\n${stderr}\n${stdout}`));
      const outcomes = JSON.parse(stdout) as CliOutcome[];
      if (outcomes.length !== invocations.length) return reject(new Error(`${outcomes.length} outcomes: ${stdout}`));
      resolve(outcomes);
    });
    child.stdin.end(JSON.stringify(invocations));
  });
}
