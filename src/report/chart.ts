/**
 * The per-second latency chart as a mermaid xychart: GitHub, GitLab, VS Code and most markdown
 * viewers with mermaid render it; elsewhere it stays readable as text. Seconds without requests
 * are left out (a zero would read as a fast second); seconds with the fault active are marked *.
 */
import type { TimelineSecond } from '../scenario/result.js';

export function latencyChart(timeline: readonly TimelineSecond[]): string | null {
  const points = timeline.filter((second) => second.requests > 0 && second.p50Ms !== null && second.p95Ms !== null);
  if (points.length < 2) return null;
  const labels = points.map((second) => `"${second.second}${second.faultActive ? '*' : ''}"`);
  const p50 = points.map((second) => round(second.p50Ms!));
  const p95 = points.map((second) => round(second.p95Ms!));
  const top = Math.max(...p95, 1);
  return [
    '```mermaid',
    'xychart-beta',
    '    title "Latency per second: p50 (lower line) and p95, ms; * = fault active"',
    `    x-axis "second of the run" [${labels.join(', ')}]`,
    `    y-axis "latency (ms)" 0 --> ${Math.ceil(top * 1.1)}`,
    `    line [${p50.join(', ')}]`,
    `    line [${p95.join(', ')}]`,
    '```',
  ].join('\n');
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
