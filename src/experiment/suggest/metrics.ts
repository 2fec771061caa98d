/**
 * The Prometheus metrics an app registers, read from its calls (code/'s listCalls), and the
 * PromQL checks a starter experiment can judge it by:
 *
 * - prom-client: `new client.Counter({name: 'x_total', help, labelNames: ['code']})` (Counter,
 *   Gauge, Histogram, Summary; `help` tells it from other constructors of that name);
 * - prometheus_client: `Counter('x', 'help', ['code'])` (a Counter's exposed name gains `_total`;
 *   the second string, the help, tells it from collections.Counter);
 * - the Go client: `prometheus.NewCounterVec(prometheus.CounterOpts{Namespace, Subsystem, Name}, []string{"code"})`,
 *   also through promauto.
 *
 * A counter with a status label gives an error ratio; a histogram in seconds a p99; a counter
 * named for errors its rate. Thresholds are starting points, said so in the file.
 */
import type { CallSite } from '../../code/index.js';

export interface FoundMetric {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary';
  labels: string[];
  client: 'prom-client' | 'prometheus_client' | 'client_golang';
  evidence: string;
}

const TYPES = ['Counter', 'Gauge', 'Histogram', 'Summary'] as const;
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const STATUS_LABELS = ['code', 'status', 'status_code', 'statusCode', 'http_status'];

function quoted(text: string): string[] {
  return [...text.matchAll(/["'`]([^"'`]+)["'`]/g)].map((match) => match[1]!);
}

function typeOf(word: string): FoundMetric['type'] {
  return word.toLowerCase() as FoundMetric['type'];
}

/** The metrics one file's calls register; `path` for the evidence, its extension for the client. */
export function metricsOf(path: string, calls: readonly CallSite[]): FoundMetric[] {
  const found: FoundMetric[] = [];
  const language = /\.py$/.test(path) ? 'python' : /\.go$/.test(path) ? 'go' : /\.[cm]?[jt]sx?$/.test(path) ? 'js' : '';
  for (const call of calls) {
    const evidence = `${path}:${call.line}`;
    const last = call.callee.split('.').pop() ?? '';
    if (language === 'js' && (TYPES as readonly string[]).includes(last)) {
      const name = call.arguments.find((a) => a.name === 'name')?.literal;
      const help = call.arguments.find((a) => a.name === 'help');
      if (!name || !help || !METRIC_NAME.test(name)) continue;
      const labels = quoted(call.arguments.find((a) => a.name === 'labelNames')?.text ?? '');
      found.push({ name, type: typeOf(last), labels, client: 'prom-client', evidence });
    } else if (language === 'python' && (TYPES as readonly string[]).includes(last)) {
      const positional = call.arguments.filter((a) => a.name === undefined);
      const name = positional[0]?.literal ?? call.arguments.find((a) => a.name === 'name')?.literal;
      const documentation = positional[1]?.literal ?? call.arguments.find((a) => a.name === 'documentation')?.literal;
      if (!name || documentation === undefined || !METRIC_NAME.test(name)) continue;
      const labelArgument = positional[2] ?? call.arguments.find((a) => a.name === 'labelnames');
      const type = typeOf(last);
      const exposed = type === 'counter' && !name.endsWith('_total') ? `${name}_total` : name;
      found.push({
        name: exposed,
        type,
        labels: quoted(labelArgument?.text ?? ''),
        client: 'prometheus_client',
        evidence,
      });
    } else if (language === 'go') {
      const match = /^(?:prometheus|promauto|factory|\w+)\.New(Counter|Gauge|Histogram|Summary)(Vec)?$/.exec(
        call.callee,
      );
      if (!match || !/^(prometheus|promauto)\./.test(call.callee)) continue;
      const part = (key: string) => call.arguments.find((a) => a.name === key)?.literal;
      const name = [part('Namespace'), part('Subsystem'), part('Name')].filter((p) => p).join('_');
      if (!part('Name') || !METRIC_NAME.test(name)) continue;
      const labels = match[2] ? quoted(call.arguments.find((a) => /^\[\]string/.test(a.text))?.text ?? '') : [];
      found.push({ name, type: typeOf(match[1]!), labels, client: 'client_golang', evidence });
    }
  }
  return found;
}

export interface PromqlSuggestion {
  entry: Record<string, unknown>;
  why: string;
}

/** The checks worth starting from: an error ratio, a latency percentile, an error counter's rate. */
export function promqlSuggestions(metrics: readonly FoundMetric[]): PromqlSuggestion[] {
  const out: PromqlSuggestion[] = [];
  const seen = new Set<string>();
  for (const metric of metrics) {
    if (seen.has(metric.name)) continue;
    seen.add(metric.name);
    const status = metric.labels.find((label) => STATUS_LABELS.includes(label));
    if (metric.type === 'counter' && status) {
      out.push({
        entry: {
          name: `${metric.name}: 5xx ratio`,
          prometheus: `sum(rate(${metric.name}{${status}=~"5.."}[1m])) / sum(rate(${metric.name}[1m]))`,
          below: 0.01,
        },
        why: `${metric.name} (${metric.client}, ${metric.evidence}) counts answers by ${status}`,
      });
    } else if (metric.type === 'histogram' && /_seconds$/.test(metric.name)) {
      out.push({
        entry: {
          name: `${metric.name}: p99`,
          prometheus: `histogram_quantile(0.99, sum by (le) (rate(${metric.name}_bucket[1m])))`,
          below: 1,
        },
        why: `${metric.name} (${metric.client}, ${metric.evidence}) is a latency histogram in seconds`,
      });
    } else if (metric.type === 'counter' && /(error|fail|fallback|timeout)/i.test(metric.name)) {
      out.push({
        entry: { name: `${metric.name}: rate`, prometheus: `sum(rate(${metric.name}[1m]))`, below: 1 },
        why: `${metric.name} (${metric.client}, ${metric.evidence}) counts failures`,
      });
    }
  }
  return out.slice(0, 8);
}
