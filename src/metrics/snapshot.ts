/**
 * A metric read from a snapshot at scrape time, exposed through prom-client's Registry: the
 * proxy's counters live in the proxy (and in its worker thread), so each scrape reads them once
 * rather than mirroring every change into prom-client objects. prom-client renders anything
 * registered with a name and a get() in its text format.
 */
import type { Registry } from 'prom-client';

export interface SnapshotValue {
  labels: Record<string, string | number>;
  value: number;
  /** For a histogram's parts: `<name>_bucket`, `_sum`, `_count`. */
  metricName?: string;
}

export interface SnapshotMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  collect(): SnapshotValue[];
}

export function registerSnapshot(registry: Registry, metric: SnapshotMetric): void {
  const entry = {
    name: metric.name,
    help: metric.help,
    type: metric.type,
    aggregator: 'sum',
    get: async () => ({
      name: metric.name,
      help: metric.help,
      type: metric.type,
      aggregator: 'sum',
      values: metric.collect(),
    }),
    reset: () => undefined,
  };
  registry.registerMetric(entry as unknown as Parameters<Registry['registerMetric']>[0]);
}

/** A histogram's series from bucket counts (not cumulative, the last one above the last bound), in seconds. */
export function histogramValues(
  name: string,
  labels: Record<string, string>,
  boundsSeconds: readonly number[],
  counts: readonly number[],
  sumSeconds: number,
): SnapshotValue[] {
  const values: SnapshotValue[] = [];
  let cumulative = 0;
  boundsSeconds.forEach((bound, index) => {
    cumulative += counts[index] ?? 0;
    values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
  });
  cumulative += counts[boundsSeconds.length] ?? 0;
  values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative });
  values.push({ metricName: `${name}_sum`, labels, value: sumSeconds });
  values.push({ metricName: `${name}_count`, labels, value: cumulative });
  return values;
}
