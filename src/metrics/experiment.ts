/**
 * The experiment runner's metrics, updated as the run goes (the runner calls these hooks):
 *
 *   faultline_experiment_step_active{experiment,step,fault}          1 while the fault step is on
 *   faultline_experiment_expectation_state{experiment,expectation,state}
 *                                       1 for its state: pending, passed, failed, inconclusive
 *   faultline_experiment_aborted{experiment}                         1 once an abort rule fired
 *   faultline_experiment_load_achieved_rate_per_second{experiment}   requests in the last settled second
 *   faultline_experiment_load_requests_total{experiment}, _errors_total
 *   faultline_experiment_request_duration_seconds{experiment}        the load's latency histogram
 *
 * plus the proxy metrics (proxy.ts) of the runner's own proxies, labelled proxy="experiment".
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { LATENCY_BOUNDS_MS, type SecondBucket } from '../load/index.js';
import type { ProxyCounters } from '../proxy/index.js';
import { registerProxyMetrics } from './proxy.js';
import { histogramValues, registerSnapshot } from './snapshot.js';

export const EXPECTATION_STATES = ['pending', 'passed', 'failed', 'inconclusive', 'not_checked'] as const;

export class ExperimentMetrics {
  readonly registry = new Registry();
  private experiment = '';
  private proxies: () => ProxyCounters | undefined = () => undefined;
  private readonly stepActive = new Gauge({
    name: 'faultline_experiment_step_active',
    help: 'Whether the fault step is on (1) or off (0)',
    labelNames: ['experiment', 'step', 'fault'],
    registers: [this.registry],
  });
  private readonly expectationState = new Gauge({
    name: 'faultline_experiment_expectation_state',
    help: "1 for the expectation's current state (pending until it is judged)",
    labelNames: ['experiment', 'expectation', 'state'],
    registers: [this.registry],
  });
  private readonly aborted = new Gauge({
    name: 'faultline_experiment_aborted',
    help: 'Whether an abort rule fired (1)',
    labelNames: ['experiment'],
    registers: [this.registry],
  });
  private readonly rate = new Gauge({
    name: 'faultline_experiment_load_achieved_rate_per_second',
    help: 'Requests the load sent in its last settled second (by intended start)',
    labelNames: ['experiment'],
    registers: [this.registry],
  });
  private readonly requests = new Counter({
    name: 'faultline_experiment_load_requests_total',
    help: 'Requests the load sent (settled)',
    labelNames: ['experiment'],
    registers: [this.registry],
  });
  private readonly errors = new Counter({
    name: 'faultline_experiment_load_errors_total',
    help: 'Requests of the load that failed (refused, reset, timeout, 5xx, an unexpected status)',
    labelNames: ['experiment'],
    registers: [this.registry],
  });
  private readonly latencyCounts = new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
  private latencySumSeconds = 0;

  constructor() {
    registerSnapshot(this.registry, {
      name: 'faultline_experiment_request_duration_seconds',
      help: "The load's latency, from each request's intended start",
      type: 'histogram',
      collect: () =>
        this.experiment === ''
          ? []
          : histogramValues(
              'faultline_experiment_request_duration_seconds',
              { experiment: this.experiment },
              LATENCY_BOUNDS_MS.map((ms) => ms / 1000),
              this.latencyCounts,
              this.latencySumSeconds,
            ),
    });
    registerProxyMetrics(this.registry, () => {
      const counters = this.proxies();
      return counters ? [{ proxy: 'experiment', counters }] : [];
    });
  }

  /** A run begins: its title labels every series; every expectation is pending, every step off. */
  begin(
    title: string,
    steps: ReadonlyArray<{ name: string; fault: string }>,
    expectations: readonly string[],
    proxies: () => ProxyCounters | undefined,
  ): void {
    this.experiment = title;
    this.proxies = proxies;
    for (const step of steps) this.stepActive.set({ experiment: title, step: step.name, fault: step.fault }, 0);
    this.states(expectations.map((title) => ({ title, status: 'pending' })));
    this.aborted.set({ experiment: title }, 0);
    this.requests.inc({ experiment: title }, 0);
    this.errors.inc({ experiment: title }, 0);
  }

  step(name: string, fault: string, on: boolean): void {
    this.stepActive.set({ experiment: this.experiment, step: name, fault }, on ? 1 : 0);
  }

  abort(): void {
    this.aborted.set({ experiment: this.experiment }, 1);
  }

  states(expectations: ReadonlyArray<{ title: string; status: string }>): void {
    for (const { title, status } of expectations)
      for (const state of EXPECTATION_STATES)
        this.expectationState.set({ experiment: this.experiment, expectation: title, state }, state === status ? 1 : 0);
  }

  second(bucket: SecondBucket): void {
    const labels = { experiment: this.experiment };
    this.rate.set(labels, bucket.requests);
    this.requests.inc(labels, bucket.requests);
    this.errors.inc(labels, bucket.errors);
    bucket.latencyCounts?.forEach((count, index) => {
      this.latencyCounts[index] = (this.latencyCounts[index] ?? 0) + count;
    });
    this.latencySumSeconds += (bucket.latencySumMs ?? 0) / 1000;
  }
}
