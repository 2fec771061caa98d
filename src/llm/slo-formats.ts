/**
 * Validated SLOs (slo.ts) in the formats teams keep them in:
 * - OpenSLO `openslo/v1` `SLO` documents, one per SLO, with an inline
 *   SLI: a SLO whose PromQL is a quantile (histogram_quantile, quantile_over_time) is a
 *   `thresholdMetric` objective (`op: lte`, `value` = threshold in the metric's unit: seconds for a
 *   `_seconds` histogram); any other is a
 *   raw `ratioMetric` over its PromQL, rawType `failure` for an error SLO, else `success`;
 *   a rolling `timeWindow`, `budgetingMethod: Occurrences`, `target` = objective / 100.
 * - a Sloth `prometheus/v1` spec: each availability or error SLO with an error-ratio query
 *   whose range selectors are `[{{.window}}]` (`1 - (good ratio)` unless it is an error SLO). A
 *   quantile query is not a ratio, so it cannot be a Sloth SLO: it is left out and said so in
 *   `skipped`.
 * A ratio written as a percentage (`… / … * 100`, as the reference tool's guide writes its SLIs)
 * is read as the ratio both formats expect: the factor 100 is left out.
 * Both are checked structurally here, field by field, before they are returned.
 */
import type { Slo } from './slo.js';

export const SLO_FORMATS = ['fault', 'openslo', 'sloth'] as const;
export type SloFormat = (typeof SLO_FORMATS)[number];

