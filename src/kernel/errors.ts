/**
 * Errors that carry a message meant for the person or agent who called us.
 *
 * An InputError says what was wrong with an argument and what is accepted; tools turn it into
 * an `isError` result with exactly that text, and the CLI prints it on one line and exits 2.
 * Any other error is unexpected: tools still answer `isError` (the server never crashes), but the
 * error is also logged with its stack so it can be fixed.
 */
export class InputError extends Error {
  override readonly name = 'InputError';
}

/**
 * How a door spells an argument in an InputError: the tools' `fault_start` as given, the CLI's
 * `--fault-start`. Domain code that validates a door's input names every argument through it.
 */
export type Spell = (argument: string) => string;

export const asGiven: Spell = (argument) => argument;

/**
 * A failure outside the caller's arguments that its message fully explains (nothing indexed yet,
 * a store that cannot be reached, a command that cannot be started): answered like any failure,
 * but logged as one line, since there is no bug to find in its stack.
 */
export class OperationalError extends Error {
  override readonly name: string = 'OperationalError';
}

/** An OperationalError, or a Node system error (ENOENT from spawn, ECONNREFUSED…): expected, not a bug. */
export function isOperational(error: unknown): boolean {
  if (error instanceof OperationalError) return true;
  const system = error as { code?: unknown; syscall?: unknown } | null;
  return error instanceof Error && typeof system?.code === 'string' && typeof system.syscall === 'string';
}

/** Thrown when work was stopped because the caller cancelled it (an aborted AbortSignal). */
export class CancelledError extends Error {
  override readonly name = 'CancelledError';
  constructor(message = 'cancelled') {
    super(message);
  }
}

/** The message of any thrown value, without a stack. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** An error as it crosses to another thread: its class by name, and its message. */
export interface ErrorOnTheWire {
  name: string;
  message: string;
}

export function errorToWire(error: unknown): ErrorOnTheWire {
  return error instanceof Error
    ? { name: error.name, message: error.message }
    : { name: 'Error', message: String(error) };
}

/** The same class of error on this side: a refusal stays an InputError, a cancel a CancelledError. */
export function errorFromWire(error: ErrorOnTheWire): Error {
  if (error.name === 'InputError') return new InputError(error.message);
  if (error.name === 'CancelledError') return new CancelledError(error.message);
  if (error.name === 'OperationalError') return new OperationalError(error.message);
  return new Error(error.message);
}
