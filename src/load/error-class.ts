/**
 * The classes a failed request falls into (docs/design.md, "5. Load, scenarios and verdicts"). Every response is
 * counted by status
 * code; a status outside the expected set is also an error.
 *
 * - refused:  the connection was refused (nothing listening).
 * - reset:    the peer reset or closed the connection before the response was complete.
 * - timeout:  no complete response within the request's timeout.
 * - http_5xx: a complete response with a status of 500–599 that was not expected.
 * - http_status: a complete response with any other status outside the expected ones
 *   (`expect_status`, default 2xx and 3xx): a 404 from a mistyped path is an error, not a pass.
 * - other:    anything else (TLS failure, malformed response, unreachable host, …).
 */
export const ERROR_CLASSES = ['refused', 'reset', 'timeout', 'http_5xx', 'http_status', 'other'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/** A transport failure with its class and a short detail (an errno code or a message). */
export interface TransportFailure {
  errorClass: ErrorClass;
  detail: string;
}

const CLASS_OF_CODE: Record<string, ErrorClass> = {
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  ETIMEDOUT: 'timeout',
};

export function classifySocketError(error: Error & { code?: unknown }): TransportFailure {
  const code = typeof error.code === 'string' ? error.code : undefined;
  return { errorClass: (code && CLASS_OF_CODE[code]) || 'other', detail: code ?? error.message };
}

/** An empty count per class, in the order of ERROR_CLASSES. */
export function zeroErrorCounts(): Record<ErrorClass, number> {
  return { refused: 0, reset: 0, timeout: 0, http_5xx: 0, http_status: 0, other: 0 };
}
