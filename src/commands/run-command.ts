/**
 * How a command's work runs: a usage error is one line on stderr and exit 2 (nothing on stdout),
 * work cut short by Ctrl-C or SIGTERM exits 130 or 143, any other failure 1; and the checks made
 * before long work starts (an output file that cannot be written).
 */
import { access, constants as fsConstants, stat } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { dirname, resolve } from 'node:path';
import { InputError, messageOf } from '../kernel/errors.js';
import { withProductionHint } from '../production.js';

/** Exit code for a usage error (unknown flag, bad value), as most Unix tools use. */
export const EXIT_USAGE = 2;

/** A usage error raised by a command's own checks (after commander parsed the flags). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A command's work that a signal cut short: runCommand exits 128 + the signal's number, as a shell does. */
export class InterruptedError extends Error {
  constructor(
    readonly signalName: 'SIGINT' | 'SIGTERM',
    cause: unknown,
  ) {
    super(`${messageOf(cause)} (${signalName})`);
  }
}

/**
 * Runs `work` with a signal that Ctrl-C (SIGINT) or SIGTERM aborts; the handlers go afterwards.
 * When the work fails after the signal (it was cancelled), the failure is an InterruptedError,
 * so a script can tell an interrupted run (130, 143) from one that failed (1).
 */
export async function withInterrupt<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  const onInterrupt = (): void => {
    received = 'SIGINT';
    controller.abort();
  };
  const onTerminate = (): void => {
    received = 'SIGTERM';
    controller.abort();
  };
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onTerminate);
  try {
    return await work(controller.signal);
  } catch (error) {
    throw received === undefined ? error : new InterruptedError(received, error);
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminate);
  }
}

/**
 * Runs a command's work: a UsageError or InputError is a one-line message and exit 2, work
 * cut short by Ctrl-C or SIGTERM (withInterrupt) exit 130 or 143, any other error exit 1.
 */
export async function runCommand(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const usage = error instanceof UsageError || error instanceof InputError;
    process.stderr.write(`faultline: ${messageOf(withProductionHint(error, 'pass --allow-production'))}\n`);
    process.exitCode =
      error instanceof InterruptedError ? 128 + osConstants.signals[error.signalName] : usage ? EXIT_USAGE : 1;
  }
}

/** Refuses an output file that cannot be written: its directory missing or read-only, or a directory itself. */
export async function checkWritable(flag: string, file: string): Promise<void> {
  const path = resolve(file);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) throw new UsageError(`${flag} ${file}: is a directory; give a file path`);
  try {
    await access(existing ? path : dirname(path), fsConstants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `${flag} ${file}: cannot be written ` +
        `(${code === 'ENOENT' ? `no directory ${dirname(path)}` : (code ?? 'not writable')})`,
    );
  }
}
