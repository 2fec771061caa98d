/**
 * The small condition languages of an experiment file, besides the SLOs (src/scenario/slo.ts):
 *
 * - abort_when on the load: `errors > 50% for 3s`, `p95 > 2s for 5s`, `p50 >= 800ms` — checked on
 *   each second of the load while faults act; `for N` asks that many consecutive seconds (default 1).
 *   The load reports p50, p95 and errors per second as each second settles.
 * - a tool-call step's SLI thresholds: `tcsr >= 0.95`, `eta >= 90%`, `blast_radius <= 0.2`.
 * - HTTP checks written as one line: `GET http://127.0.0.1:8000/health -> $.circuit == "open"`.
 */
import { InputError } from '../kernel/errors.js';
import { durationField } from './timeline.js';
import type { AbortRule, SliCondition } from './model.js';
import { DEFAULT_PREDICATE, parsePredicate, type Predicate } from './predicate.js';

export function parseLoadAbort(text: string, what: string): Extract<AbortRule, { kind: 'load' }> {
  const match =
    /^\s*(errors|error_rate|p50|p95)\s*(>=|<=|>|<)\s*(\d+(?:\.\d+)?)\s*(%|ms|s)?\s*(?:for\s+(.+?))?\s*$/i.exec(text);
  if (!match)
    throw new InputError(
      `${what}: "${text}" is not an abort condition; write e.g. "errors ` +
        `> 50% for 3s", "p95 > 2s for 5s" (metrics: errors, p50, p95)`,
    );
  const metric = match[1]!.toLowerCase().startsWith('err') ? 'errors' : (match[1]!.toLowerCase() as 'p50' | 'p95');
  const unit = match[4]?.toLowerCase();
  let threshold = Number(match[3]);
  if (metric === 'errors') {
    if (unit !== undefined && unit !== '%')
      throw new InputError(`${what}: "${text}": errors are a percentage, e.g. errors > 50%`);
    if (unit === undefined && threshold <= 1) threshold *= 100; // "errors > 0.5": a fraction
  } else {
    if (unit === '%') throw new InputError(`${what}: "${text}": ${metric} is a latency, e.g. ${metric} > 2s`);
    if (unit === 's') threshold *= 1000;
  }
  const forMs = match[5] === undefined ? 1000 : durationField(match[5], what);
  if (forMs < 1000 || forMs % 1000 !== 0)
    throw new InputError(`${what}: "${text}": for takes whole seconds (the load reports each second), e.g. for 3s`);
  return {
    kind: 'load',
    text: text.trim(),
    metric,
    op: match[2] as '>' | '>=' | '<' | '<=',
    threshold,
    forSeconds: forMs / 1000,
  };
}

/** The tool-call plane's SLIs a threshold may name (src/toolcall/metrics.ts). */
export const SLI_NAMES = [
  'tcsr',
  'availability',
  'correctness',
  'eta',
  'schema_conformance',
  'deadline_adherence',
  'tcaf',
  'blast_radius',
  'error_rate',
  'amplification',
] as const;
/** Every SLI but two is a fraction 0..1: tcaf is calls per task and amplification attempts per call. */
const FRACTIONS = new Set<string>(SLI_NAMES.filter((sli) => sli !== 'tcaf' && sli !== 'amplification'));

export function parseSliCondition(text: string, what: string): SliCondition {
  const match = /^\s*([a-z_]+)\s*(>=|<=|>|<)\s*(\d+(?:\.\d+)?)\s*(%)?\s*$/i.exec(text);
  const sli = match?.[1]!.toLowerCase();
  if (!match || !(SLI_NAMES as readonly string[]).includes(sli!)) {
    throw new InputError(
      `${what}: "${text}" is not an SLI threshold; write e.g. "tcsr >= ` +
        `0.95", "eta >= 90%"; SLIs: ${SLI_NAMES.join(', ')}`,
    );
  }
  let value = Number(match[3]);
  if (match[4] === '%') {
    if (!FRACTIONS.has(sli!)) throw new InputError(`${what}: "${text}": ${sli} is not a fraction; give a number`);
    value /= 100;
  }
  if (FRACTIONS.has(sli!) && value > 1)
    throw new InputError(`${what}: "${text}": ${sli} is a fraction 0..1 (or a percentage with %)`);
  return { text: text.trim(), sli: sli!, op: match[2] as SliCondition['op'], value };
}

const HTTP_METHODS = /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\s+(\S+)\s*$/i;

/** "GET /health" → method and url (a path alone is taken on `base`, the load's origin). */
export function parseRequestLine(
  text: string,
  what: string,
  base: string | undefined,
): { method: string; url: string } {
  const match = HTTP_METHODS.exec(text.trim());
  if (!match)
    throw new InputError(
      `${what}: "${text}" is not "METHOD URL", e.g. "GET http://127.0.0.1:8000/health" or "GET /health"`,
    );
  const target = match[2]!;
  if (target.startsWith('/')) {
    if (base === undefined)
      throw new InputError(
        `${what}: "${target}" is a path and there is no load to take its host from; give the whole URL`,
      );
    return { method: match[1]!.toUpperCase(), url: new URL(target, base).href };
  }
  return { method: match[1]!.toUpperCase(), url: target };
}

/** Whether a string expectation is an HTTP check ("GET … -> …") rather than an SLO. */
export function looksLikeHttpCheck(text: string): boolean {
  return /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\s/i.test(text.trim());
}

/** "GET /health -> $.circuit == "open"": the request line and the predicate (default status < 400). */
export function parseHttpLine(
  text: string,
  what: string,
  base: string | undefined,
): { method: string; url: string; predicate: Predicate } {
  const [line, ...rest] = text.split(/\s*(?:->|→)\s*/);
  const request = parseRequestLine(line!, what, base);
  return { ...request, predicate: parsePredicate(rest.length > 0 ? rest.join(' -> ') : DEFAULT_PREDICATE, what) };
}
