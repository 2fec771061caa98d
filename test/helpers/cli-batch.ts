/**
 * Many `faultline` command lines in one process: for the tests of what the command-line program
 * parses and prints (help, usage errors, refusals before anything starts), which need main() and
 * not a process of their own each. A process start costs ~0.5 s of CPU and the suite's time on 2
 * cores is its CPU; the end-to-end runs of the built CLI stay with runCliProcess.
 */
import { fileURLToPath } from 'node:url';
import { runNodeProcess, type CliOutcome } from './processes.js';

export interface CliInvocation {
  args: string[];
  /** On top of this process's environment, for this command line only. */
  env?: Record<string, string>;
}

const childPath = fileURLToPath(new URL('./cli-batch-child.js', import.meta.url));

/**
 * Runs the command lines in order in one child process, each to its end; rejects if the child
 * does not finish within HANG_GUARD_MS (runNodeProcess's hang guard: a command line that serves
 * instead of refusing).
 */
export async function runCliBatch(invocations: readonly CliInvocation[]): Promise<CliOutcome[]> {
  const { code, signal, stdout, stderr } = await runNodeProcess([childPath], { input: JSON.stringify(invocations) });
  if (code !== 0) throw new Error(`the batch exited (${code ?? signal}):\n${stderr}\n${stdout}`);
  const outcomes = JSON.parse(stdout) as CliOutcome[];
  if (outcomes.length !== invocations.length) throw new Error(`${outcomes.length} outcomes: ${stdout}`);
  return outcomes;
}
