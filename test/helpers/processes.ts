/** Processes a test starts: whether they are still there (for the reaping tests), and the CLI run to its end. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cliPath } from './repo.js';
import { HANG_GUARD_MS } from './wait.js';

/** Whether pid exists (a zombie that init has not reaped yet counts). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether pid runs: exists and is not a zombie (Linux: from /proc; elsewhere signal 0). */
export function running(pid: number): boolean {
  if (process.platform !== 'linux') return alive(pid);
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state …; comm may hold spaces and parentheses, so read after the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node ARGV` to its end, with `input` on its stdin when given, and gives what it wrote and how it ended;
 * killed after HANG_GUARD_MS so a hung child fails its test instead of the suite.
 */
export function runNodeProcess(
  argv: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CliOutcome & { signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

/**
 * Runs the built CLI with `args` and `env` on top of this process's environment, to its end (runNodeProcess: 60 s
 * was within reach of an index run's start and work on a loaded machine).
 */
export async function runCliProcess(args: string[], env: NodeJS.ProcessEnv): Promise<CliOutcome> {
  const { code, stdout, stderr } = await runNodeProcess([cliPath, ...args], { env: { ...process.env, ...env } });
  return { code, stdout, stderr };
}

/** The built CLI running until stopped, with what it wrote to stderr. */
export interface RunningCli {
  /**
   * Resolves with stderr once `pattern` matches it; rejects if the CLI exits first, or after HANG_GUARD_MS, and
   * then kills it: a failed start leaves nothing running.
   */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  stderr(): string;
  /** Sends `signal` (SIGTERM by default) unless it has exited, then waits for the exit; its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawns the built CLI with `args` and `env` on top of this process's environment, and leaves it running. */
export function startCliProcess(args: string[], env: NodeJS.ProcessEnv = {}): RunningCli {
  const child = spawn(process.execPath, [cliPath, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    stderr: () => stderr,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const match = pattern.exec(stderr);
          if (!match) return false;
          clearTimeout(timer);
          child.stderr.off('data', check);
          resolve(match);
          return true;
        };
        const timer = setTimeout(() => {
          child.stderr.off('data', check);
          child.kill('SIGKILL');
          reject(new Error(`no ${pattern} within ${HANG_GUARD_MS / 1000} s:\n${stderr}`));
        }, HANG_GUARD_MS);
        if (check()) return;
        child.stderr.on('data', check);
        void exited.then(() => {
          if (!check()) {
            clearTimeout(timer);
            reject(new Error(`exited (${child.exitCode ?? child.signalCode}) without ${pattern}:\n${stderr}`));
          }
        });
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
