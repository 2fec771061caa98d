/**
 * Errors that carry a message meant for the person or agent who called us.
 *
 * A ToolInputError says what was wrong with an argument and what is accepted; tools turn it into
 * an `isError` result with exactly that text, and the CLI prints it on one line and exits 2.
 * Any other error is unexpected: tools still answer `isError` (the server never crashes), but the
 * error is also logged with its stack so it can be fixed.
 */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
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
