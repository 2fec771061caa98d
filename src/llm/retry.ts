/**
 * Bounded calls: one deadline for a whole provider call (retries and repair included), the
 * caller's cancellation, and retries with exponential backoff for transient failures.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { formatDuration } from '../duration.js';
import { CancelledError } from '../kernel/errors.js';
import { LlmError } from './errors.js';

export interface RetryOptions {
  /** Further attempts after the first one fails with a retryable error. */
  retries: number;
  /** The first wait; each later wait doubles, with jitter. */
  baseDelayMs: number;
  /** No wait is longer than this, whatever Retry-After says. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { retries: 2, baseDelayMs: 500, maxDelayMs: 8_000 };

/**
 * Runs `work` with a signal that aborts when `timeoutMs` passes or `callerSignal` aborts, and
 * translates the abort: a CancelledError when the caller cancelled, an LlmError `timeout` when
 * the deadline passed. The timer and listener are gone when this returns.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (callerSignal?.aborted) throw new CancelledError();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onCallerAbort = (): void => controller.abort();
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    return await work(controller.signal);
  } catch (error) {
    if (callerSignal?.aborted) throw new CancelledError();
    if (timedOut)
      throw new LlmError('timeout', `${what} did not finish within ${formatDuration(timeoutMs)} (the LLM timeout)`);
    throw error;
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', onCallerAbort);
  }
}

/** Retries `attempt` on retryable LlmErrors; waits are cut short when `signal` aborts. */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  options: RetryOptions,
  signal: AbortSignal,
): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof LlmError) || !error.retryable || failures >= options.retries || signal.aborted)
        throw error;
      await sleep(backoffMs(failures, options, error.retryAfterSeconds), undefined, { signal });
    }
  }
}

/** Exponential backoff with "equal jitter"; the server's Retry-After wins when it asks for longer. */
export function backoffMs(failures: number, options: RetryOptions, retryAfterSeconds?: number): number {
  const exponential = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** failures);
  const jittered = exponential / 2 + Math.random() * (exponential / 2);
  const asked = retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 : 0;
  return Math.min(options.maxDelayMs, Math.max(jittered, asked));
}
