/**
 * Whether the upstream server is there: a stdio server that exited on its own, an HTTP upstream
 * that refused or dropped requests and maybe came back. Kept as an UpstreamFailure (metrics.ts),
 * which the SLIs and the report carry.
 */
import { MAX_OUTAGES_KEPT, type UpstreamFailure } from './metrics.js';

export class UpstreamHealth {
  failure: UpstreamFailure | undefined;

  /** The stdio server ended although nobody stopped it, after `attempts` tool-call attempts. */
  exited(exitCode: number | null, signal: string | null, attempts: number): void {
    this.failure ??= {
      kind: 'exited',
      at: new Date().toISOString(),
      attempts_before: attempts,
      ...(signal !== null ? { signal } : exitCode !== null ? { exit_code: exitCode } : {}),
      unanswered: 0,
    };
  }

  /**
   * The HTTP upstream refused or dropped a request. The first failure's time is kept and the
   * latest error named; a failure after a recovery opens a new outage.
   */
  unreachable(error: string, attempts: number): void {
    const now = new Date().toISOString();
    const failure = this.failure;
    if (!failure) {
      this.failure = {
        kind: 'unreachable',
        at: now,
        attempts_before: attempts,
        error,
        unanswered: 0,
        reached: 0,
        outage_count: 1,
        outages: [{ from: now, error, unanswered: 0 }],
      };
      return;
    }
    if (failure.kind !== 'unreachable') return;
    failure.error = error;
    const outages = (failure.outages ??= []);
    if (failure.recovered_at === undefined && outages.length > 0) {
      outages[outages.length - 1]!.error = error;
      return;
    }
    delete failure.recovered_at;
    failure.outage_count = (failure.outage_count ?? outages.length) + 1;
    outages.push({ from: now, error, unanswered: 0 });
    if (outages.length > MAX_OUTAGES_KEPT) outages.splice(0, outages.length - MAX_OUTAGES_KEPT);
  }

  /**
   * The HTTP upstream answered (any HTTP status: the server is there). Ends an outage going on;
   * `toolCalls` tool-call attempts went with the request, and count as reaching it when it had
   * failed before.
   */
  reached(toolCalls: number): void {
    const failure = this.failure;
    if (failure?.kind !== 'unreachable') return;
    if (failure.recovered_at === undefined) {
      const now = new Date().toISOString();
      failure.recovered_at = now;
      const last = failure.outages?.[failure.outages.length - 1];
      if (last && last.to === undefined) last.to = now;
    }
    failure.reached = (failure.reached ?? 0) + toolCalls;
  }

  /** Whether the upstream is down now: it exited, or its last outage has not ended. */
  down(): boolean {
    const failure = this.failure;
    return failure !== undefined && (failure.kind === 'exited' || failure.recovered_at === undefined);
  }

  /** Counts one tool-call attempt that found no server (only while the upstream is down). */
  countUnanswered(): void {
    const failure = this.failure;
    if (!failure || !this.down()) return;
    failure.unanswered += 1;
    const last = failure.outages?.[failure.outages.length - 1];
    if (last) last.unanswered += 1;
  }
}
