/**
 * The one error type the LLM layer throws for everything that is not the caller's cancellation.
 * `kind` lets callers (tools, the indexer) react without parsing messages; the message is written
 * for the person reading the tool result: what failed, and what came back when something did.
 */
import { OperationalError } from '../kernel/errors.js';

export type LlmErrorKind =
  /** No provider configured (the message names the env var or flag to set). */
  | 'not_configured'
  /** The endpoint answered with an HTTP error status. */
  | 'http'
  /** The endpoint could not be reached or the connection broke. */
  | 'network'
  /** The whole call (retries included) took longer than the configured timeout. */
  | 'timeout'
  /** The model answered, but not with what was asked, even after one repair attempt. */
  | 'invalid_reply'
  /** Embeddings came back with a dimension other than the expected one. */
  | 'dimension_mismatch';

// Operational: a provider that is down, misconfigured or answering badly is expected, not a bug
// (the tools' generic failure path logs it as a warning, without a stack trace).
export class LlmError extends OperationalError {
  override readonly name = 'LlmError';
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    /** HTTP status for kind `http`. */
    readonly status?: number,
    /** Seconds the server asked us to wait (Retry-After), when it said. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  /** 429, 5xx and broken connections are worth another try; everything else is final. */
  get retryable(): boolean {
    if (this.kind === 'network') return true;
    return this.kind === 'http' && this.status !== undefined && (this.status === 429 || this.status >= 500);
  }
}

/** A short, single-line excerpt of a model reply, for error messages. */
export function excerpt(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty reply)';
  return flat.length <= max ? `"${flat}"` : `"${flat.slice(0, max)}…"`;
}