/** RFC 1123 label: lowercase alphanumerics and '-', at most 63, alphanumeric at both ends. */
const RFC1123 = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const SLOTH_NAME = /^[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]$/;
const SHORTHAND = /^[1-9]\d*[mhdwMQY]$/;
/** A range `[5m]`, or a subquery's `[30m:1m]` (its step captured: `rate(x[5m])[{{.window}}]` would not parse). */
const RANGE_SELECTOR = /\[\s*\d+(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*\s*(:\s*\d*(?:ms|[smhdwy])?)?\s*\]/g;

export interface OpenSloDocument {
  apiVersion: 'openslo/v1';
  kind: 'SLO';
  metadata: { name: string; displayName: string };
  spec: Record<string, unknown>;
}

export function toOpenSlo(slos: Slo[], service: string): OpenSloDocument[] {
  const used = new Set<string>();
  const documents = slos.map((slo): OpenSloDocument => {
    const latency = isQuantile(slo.sli.prometheus);
    const source = {
      metricSource: {
        type: 'Prometheus',
        spec: { query: latency ? slo.sli.prometheus : ratioQuery(slo.sli.prometheus) },
      },
    };
    const indicator = {
      metadata: { name: uniqueName(`${slo.type}-sli`, new Set()), displayName: `${slo.title} (SLI)` },
      spec: latency
        ? { thresholdMetric: source }
        : { ratioMetric: { counter: false, raw: source, rawType: slo.type === 'error' ? 'failure' : 'success' } },
    };
    const objective: Record<string, unknown> = { displayName: slo.title, target: targetOf(slo.objective) };
    if (latency) Object.assign(objective, { op: 'lte', value: thresholdInMetricUnit(slo) });
    return {
      apiVersion: 'openslo/v1',
      kind: 'SLO',
      metadata: { name: uniqueName(slo.title, used), displayName: slo.title },
      spec: {
        description: slo.explanation.slice(0, 1050),
        service: rfc1123(service),
        indicator,
        timeWindow: [{ duration: shorthand(slo.window), isRolling: true }],
        budgetingMethod: 'Occurrences',
        objectives: [objective],
      },
    };
  });
  for (const document of documents) {
    const problem = checkOpenSlo(document);
    if (problem) throw new Error(`internal: an OpenSLO document failed its own check (${problem})`);
  }
  return documents;
}

/** The OpenSLO rules this converter could break, checked on its own output. */
export function checkOpenSlo(document: OpenSloDocument): string | undefined {
  if (document.apiVersion !== 'openslo/v1' || document.kind !== 'SLO') return 'envelope';
  if (!RFC1123.test(document.metadata.name)) return `metadata.name "${document.metadata.name}" is not RFC 1123`;
  const spec = document.spec as {
    service?: unknown;
    description?: string;
    timeWindow?: Array<{ duration?: string; isRolling?: boolean }>;
    budgetingMethod?: string;
    objectives?: Array<{ target?: number; op?: string; value?: number }>;
    indicator?: { spec?: { thresholdMetric?: unknown; ratioMetric?: { raw?: unknown; rawType?: string } } };
  };
  if (typeof spec.service !== 'string' || spec.service === '') return 'spec.service';
  if ((spec.description ?? '').length > 1050) return 'spec.description is over 1050 characters';
  if (spec.timeWindow?.length !== 1 || !SHORTHAND.test(spec.timeWindow[0]!.duration ?? '')) return 'spec.timeWindow';
  if (!['Occurrences', 'Timeslices', 'RatioTimeslices'].includes(spec.budgetingMethod ?? ''))
    return 'spec.budgetingMethod';
  const sli = spec.indicator?.spec;
  if (!sli || (sli.thresholdMetric === undefined) === (sli.ratioMetric === undefined))
    return 'spec.indicator: exactly one of thresholdMetric, ratioMetric';
  if (sli.ratioMetric && !['success', 'failure'].includes(sli.ratioMetric.rawType ?? '')) return 'ratioMetric.rawType';
  if (!spec.objectives || spec.objectives.length === 0) return 'spec.objectives';
  for (const objective of spec.objectives) {
    if (!(typeof objective.target === 'number' && objective.target >= 0 && objective.target < 1))
      return 'objective.target must be in [0,1)';
    if (
      sli.thresholdMetric !== undefined &&
      (!['lte', 'gte', 'lt', 'gt'].includes(objective.op ?? '') || typeof objective.value !== 'number')
    ) {
      return 'a threshold objective needs op and value';
    }
  }
  return undefined;
}

export interface SlothSpec {
  version: 'prometheus/v1';
  service: string;
  slos: Array<{
    name: string;
    objective: number;
    description: string;
    sli: { raw: { error_ratio_query: string } };
    alerting: { name: string; page_alert: { disable: boolean }; ticket_alert: { disable: boolean } };
  }>;
}

export interface SlothResult {
  spec: SlothSpec;
  /** SLOs that cannot be Sloth SLOs, and why. */
  skipped: string[];
}

export function toSloth(slos: Slo[], service: string): SlothResult {
  const skipped: string[] = [];
  const used = new Set<string>();
  const out: SlothSpec['slos'] = [];
  for (const slo of slos) {
    if (isQuantile(slo.sli.prometheus)) {
      skipped.push(`"${slo.title}": its PromQL is a quantile, not the ratio Sloth needs`);
      continue;
    }
    // The fault shape allows 0; Sloth's objective is in (0, 100].
    if (!(slo.objective > 0)) {
      skipped.push(`"${slo.title}": its objective is ${slo.objective}, and Sloth needs one above 0`);
      continue;
    }
    const windowed = ratioQuery(slo.sli.prometheus).replace(RANGE_SELECTOR, (_range, step: string | undefined) =>
      step === undefined ? '[{{.window}}]' : `[{{.window}}${step.replace(/\s+/g, '')}]`,
    );
    if (!windowed.includes('{{.window}}')) {
      skipped.push(`"${slo.title}": its PromQL has no range selector to carry {{.window}}`);
      continue;
    }
    const name = uniqueName(slo.title, used);
    out.push({
      name,
      objective: slo.objective,
      description: slo.explanation,
      sli: { raw: { error_ratio_query: slo.type === 'error' ? windowed : `1 - (${windowed})` } },
      alerting: { name: toPascal(name), page_alert: { disable: false }, ticket_alert: { disable: false } },
    });
  }
  const spec: SlothSpec = { version: 'prometheus/v1', service: rfc1123(service), slos: out };
  const problem = checkSloth(spec);
  if (problem) throw new Error(`internal: the Sloth spec failed its own check (${problem})`);
  return { spec, skipped };
}

/** The Sloth spec's rules this converter could break, checked on its own output. */
export function checkSloth(spec: SlothSpec): string | undefined {
  if (spec.version !== 'prometheus/v1' || spec.service === '') return 'version/service';
  for (const slo of spec.slos) {
    if (!SLOTH_NAME.test(slo.name)) return `name "${slo.name}"`;
    if (!(slo.objective > 0 && slo.objective <= 100)) return `objective ${slo.objective} must be in (0,100]`;
    if (!slo.sli.raw.error_ratio_query.includes('{{.window}}')) return 'the query has no {{.window}}';
    if (slo.alerting.name === '') return 'alerting.name';
  }
  return undefined;
}

/** "300s" → "5m", "30d" → "30d", "90s" → "2m" (OpenSLO has no seconds: rounded up to minutes). */
export function shorthand(window: string): string {
  const match = /^(\d+)([smhdw])$/.exec(window);
  if (!match) return '30d';
  const seconds =
    Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[match[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  for (const [unit, size] of [
    ['w', 604800],
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${Math.max(1, Math.ceil(seconds / 60))}m`;
}

/**
 * A ratio query without its percentage factor: `a / b * 100` and `100 * a / b` are `a / b`. Only
 * when the whole expression is a product or quotient at its top level (outside brackets and
 * strings), so `1 - a * 100` or `a / b * 100 > 99` are left alone.
 */
export function ratioQuery(query: string): string {
  const top = topLevel(query);
  if (top === undefined || /[-+<>=!%^]|(?:and|or|unless|by|without|on|ignoring|bool)/.test(top) || !top.includes('/'))
    return query;
  const trailing = /^([\s\S]*?)\s*\*\s*100(?:\.0*)?\s*$/.exec(query);
  if (trailing && topLevel(trailing[1]!) !== undefined) return trailing[1]!.trim();
  const leading = /^\s*100(?:\.0*)?\s*\*\s*([\s\S]*)$/.exec(query);
  if (leading && topLevel(leading[1]!) !== undefined) return leading[1]!.trim();
  return query;
}

/** The query with every bracketed or quoted part emptied; undefined when the brackets do not balance. */
function topLevel(query: string): string | undefined {
  let out = '';
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < query.length; i++) {
    const c = query[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') {
      if (depth === 0) out += c;
      depth++;
    } else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth < 0) return undefined;
      if (depth === 0) out += c;
    } else if (depth === 0) out += c;
  }
  return depth === 0 && quote === undefined ? out : undefined;
}

function isQuantile(query: string): boolean {
  return /\b(histogram_quantile|quantile_over_time|quantile)\s*\(/.test(query);
}

function rfc1123(text: string): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return slug === '' ? 'slo' : slug;
}

function uniqueName(text: string, used: Set<string>): string {
  const slug = rfc1123(text).slice(0, 58).replace(/-+$/, '') || 'slo';
  // Sloth's names have at least two characters (its pattern has a first and a last one).
  const base = slug.length < 2 ? `slo-${slug}` : slug;
  let name = base;
  for (let n = 2; used.has(name); n++) name = `${base}-${n}`;
  used.add(name);
  return name;
}

function toPascal(name: string): string {
  return (
    name
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((part) => part[0]!.toUpperCase() + part.slice(1))
      .join('') || 'Slo'
  );
}

/** objective (a percentage below 100) as OpenSLO's target in [0, 1), never rounded up to 1. */
function targetOf(objective: number): number {
  const target = round(objective / 100);
  return target < 1 ? target : objective / 100;
}

/**
 * The latency threshold in the unit of the metric the quantile reads, which is what a threshold
 * objective's `value` is compared with: Prometheus histograms are in seconds by convention
 * (`…_seconds_bucket`), some in milliseconds; an SLO of "350 ms" over a `_seconds` histogram is
 * 0.35. A query naming neither keeps the SLO's own unit.
 */
export function thresholdInMetricUnit(slo: Pick<Slo, 'threshold' | 'unit' | 'sli'>): number {
  const query = slo.sli.prometheus;
  const metricUnit = /_seconds(?:_bucket|_sum|_count)?\b/.test(query)
    ? 's'
    : /_(?:milliseconds|ms)(?:_bucket|_sum|_count)?\b/.test(query)
      ? 'ms'
      : undefined;
  if (slo.unit === 'ms' && metricUnit === 's') return round(slo.threshold / 1000);
  if (slo.unit === 's' && metricUnit === 'ms') return round(slo.threshold * 1000);
  return slo.threshold;
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
