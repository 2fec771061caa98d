/**
 * The runner's side of PromQL checks: each PromQL expectation asks Prometheus (`/api/v1/query`,
 * at the moment of asking) every `every` over its window and keeps what it read; each PromQL
 * abort rule asks the same way while faults act and aborts the run when its condition is met on
 * `polls` consecutive answers. The runner owns the clock and the timers; this file only asks,
 * reads and keeps (evaluate-promql.ts judges).
 */
import { authFor, judgeSamples, PrometheusClient, unmet, formatValue, seriesName } from '../prometheus/index.js';
import { policyLookup, type SafetyPolicy } from './adapters/policy.js';
import type { AbortRule, Experiment, PromqlCheck } from './model.js';

/** What one poll read: held, broken, or unknown (unreachable, a query error, no series, NaN). */
export interface PromqlObservation {
  atMs: number;
  state: 'held' | 'broken' | 'unknown';
  value: number | null;
  detail: string;
}

export interface PromqlHooks {
  /** `key`: the expectation the poll is for, so an abort that moves its window can move its polls. */
  at(ms: number, run: () => void, key?: string): void;
  track(work: Promise<unknown>): void;
  now(): number;
  /** Ends the expectations' polls (the run is over). */
  finish: AbortSignal;
  /** Ends the abort rules' polls (an abort fired, or the run is over). */
  halt: AbortSignal;
  abort(rule: string, figure: string): void;
  warn(line: string): void;
}

export class PromqlWatch {
  /** By expectation id, as the result carries them. */
  readonly observations: Record<string, PromqlObservation[]> = {};
  private readonly clients = new Map<string, PrometheusClient>();

  constructor(
    private readonly experiment: Experiment,
    private readonly policy: SafetyPolicy,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Whether the experiment has anything for Prometheus to answer. */
  get active(): boolean {
    return (
      this.experiment.expectations.some((e) => e.kind === 'promql') ||
      this.experiment.abort.some((rule) => rule.kind === 'promql')
    );
  }

  private hooks: PromqlHooks | undefined;

  /**
   * Schedules a PromQL expectation's polls over its window, from `notBeforeMs` on: at the run's clock start, and
   * again when an abort moved its window (the runner cleared the polls of the old one).
   */
  schedule(expectation: Experiment['expectations'][number], notBeforeMs = 0): void {
    const hooks = this.hooks;
    if (expectation.kind !== 'promql' || !hooks) return;
    const list: PromqlObservation[] = (this.observations[expectation.id] ??= []);
    const { check, window } = expectation;
    for (let t = window.fromMs; t < window.toMs; t += check.everyMs)
      if (t >= notBeforeMs) hooks.at(t, () => hooks.track(this.poll(check, hooks, hooks.finish, list)), expectation.id);
  }

  /** Schedules every poll from the run's clock start. */
  start(hooks: PromqlHooks): void {
    if (!this.active) return;
    this.hooks = hooks;
    for (const expectation of this.experiment.expectations) this.schedule(expectation);
    const inject = this.experiment.phases.inject;
    for (const rule of this.experiment.abort)
      if (rule.kind === 'promql') this.scheduleAbort(rule, inject.fromMs, inject.toMs, hooks);
  }

  private client(check: PromqlCheck): PrometheusClient {
    const key = `${check.url} ${check.timeoutMs}`;
    let client = this.clients.get(key);
    if (!client) {
      client = new PrometheusClient({
        url: check.url,
        lookup: policyLookup(this.policy),
        auth: authFor(check.url, this.env),
        timeoutMs: check.timeoutMs,
      });
      this.clients.set(key, client);
    }
    return client;
  }

  private async poll(
    check: PromqlCheck,
    hooks: PromqlHooks,
    signal: AbortSignal,
    list: PromqlObservation[],
  ): Promise<void> {
    if (signal.aborted) return;
    const atMs = hooks.now();
    const outcome = await this.client(check).query(check.query, new Date(), signal);
    if (signal.aborted) return;
    const reading = judgeSamples(outcome, check.condition);
    list.push({ atMs, state: reading.state, value: reading.value ?? null, detail: reading.detail });
  }

  private scheduleAbort(
    rule: Extract<AbortRule, { kind: 'promql' }>,
    fromMs: number,
    toMs: number,
    hooks: PromqlHooks,
  ): void {
    let streak = 0;
    let warned = false;
    for (let t = fromMs; t < toMs; t += rule.check.everyMs) {
      hooks.at(t, () => {
        if (hooks.halt.aborted) return;
        hooks.track(
          this.client(rule.check)
            .query(rule.check.query, new Date(), hooks.halt)
            .then((outcome) => {
              if (hooks.halt.aborted) return;
              // An abort rule states when to stop: met when any series meets its condition.
              const met = outcome.ok
                ? outcome.samples.find(
                    (sample) => !Number.isNaN(sample.value) && unmet(rule.check.condition, sample.value) === undefined,
                  )
                : undefined;
              if (!outcome.ok && !warned) {
                warned = true;
                hooks.warn(`abort_when ${rule.text}: could not be asked (${outcome.message}); it cannot abort then`);
              }
              streak = met ? streak + 1 : 0;
              if (met && streak >= rule.polls) {
                const name = seriesName(met.labels);
                hooks.abort(
                  rule.text,
                  `${formatValue(met.value)}${name && name !== '{}' ? ` (${name})` : ''}, ` +
                    `${rule.check.condition.text}, on ${streak} poll${streak > 1 ? 's' : ''} ` +
                    `in a row`,
                );
              }
            }),
        );
      });
    }
  }
}
