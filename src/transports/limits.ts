/**
 * The HTTP transport's session limits, in a leaf module so the CLI can quote them in its help
 * without loading the transport (and the SDK's HTTP stack) on stdio.
 */

/** Default cap on open sessions (--max-sessions). */
export const MAX_SESSIONS = 64;
/** A session with no request for this long is closed. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** A session that made a request this recently is active: another client's initialize cannot close it. */
export const SESSION_ACTIVE_MS = 60_000;
