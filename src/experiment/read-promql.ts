/**
 * PromQL entries of an experiment file: any steady_state, expect or abort_when item may be
 *
 *   {prometheus: 'sum(rate(http_requests_total{code=~"5.."}[10s]))', below: 0.01}
 *
 * with `above`, `between: [low, high]` or Litmus promProbe's `comparator: {criteria, value}`;
 * `url` (else the file's top-level `prometheus: {url}`, else FAULTLINE_PROMETHEUS_URL), `every`
 * (default 1s), `timeout` (default 2s), `during` and `name`; an abort rule takes `for` (how long
 * the value must meet its condition before the run aborts; default one poll).
 *
 * The URL is checked against the target policy here, before anything runs. When the server
 * answers, each query is sent once so a malformed one is refused now, naming its entry; a server
 * that does not answer yet is no refusal (the run then says inconclusive for what it could not ask).
 */
import { InputError } from '../kernel/errors.js';
import { authFor, PROMETHEUS_ENV, PrometheusClient, readCondition } from '../prometheus/index.js';
import { checkUrl, policyLookup, type SafetyPolicy } from './adapters/policy.js';
import type { PromqlCheck } from './model.js';
import { durationField } from './timeline.js';

type Raw = Record<string, unknown>;

/** The longest query accepted. */
export const MAX_PROMQL_CHARS = 8192;

export interface PromqlContext {
  /** The file's `prometheus: {url}`, if any. */
  fileUrl: string | undefined;
  env: NodeJS.ProcessEnv;
  policy: SafetyPolicy;
  /** Servers found unreachable while reading: their other queries are not sent again. */
  unreachable: Set<string>;
}

export function promqlContext(file: Raw, policy: SafetyPolicy, env: NodeJS.ProcessEnv = process.env): PromqlContext {
  const top = file.prometheus as Raw | undefined;
  return { fileUrl: top?.url as string | undefined, env, policy, unreachable: new Set() };
}

/** Whether an item of steady_state, expect or abort_when is a PromQL check. */
export function isPromqlEntry(item: unknown): boolean {
  return typeof item === 'object' && item !== null && !Array.isArray(item) && 'prometheus' in item;
}

/** A readable title: the entry's name, or the query and its condition. */
export function promqlTitle(raw: Raw, check: PromqlCheck): string {
  return (raw.name as string | undefined) ?? `${check.query} ${check.condition.text}`;
}

export async function readPromqlCheck(raw: Raw, where: string, context: PromqlContext): Promise<PromqlCheck> {
  const query = typeof raw.prometheus === 'string' ? raw.prometheus.trim() : '';
  if (query === '') throw new InputError(`${where}.prometheus: a PromQL query (got an empty one)`);
  if (query.length > MAX_PROMQL_CHARS)
    throw new InputError(`${where}.prometheus: ${query.length} characters; at most ${MAX_PROMQL_CHARS}`);
  const condition = readCondition(raw, where);
  const [given, whereUrl] =
    raw.url !== undefined
      ? [String(raw.url), `${where}.url`]
      : context.fileUrl !== undefined
        ? [context.fileUrl, 'prometheus.url']
        : [context.env[PROMETHEUS_ENV.url]?.trim(), PROMETHEUS_ENV.url];
  if (!given)
    throw new InputError(
      `${where}: no Prometheus to ask; give url, a top-level ` +
        `prometheus: {url: http://127.0.0.1:9090}, or set ${PROMETHEUS_ENV.url}`,
    );
  const url = await checkUrl(given, context.policy, whereUrl);
  const everyMs = raw.every === undefined ? 1000 : durationField(raw.every, `${where}.every`);
  const timeoutMs = raw.timeout === undefined ? 2000 : durationField(raw.timeout, `${where}.timeout`);
  if (everyMs < 500) throw new InputError(`${where}.every: at least 500ms (Prometheus scrapes every few seconds)`);
  if (timeoutMs < 10 || timeoutMs > 60_000) throw new InputError(`${where}.timeout: 10ms to 60s`);
  const base = url.href.replace(/\/$/, '');
  const check: PromqlCheck = { url: base, query, condition, everyMs, timeoutMs };
  await refuseMalformed(check, where, context);
  return check;
}

/** Sends the query once; a query error from the server refuses the file, naming the entry. */
async function refuseMalformed(check: PromqlCheck, where: string, context: PromqlContext): Promise<void> {
  if (context.unreachable.has(check.url)) return;
  const client = new PrometheusClient({
    url: check.url,
    lookup: policyLookup(context.policy),
    auth: authFor(check.url, context.env),
    timeoutMs: Math.min(check.timeoutMs, 5000),
  });
  const outcome = await client.query(check.query);
  if (outcome.ok) return;
  if (outcome.kind === 'query' && /^bad_data/.test(outcome.message))
    throw new InputError(
      `${where}.prometheus: Prometheus refused the query: ${outcome.message.replace(/^bad_data: /, '')}`,
    );
  if (outcome.kind === 'unreachable') context.unreachable.add(check.url);
}

/** An abort_when entry: how many consecutive polls must meet the condition (`for`, default one poll). */
export function abortPolls(raw: Raw, check: PromqlCheck, where: string): number {
  if (raw.for === undefined) return 1;
  const forMs = durationField(raw.for, `${where}.for`);
  if (forMs < check.everyMs) throw new InputError(`${where}.for: at least one poll (every: ${check.everyMs} ms)`);
  return Math.round(forMs / check.everyMs);
}
