/**
 * A PromQL expectation judged on what its polls read in its window:
 * - failed when any poll read a value that breaks the condition: the value and the moment (the
 *   first such poll);
 * - else inconclusive when any poll could not be judged (Prometheus unreachable, a query error,
 *   no series, NaN), or none ran: part of the window was not seen, so "held" would be untrue;
 * - else passed.
 */
import { formatDuration } from '../duration.js';
import type { Window } from './model.js';
import type { PromqlObservation } from './promql-watch.js';
import type { ExpectationVerdict } from './result.js';

export function judgePromql(
  window: Window,
  observations: readonly PromqlObservation[],
): Pick<ExpectationVerdict, 'status' | 'figure' | 'atMs' | 'reason'> {
  const seen = observations.filter((o) => o.atMs >= window.fromMs - 50 && o.atMs <= window.toMs + 50);
  if (seen.length === 0)
    return { status: 'inconclusive', figure: '', atMs: null, reason: 'no query was asked in the window' };
  const held = seen.filter((o) => o.state === 'held').length;
  const figure = `${held} of ${seen.length} polls held`;
  const broken = seen.find((o) => o.state === 'broken');
  if (broken)
    return {
      status: 'failed',
      figure: `${broken.detail} at ${formatDuration(broken.atMs)}; ${figure}`,
      atMs: broken.atMs,
      reason: `broke at ${formatDuration(broken.atMs)}: ${broken.detail}; ${figure}`,
    };
  const unknown = seen.filter((o) => o.state === 'unknown');
  if (unknown.length > 0)
    return {
      status: 'inconclusive',
      figure,
      atMs: null,
      reason:
        `${unknown.length} of ${seen.length} polls could not be judged ` +
        `(first at ${formatDuration(unknown[0]!.atMs)}: ` +
        `${unknown[0]!.detail}), so holding says nothing about those ` +
        `moments`,
    };
  const last = seen[seen.length - 1]!;
  return {
    status: 'passed',
    figure: `${figure}; last ${last.detail}`,
    atMs: null,
    reason: `${figure}; last ${last.detail}`,
  };
}
