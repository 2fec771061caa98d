/**
 * The probe's defaults and bounds, quoted by fault_probe_mcp_server's schema: a leaf module, so the
 * MCP server can describe that tool without loading the probe runner.
 */

export const PROBE_DEFAULTS = { cases: 8, seed: 1, callTimeoutMs: 5000, overallTimeoutMs: 120_000 } as const;
export const PROBE_LIMITS = { cases: 100, callTimeoutMs: 60_000, overallTimeoutMs: 600_000 } as const;

const MIB = 1024 * 1024;

/**
 * What the probe reads from a server, at most. One message (a stdio line, an HTTP body, an SSE
 * event) over messageBytes is a finding, counted and dropped, never held; one HTTP answer over
 * responseBytes, or a server over peerBytes in all, is cut off there. Far above a real MCP message
 * (an image result is a few MB), far below what would strain the probe's own memory.
 */
export const PEER_BOUNDS = {
  messageBytes: 16 * MIB,
  responseBytes: 64 * MIB,
  peerBytes: 256 * MIB,
  /** Transcript lines kept per session, and characters kept of each. */
  transcriptLines: 5000,
  transcriptChars: 2000,
  /** Notifications and early or late answers kept per session. */
  notifications: 5000,
  /** Pollution lines and unreadable messages kept per session (all are counted). */
  keptProblems: 20,
} as const;

/** A byte count as people read it: "16 MiB", "25.0 MiB", "812 bytes". */
export function sizeText(bytes: number): string {
  if (bytes < 1024 * 1024) return `${bytes} bytes`;
  const mib = bytes / (1024 * 1024);
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}
