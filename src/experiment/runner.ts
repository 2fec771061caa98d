/**
 * Runs an experiment: baseline → inject → recover on one timeline (t = 0 when the load's clock
 * starts), faults set and cleared live on the planes, checks and commands in their windows, abort
 * rules watched while faults act; then every expectation judged (evaluate.ts).
 *
 *   t=0 ─ load (open loop) ──────────────────────────────────────────────────────────────▶ end
 *        │ baseline        │ inject: fault steps on/off at the load's edges │ recover       │
 *        │ steady checks   │ expect checks, commands, tool-call/probe steps │ steady checks │
 *        └ abort rules watch each settled second and their HTTP checks while faults act ┘
 *
 * Every fault is cleared whatever happens: at its step's end, at once when an abort rule fires
 * (the load then runs on until the recovery is judged: recover_within after the abort, and a second
 * to see the steady state; to its end without recover_within), and in
 * `finally` on errors and cancellation (Ctrl-C). A control plane's faults also carry their step's
 * length, so they expire on the plane even if this process is killed outright.
 */
import { CancelledError, OperationalError, InputError, messageOf } from '../kernel/errors.js';
import { beginMeasuring, measuredRuns } from '../measuring.js';
import { formatAddress, mappingInFrontOf, parseMapping, type Mapping } from '../proxy/mapping.js';
import { generatorBehindText, generatorLateness, LiveCounters, type RequestSamples } from '../load/index.js';
import type { ProxyCounters } from '../proxy/index.js';
import { plural } from '../kernel/plural.js';
import { ControlClient, startProxyPlane, type ProxyPlane } from './adapters/proxy.js';
import { policyLookup, refuseInProduction, type SafetyPolicy } from './adapters/policy.js';
import {
  runLoad,
  ScheduleEnd,
  warmUpLoad,
  WARM_REQUESTS_PER_CONNECTION,
  type OpenLoopResult,
  type SecondBucket,
  type WarmUp,
} from './adapters/load.js';
import { runToolcallStep } from './adapters/toolcall.js';
import { observe, runCommandSpec, type CommandOutcome } from './probes.js';
import { EXPECTATION_COMMAND_WHY, ROLLBACK_WHY, programsOf } from './programs.js';
import type { ProgramPolicy } from '../consent/index.js';
import {
  listensAt,
  proxyAtLoadUrl,
  refusalAt,
  tryUrl,
  unreachableRemotes,
  urlAddress,
  type Unreachable,
} from './preflight.js';
import { unmetClause } from './predicate.js';
import { evaluate, timelineOf } from './evaluate.js';
import { asRan } from './timeline.js';
import {
  IN_FRONT_MAPPING,
  type AbortRule,
  type Experiment,
  type FaultStep,
  type HttpCheck,
  type ProbeStep,
  type ToolcallStep,
} from './model.js';
import type { CheckObservation, ExperimentResult, FaultRecord, PlaneStepRecord } from './result.js';
import { PromqlWatch } from './promql-watch.js';
import type { ExperimentMetrics } from '../metrics/index.js';

export interface RunOptions {
  policy: SafetyPolicy;
  /** Which programs may start (src/consent): the owner's at the shell, an agent's over MCP. */
  programs: ProgramPolicy;
  /** After a cancellation, each rollback is ended after at most this long (default CANCELLED_ROLLBACK_MS). */
  cancelledRollbackMs?: number;
  /** Cancels the run: every fault cleared, every process and socket closed, then a CancelledError. */
  signal?: AbortSignal;
  onProgress?: (progress: RunProgress) => void;
  /**
   * Drives the load instead of the open loop (a scenario's closed-loop capacity run): started at once, as a run
   * without load is, the faults switched by timers; the run ends when it settles.
   */
  closedLoop?: (connectTo: { host: string; port: number } | undefined) => Promise<unknown>;
  /**
   * The url alone (a scenario's, named `url` as its arguments say): the app's dependencies are reached by the app
   * alone. Nothing listening at the url ends either at once: a run that every connection refused tests nothing.
   */
  preflightUrlOnly?: boolean;
  /** Where control-plane tokens are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Kept up to date as the run goes, for GET /metrics (src/metrics/experiment.ts). */
  metrics?: ExperimentMetrics;
  /** What the person should know before the load starts (a dependency that does not answer). */
  onNotice?: (message: string) => void;
  /** The output of the command after `--` as it comes (the report keeps its tail): a person watches it. */
  onCommandOutput?: (chunk: Buffer) => void;
}

export interface RunProgress {
  doneMs: number;
  totalMs: number;
  message: string;
  /** The load so far: ms since its clock started, requests settled and in flight, errors, open connections. */
  load?: { elapsedMs: number; settled: number; inFlight: number; errors: number; connections: number };
}

/** A run's result, with what the runner measured it from: the load's own result and the proxy's last counters. */
export interface RunOutcome {
  result: ExperimentResult;
  load: OpenLoopResult | undefined;
  /** The process's warm-up that ran before the open loop (now or earlier): undefined when none did. */
  warmUp: WarmUp | undefined;
  proxy: { counters: ProxyCounters; ports: number[] } | undefined;
}

interface ActiveFault {
  step: FaultStep;
  record: FaultRecord;
  id: string | undefined;
}

/** After an abort's recover_within, how long the run goes on: the steady state must be seen again to be judged. */
export const RECOVERY_SEEN_MS = 1000;

/** How long a rollback may run once the call was cancelled (its own timeout, if shorter, still holds). */
export const CANCELLED_ROLLBACK_MS = 10_000;

export async function runExperiment(experiment: Experiment, options: RunOptions): Promise<ExperimentResult> {
  return (await runExperimentFor(experiment, options)).result;
}

/** runExperiment, with the figures its result was made from (a scenario's report renders them: scenario/run.ts). */
export async function runExperimentFor(experiment: Experiment, options: RunOptions): Promise<RunOutcome> {
  if (experiment.untimed.length > 0)
    throw new InputError(
      `${experiment.untimed.join(', ')}: no durationMs, so held for the whole run, whose length is not given: ` +
        'give it (`run --duration 30s`, or duration in the file)',
    );
  const programs = programsOf(experiment);
  // Whatever acts on the system under test injects: a fault, a tool-call or probe step, and any
  // command (an expectation's or a rollback: it may change anything).
  if (experiment.steps.length > 0 || programs.length > 0) refuseInProduction('run the experiment', options.policy);
  // Every program is allowed (or a person accepted it) before anything runs, or nothing runs.
  await options.programs.approve(programs, options.signal);
  const run = new ExperimentRun(experiment, options);
  return run.execute();
}

/**
 * One run's state. Long because the run is one timeline whose parts (switches, checks, abort
 * rules, plane steps) share its clock and its cleanup; each part is a method of its own.
 */
class ExperimentRun {
  private readonly env: NodeJS.ProcessEnv;
  private readonly startedAt = new Date();
  private t0 = performance.now();
  private proxy: ProxyPlane | undefined;
  private readonly controls = new Map<string, ControlClient>();
  /** Moments whose fault switch is done, and what waits to run at a moment until it is (whenSwitched). */
  private readonly switchedAt = new Set<number>();
  private readonly dueAfterSwitch = new Map<number, Array<() => void>>();
  private readonly faults: ActiveFault[];
  private readonly steps: PlaneStepRecord[] = [];
  private readonly checks: Record<string, CheckObservation[]> = {};
  private readonly commands: ExperimentResult['commands'] = [];
  private readonly connectFailures: Record<string, number> = {};
  /** Remotes that did not accept a connection before the first fault (preflight, then the baseline). */
  private readonly unreachable = new Map<string, Unreachable>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly pending: Array<Promise<unknown>> = [];
  /** Aborted when an abort rule fires (and in cleanup): stops injecting plane steps and abort checks. */
  private readonly halt = new AbortController();
  /** Aborted at the end of the run only: the checks and commands of expectations stop then. */
  private readonly finish = new AbortController();
  private aborted: ExperimentResult['aborted'] = null;
  private readonly abortStreaks = new Map<AbortRule, number>();
  private readonly warnings: string[] = [];
  private clockStarted = false;
  /** The last progress reported, in ms: progress only ever increases (MCP's rule). */
  private reportedMs = -1;
  private readonly live = new LiveCounters();
  private readonly promql: PromqlWatch;
  /** Where the run ends when it ends early: an abort's recovery judged (endAfterAbort), a command after `--` exited. */
  private readonly scheduleEnd = new ScheduleEnd();

  /** As planned; `experiment` is the run as it ran once an abort or an early end cut its windows (asRan). */
  private readonly planned: Experiment;
  /** Each expectation's timers not yet fired, by id: an abort moves its window, and they move with it. */
  private readonly timersOf = new Map<string, NodeJS.Timeout[]>();
  /** The commands of expectations started (a moved window starts none twice). */
  private readonly commandsStarted = new Set<string>();

  constructor(
    private experiment: Experiment,
    private readonly options: RunOptions,
  ) {
    this.planned = experiment;
    this.env = options.env ?? process.env;
    this.promql = new PromqlWatch(experiment, options.policy, this.env);
    this.faults = experiment.steps
      .filter((step): step is FaultStep => step.kind === 'fault')
      .map((step) => ({
        step,
        id: undefined,
        record: {
          index: step.index,
          name: step.name,
          type: step.config.type,
          where:
            step.placement.plane === 'proxy'
              ? `#${step.placement.target}`
              : `${step.placement.control}/${step.placement.target}`,
          plannedFromMs: step.atMs,
          plannedToMs: step.atMs + step.forMs,
          onAtMs: null,
          offAtMs: null,
          acted: null,
          actedDetail: 'never switched on',
        },
      }));
  }

  private now(): number {
    return performance.now() - this.t0;
  }

  async execute(): Promise<RunOutcome> {
    const { experiment } = this;
    const signal = this.options.signal;
    // Cancelled: the proxy's faults go at once; the plane steps, checks and commands stop.
    const onCancel = (): void => {
      this.clearAllNow('cancelled');
      this.halt.abort();
      this.finish.abort();
    };
    signal?.addEventListener('abort', onCancel, { once: true });
    let load: OpenLoopResult | undefined;
    let warmUp: WarmUp | undefined;
    let rollbacks: ExperimentResult['rollbacks'] = [];
    let started = false;
    // Optional work (the listing thread's warm-up) holds while this run measures (src/measuring.ts).
    const endMeasuring = beginMeasuring();
    try {
      if (signal?.aborted) throw new CancelledError('experiment cancelled');
      await this.preflight();
      await this.startPlanes();
      started = true;
      this.options.metrics?.begin(
        experiment.title,
        this.faults.map(({ step }) => ({ name: step.name, fault: step.config.type })),
        experiment.expectations.map((expectation) => expectation.title),
        () => this.proxy?.lastCounters(),
      );
      const { closedLoop } = this.options;
      // At the load's own rate (capped): what is warmed is what this run will meet (scenario/warm-up.ts); but not
      // again, faster, while another run of this process measures (this one counts itself).
      if (experiment.load && !closedLoop)
        warmUp = await warmUpLoad(signal, experiment.load.clients * experiment.load.rps, () => measuredRuns() > 1);
      if (signal?.aborted) throw new CancelledError('experiment cancelled');
      const ticker = setInterval(() => this.progress(), 1000);
      this.timers.push(ticker);
      if (experiment.load && !closedLoop) {
        // Through a scenario's proxy, a fault at 0 goes on at the edge after the warm requests (warm-up.ts).
        const warms = experiment.front !== undefined;
        const edges = this.edges(warms);
        if (!warms) await this.switchAt(0);
        load = await runLoad({
          plan: experiment.load,
          connectTo: this.connectTo(),
          warmRequestsPerConnection: warms ? WARM_REQUESTS_PER_CONNECTION : 0,
          live: this.live,
          edgesMs: edges,
          onEdge: (index) => this.switchAt(edges[index]!),
          onStart: (startedAt) => this.startClock(startedAt),
          onSecond: (bucket) => this.watchSecond(bucket),
          signal,
          watchLoadOf: this.proxy?.load,
          scheduleEnd: this.scheduleEnd,
        });
      } else {
        this.startClock();
        await this.switchAt(0);
        this.startWhileCommand();
        // Tracked: a switch that throws (the proxy thread gone) is a warning of the run, never an unhandled rejection.
        for (const at of this.edges())
          this.timers.push(
            setTimeout(() => this.track(this.switchAt(at)), Math.max(0, this.t0 + at - performance.now())),
          );
        if (closedLoop) await closedLoop(this.connectTo());
        else
          await new Promise<void>((resolve, reject) => {
            this.at(experiment.durationMs, resolve);
            this.scheduleEnd.on((atMs) => this.at(atMs, resolve));
            signal?.addEventListener('abort', () => reject(new CancelledError('experiment cancelled')), { once: true });
          });
      }
      // Faults that lasted to the end stay on until the last request settled; off now. Plane
      // steps and commands still running finish (each within its own bound), then the run ends.
      await this.switchOffAll();
      // The run's end is all of its progress (the last request may settle before its duration's end),
      // and the ticker's last report was up to a second before it.
      this.progress(true);
      this.asRanTo(this.scheduleEnd.atMs ?? experiment.durationMs);
      await this.settlePending();
      if (signal?.aborted) throw new CancelledError('experiment cancelled');
    } finally {
      signal?.removeEventListener('abort', onCancel);
      endMeasuring();
      for (const timer of this.timers) clearTimeout(timer);
      this.halt.abort();
      this.finish.abort();
      await this.cleanUp();
      // Once the run started, whatever happened (cancellation and errors too); every fault is already cleared.
      if (started) rollbacks = await this.runRollbacks();
    }
    const counters = this.proxy?.lastCounters();
    return {
      result: this.result(load, rollbacks),
      load,
      warmUp,
      proxy: counters && this.proxy ? { counters, ports: [...this.proxy.ports] } : undefined,
    };
  }

  /** Where the load sends: the proxy in front of its url, when there is one. */
  private connectTo(): { host: string; port: number } | undefined {
    return this.proxy && this.experiment.proxies.length === 0
      ? { host: '127.0.0.1', port: this.proxy.ports[0]! }
      : undefined;
  }

  /** The proxies (with the in-front mapping when the load goes through one) and the control planes, checked before
   * anything is set. */
  private async startPlanes(): Promise<void> {
    const { experiment } = this;
    for (const plane of experiment.control) {
      const token = this.env[plane.tokenEnv]?.trim();
      if (!token)
        throw new InputError(`control.${plane.name}: its token is read from ${plane.tokenEnv}, which is not set`);
      const client = new ControlClient(plane, token, policyLookup(this.options.policy));
      await client.check();
      this.controls.set(plane.name, client);
    }
    let mappings: Mapping[] = experiment.proxies;
    if (
      experiment.load &&
      mappings.length === 0 &&
      (experiment.front || this.faults.some((fault) => fault.step.placement.plane === 'proxy'))
    ) {
      mappings = [
        experiment.front?.mapping ?? parseMapping(mappingInFrontOf(new URL(experiment.load.url), IN_FRONT_MAPPING)),
      ];
    }
    if (mappings.length === 0) return;
    // Protocol-aware for HTTP faults, and on a mapping that says its protocol (redis://, http://),
    // so a network fault there is counted in that protocol's unit too (commands, requests).
    const http =
      experiment.front?.http ??
      (mappings.some((mapping) => mapping.protocol !== undefined) ||
        this.faults.some((fault) => fault.step.placement.plane === 'proxy' && fault.step.config.kind === 'http'));
    this.proxy = await startProxyPlane({
      mappings,
      http,
      seed: experiment.seed,
      insecureTls: experiment.load ? !experiment.load.rejectUnauthorized : false,
      policy: this.options.policy,
      onConnectFailure: (reason, mappingIndex) => {
        // The warm requests' failures are in no figure: a scenario's front counts from the clock's start.
        if (experiment.front && !this.clockStarted) return;
        this.connectFailures[reason] = (this.connectFailures[reason] ?? 0) + 1;
        this.noteBaselineFailure(mappings[mappingIndex], reason);
      },
    });
  }

  /**
   * Before anything starts: nothing listening at the load's url ends the run at once (nothing
   * would be tested); a mapping's remote that does not answer is said now, and makes the run
   * unable to pass (evaluate.ts), since the faults would act on a dependency that was never there.
   */
  private async preflight(): Promise<void> {
    const { experiment } = this;
    const lookup = policyLookup(this.options.policy);
    if (experiment.load) {
      const { host, port } = urlAddress(experiment.load.url);
      const why = await tryUrl(experiment.load.url, lookup);
      const name = this.options.preflightUrlOnly ? 'url' : 'load.url';
      // An experiment's load aimed at one of its own proxies is told so (a scenario's url is the user's own).
      const ownProxy = this.options.preflightUrlOnly ? undefined : proxyAtLoadUrl(experiment.proxies, host, port);
      if (why !== undefined)
        throw new OperationalError(
          `${name} ${experiment.load.url}: ${refusalAt(formatAddress(host, port), why)}; ` +
            `${ownProxy ?? (listensAt(why) ? `fix ${name}` : `start the app, or fix ${name}`)}: nothing was run`,
        );
    }
    if (this.options.preflightUrlOnly) return;
    for (const down of await unreachableRemotes(experiment.proxies, lookup)) {
      this.unreachable.set(down.where, down);
      this.options.onNotice?.(
        `preflight: the dependency ${down.where} (${down.address}) does not accept connections (${down.why}); ` +
          'the run goes on, but it cannot pass: the faults would act on a dependency that is not there',
      );
    }
  }

  /** A connect that failed before the first fault went on: the dependency was down in the baseline. */
  private noteBaselineFailure(mapping: Mapping | undefined, reason: string): void {
    if (!mapping || (this.clockStarted && this.now() >= this.experiment.phases.inject.fromMs)) return;
    if (this.faults.some((fault) => fault.record.onAtMs !== null)) return;
    const where = mapping.name === IN_FRONT_MAPPING ? 'load.url' : mapping.name ? `#${mapping.name}` : mapping.text;
    if (!this.unreachable.has(where))
      this.unreachable.set(where, {
        where,
        address: formatAddress(mapping.remoteHost, mapping.remotePort),
        why: `${reason} in the baseline`,
      });
  }

  /** The moments faults switch, inside the run (those at 0 are set before the load starts; those at its end when it has
   * drained). */
  private edges(atZero = false): number[] {
    const moments = new Set<number>();
    for (const { step } of this.faults) {
      if (step.atMs > 0 || atZero) moments.add(step.atMs);
      if (step.atMs + step.forMs < this.planned.durationMs) moments.add(step.atMs + step.forMs);
    }
    return [...moments].sort((a, b) => a - b);
  }

  /**
   * When the load's clock starts (or the run's, without load): every timed part is scheduled from here. `startedAt`
   * is the load's own start (performance.timeOrigin-based): the news of it comes from the generator thread, late on a
   * loaded machine, and a clock started then put the faults' switch times early (off at 6.87 s for an edge at 7 s).
   */
  private startClock(startedAt?: number): void {
    if (this.clockStarted) return;
    this.clockStarted = true;
    this.t0 = startedAt === undefined ? performance.now() : startedAt - performance.timeOrigin;
    for (const step of this.experiment.steps) {
      if (step.kind === 'toolcall' || step.kind === 'probe')
        this.at(step.atMs, () => this.track(this.runPlaneStep(step)));
    }
    for (const expectation of this.experiment.expectations) this.scheduleExpectation(expectation);
    const inject = this.experiment.phases.inject;
    for (const rule of this.experiment.abort)
      if (rule.kind === 'http') this.scheduleAbortCheck(rule, inject.fromMs, inject.toMs);
    this.promql.start({
      at: (ms, run, key) => this.at(ms, run, key),
      track: (work) => this.track(work),
      now: () => this.now(),
      finish: this.finish.signal,
      halt: this.halt.signal,
      abort: (rule, figure) => this.triggerAbort(rule, figure),
      warn: (line) => this.warnings.push(line),
    });
  }

  /**
   * Runs `run` at `ms` of the run's clock, once the faults switching at that moment are switched (whenSwitched).
   * `key`: the expectation it is for (moveWindows).
   */
  private at(ms: number, run: () => void, key?: string): void {
    const timer = setTimeout(() => this.whenSwitched(ms, run), Math.max(0, this.t0 + ms - performance.now()));
    this.timers.push(timer);
    if (key === undefined) return;
    const timers = this.timersOf.get(key);
    if (timers) timers.push(timer);
    else this.timersOf.set(key, [timer]);
  }

  /** An expectation's checks, polls or command over its window, from `notBeforeMs` on. */
  private scheduleExpectation(expectation: Experiment['expectations'][number], notBeforeMs = 0): void {
    const { id, window } = expectation;
    if (expectation.kind === 'http') this.scheduleCheck(id, expectation.check, expectation.mode, window, notBeforeMs);
    if (expectation.kind === 'promql') this.promql.schedule(expectation, notBeforeMs);
    if (expectation.kind === 'command' && id !== this.experiment.whileCommand && window.fromMs >= notBeforeMs) {
      const command = expectation.command;
      this.at(
        window.fromMs,
        () => {
          if (this.commandsStarted.has(id)) return;
          this.commandsStarted.add(id);
          this.track(this.runExpectationCommand(id, command));
        },
        id,
      );
    }
  }

  /**
   * An abort moved windows (asRan): inject ends at it, recovery is judged from it. What was scheduled in an old window
   * and has not run yet is dropped, and what its new one holds from now on is scheduled, so the steady state after
   * recovery is probed when it is judged, not after the run has ended. What is due from the abort on runs at once.
   */
  private moveWindows(ran: Experiment, abortedAtMs: number): void {
    for (const expectation of ran.expectations) {
      const before = this.experiment.expectations.find((candidate) => candidate.id === expectation.id);
      if (
        !before ||
        (before.window.fromMs === expectation.window.fromMs && before.window.toMs === expectation.window.toMs)
      )
        continue;
      for (const timer of this.timersOf.get(expectation.id) ?? []) clearTimeout(timer);
      this.timersOf.delete(expectation.id);
      this.scheduleExpectation(expectation, abortedAtMs);
    }
    this.experiment = ran;
  }

  /**
   * A command, check or plane step due at a fault's edge starts once the switch there is done, so it sees the fault
   * on (or off), never the moment before: a switch crosses to the proxy's thread or a control plane's API, which a
   * loaded machine or a remote plane may be slow to answer (a command due at a fault's start was seen to run
   * through it unfaulted). switchAt's own timers do not wait here.
   */
  private whenSwitched(ms: number, run: () => void): void {
    if (this.switchedAt.has(ms) || !this.edges(true).includes(ms)) return run();
    this.dueAfterSwitch.set(ms, [...(this.dueAfterSwitch.get(ms) ?? []), run]);
  }

  private track(work: Promise<unknown>): void {
    this.pending.push(work.catch((error: unknown) => this.warnings.push(messageOf(error))));
  }

  /**
   * Switches at one moment: the steps ending then go off first, then those starting go on; then what is due at that
   * moment runs (whenSwitched).
   */
  private async switchAt(atMs: number): Promise<void> {
    try {
      const work: Array<Promise<void>> = [];
      for (const fault of this.faults)
        if (fault.id !== undefined && fault.step.atMs + fault.step.forMs === atMs) work.push(this.switchOff(fault));
      await Promise.all(work);
      if (this.aborted || this.options.signal?.aborted) return;
      await Promise.all(
        this.faults
          .filter((fault) => fault.step.atMs === atMs && fault.record.onAtMs === null)
          .map((fault) => this.switchOn(fault)),
      );
    } finally {
      this.switchedAt.add(atMs);
      const due = this.dueAfterSwitch.get(atMs) ?? [];
      this.dueAfterSwitch.delete(atMs);
      for (const run of due) run();
    }
  }

  private async switchOn(fault: ActiveFault): Promise<void> {
    const { step, record } = fault;
    try {
      if (step.placement.plane === 'proxy') fault.id = await this.proxy!.inject(step.placement.target, step.config);
      else
        fault.id = await this.controls.get(step.placement.control)!.inject(step.placement.target, step.raw, step.forMs);
      record.onAtMs = this.clockStarted ? this.now() : 0;
      record.actedDetail = 'set';
      this.options.metrics?.step(step.name, step.config.type, true);
    } catch (error) {
      record.actedDetail = `could not be set: ${messageOf(error)}`;
      this.warnings.push(`${step.name}: ${record.actedDetail}`);
    }
  }

  /**
   * The fault is recorded off once the clear has been answered, as it is recorded on once the set has: until then a
   * blackhole may still hold what is sent, and the windows judged as "during" must include that time.
   */
  private async switchOff(fault: ActiveFault): Promise<void> {
    const id = fault.id;
    if (id === undefined) return;
    fault.id = undefined;
    const { placement } = fault.step;
    let recorded = false;
    const recordOff = () => {
      if (recorded) return;
      recorded = true;
      fault.record.offAtMs = this.now();
      this.options.metrics?.step(fault.step.name, fault.step.config.type, false);
    };
    try {
      if (placement.plane === 'proxy') {
        await this.proxy!.clear(id);
        recordOff();
        const { acted, detail } = await this.proxy!.acted(id);
        fault.record.acted = acted;
        fault.record.actedDetail = detail;
        return;
      }
      const client = this.controls.get(placement.control)!;
      const count = await client.requestCount(id);
      fault.record.acted = typeof count === 'string' ? null : count.count > 0;
      fault.record.actedDetail =
        typeof count === 'string' ? count : `the plane counted ${plural(count.count, count.unit)}`;
      await client.clear(id).catch((error: unknown) => this.warnings.push(`${fault.step.name}: ${messageOf(error)}`));
    } finally {
      recordOff();
    }
  }

  private async switchOffAll(): Promise<void> {
    await Promise.all(this.faults.map((fault) => this.switchOff(fault)));
  }

  /**
   * On cancellation: the proxy's faults go at once (the call is sent now, cleanUp awaits it); control planes in
   * cleanUp.
   */
  private clearAllNow(why: string): void {
    const cleared = this.proxy?.clearAll();
    if (cleared) this.track(cleared.catch((error: unknown) => this.warnings.push(messageOf(error))));
    for (const fault of this.faults) {
      if (fault.id !== undefined && fault.step.placement.plane === 'proxy') {
        fault.record.offAtMs = this.now();
        fault.record.actedDetail = `cleared (${why})`;
        fault.id = undefined;
        this.options.metrics?.step(fault.step.name, fault.step.config.type, false);
      }
    }
  }

  /** An abort rule fired: no more injection, every fault off now; the load runs on. */
  private triggerAbort(rule: string, figure: string): void {
    if (this.aborted) return;
    this.aborted = { atMs: this.now(), rule, figure };
    this.options.metrics?.abort();
    for (const fault of this.faults)
      if (fault.record.onAtMs === null)
        fault.record.actedDetail = 'not switched on: the experiment was aborted before its start';
    this.halt.abort();
    this.track(this.switchOffAll());
    this.endAfterAbort(this.aborted.atMs);
    const endMs = this.aborted.endedAtMs ?? this.planned.durationMs;
    this.moveWindows(asRan(this.planned, { abortedAtMs: this.aborted.atMs, endMs }), this.aborted.atMs);
  }

  /**
   * The windows as the run went (asRan): cut where it ended, and at the abort. Nothing changes for a run that went
   * as planned.
   */
  private asRanTo(endMs: number): void {
    const abortedAtMs = this.aborted?.atMs;
    if (abortedAtMs === undefined && endMs >= this.planned.durationMs) return;
    this.experiment = asRan(this.planned, { ...(abortedAtMs === undefined ? {} : { abortedAtMs }), endMs });
    for (const { record } of this.faults) record.plannedToMs = Math.min(record.plannedToMs, endMs);
  }

  /**
   * An abort ends the run once the recovery it must judge is judged: recover_within after it, plus RECOVERY_SEEN_MS
   * to see the steady state again, on a whole second. Without recover_within the run goes on to its end, so the
   * report still shows whether the system came back.
   */
  private endAfterAbort(atMs: number): void {
    const within = this.planned.recoverWithinMs;
    if (within === undefined) return;
    const endMs = Math.ceil((atMs + within + RECOVERY_SEEN_MS) / 1000) * 1000;
    if (endMs >= this.planned.durationMs || !this.aborted) return;
    this.aborted.endedAtMs = endMs;
    this.scheduleEnd.end(endMs);
  }

  private watchSecond(bucket: SecondBucket): void {
    this.options.metrics?.second(bucket);
    const inject = this.experiment.phases.inject;
    const startMs = bucket.second * 1000;
    if (this.aborted || startMs < Math.floor(inject.fromMs / 1000) * 1000 || startMs >= inject.toMs) return;
    for (const rule of this.experiment.abort) {
      if (rule.kind !== 'load') continue;
      const value =
        rule.metric === 'errors'
          ? bucket.requests === 0
            ? null
            : (bucket.errors / bucket.requests) * 100
          : rule.metric === 'p50'
            ? bucket.p50Ms
            : bucket.p95Ms;
      if (value === null) continue;
      const breached =
        rule.op === '>'
          ? value > rule.threshold
          : rule.op === '>='
            ? value >= rule.threshold
            : rule.op === '<'
              ? value < rule.threshold
              : value <= rule.threshold;
      const streak = breached ? (this.abortStreaks.get(rule) ?? 0) + 1 : 0;
      this.abortStreaks.set(rule, streak);
      if (streak >= rule.forSeconds) {
        const shown = rule.metric === 'errors' ? `${value.toFixed(1)}%` : `${value.toFixed(1)} ms`;
        this.triggerAbort(
          rule.text,
          `${rule.metric} ${shown} in second ${bucket.second} (${streak} second${streak > 1 ? 's' : ''} in a row)`,
        );
        return;
      }
    }
  }

  private scheduleCheck(
    id: string,
    check: HttpCheck,
    mode: string,
    window: { fromMs: number; toMs: number },
    notBeforeMs = 0,
  ): void {
    const observations: CheckObservation[] = (this.checks[id] ??= []);
    const probe = async (): Promise<void> => {
      const atMs = this.now();
      const seen = await observe(check, policyLookup(this.options.policy), this.finish.signal);
      if (this.finish.signal.aborted) return;
      const unmet = unmetClause(check.predicate, seen);
      observations.push({
        atMs,
        ok: unmet === undefined,
        detail: unmet ?? `status ${seen.status} in ${seen.latencyMs.toFixed(1)} ms`,
      });
    };
    if (window.toMs <= window.fromMs) return;
    const moments: number[] = [];
    if (mode === 'start' || mode === 'edge') moments.push(window.fromMs);
    if (mode === 'end' || mode === 'edge')
      moments.push(Math.max(window.fromMs, window.toMs - Math.min(500, (window.toMs - window.fromMs) / 2)));
    if (mode === 'continuous' || mode === 'eventually')
      for (let t = window.fromMs; t < window.toMs; t += check.everyMs) moments.push(t);
    for (const t of moments) if (t >= notBeforeMs) this.at(t, () => this.track(probe()), id);
  }

  private scheduleAbortCheck(rule: Extract<AbortRule, { kind: 'http' }>, fromMs: number, toMs: number): void {
    let streak = 0;
    for (let t = fromMs; t < toMs; t += rule.check.everyMs) {
      this.at(t, () => {
        if (this.aborted || this.halt.signal.aborted) return;
        this.track(
          observe(rule.check, policyLookup(this.options.policy), this.halt.signal).then((seen) => {
            if (this.halt.signal.aborted) return;
            const unmet = unmetClause(rule.check.predicate, seen);
            streak = unmet === undefined ? 0 : streak + 1;
            if (unmet !== undefined && streak >= rule.failures)
              this.triggerAbort(rule.text, `${streak} failed checks in a row; last: ${unmet}`);
          }),
        );
      });
    }
  }

  /** A person's command after `--`: started once the faults at 0 are on; the run ends when it exits. */
  private startWhileCommand(): void {
    const expectation = this.experiment.expectations.find((e) => e.id === this.experiment.whileCommand);
    if (expectation?.kind !== 'command') return;
    const streamed = this.runExpectationCommand(expectation.id, expectation.command, this.options.onCommandOutput);
    this.track(streamed.finally(() => this.scheduleEnd.end(this.now())));
  }

  private async runExpectationCommand(
    id: string,
    command: Experiment['rollbacks'][number],
    onOutput?: (chunk: Buffer) => void,
  ): Promise<void> {
    const startedAtMs = this.now();
    const outcome: CommandOutcome = await runCommandSpec(
      command,
      this.finish.signal,
      this.options.programs,
      EXPECTATION_COMMAND_WHY,
      command.timeoutMs,
      onOutput,
    );
    this.commands.push({
      id,
      startedAtMs,
      endedAtMs: startedAtMs + outcome.durationMs,
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      timedOut: outcome.timedOut,
      ...(outcome.startError ? { startError: outcome.startError } : {}),
      output: outcome.output,
    });
  }

  private async runPlaneStep(step: ToolcallStep | ProbeStep): Promise<void> {
    const record: PlaneStepRecord = {
      index: step.index,
      name: step.name,
      kind: step.kind,
      startedAtMs: null,
      endedAtMs: null,
    };
    this.steps.push(record);
    if (this.aborted) {
      record.error = 'not started: the experiment was aborted before its time';
      return;
    }
    record.startedAtMs = this.now();
    const signal =
      step.forMs === undefined
        ? this.halt.signal
        : AbortSignal.any([this.halt.signal, AbortSignal.timeout(step.forMs)]);
    try {
      if (step.kind === 'toolcall')
        record.slis = await runToolcallStep(step, this.options.policy, signal, () => undefined, this.options.programs);
      else {
        // Loaded when a probe step runs: the probe engine is most of a start-up every other run would pay for.
        const { runProbeStep } = await import('./adapters/probe.js');
        const { report, verdict } = await runProbeStep(
          step,
          signal,
          () => undefined,
          this.options.programs,
          this.options.policy.allowProduction,
        );
        record.probe = {
          verdict,
          summary: report.summary as unknown as Record<string, number>,
          failedLeaves: report.leaves.filter((leaf) => leaf.status === 'failed').map((leaf) => leaf.id),
          leaves: report.leaves.map((leaf) => ({ id: leaf.id, status: leaf.status })),
        };
        if (report.error) record.error = report.error;
      }
    } catch (error) {
      record.error =
        this.aborted && this.halt.signal.aborted
          ? 'cut: the experiment was aborted'
          : signal.aborted && !this.halt.signal.aborted
            ? `cut: not done within its for (${step.forMs} ms)`
            : messageOf(error);
    } finally {
      record.endedAtMs = this.now();
    }
  }

  private async settlePending(): Promise<void> {
    // New work may be tracked while waiting (a probe a timer started): wait until none is left.
    for (let seen = 0; seen < this.pending.length; ) {
      const batch = this.pending.slice(seen);
      seen = this.pending.length;
      await Promise.all(batch);
    }
  }

  /** Every fault this run set is cleared, on every plane, and the proxies stop. */
  private async cleanUp(): Promise<void> {
    this.clearAllNow('the run ended');
    for (const fault of this.faults)
      if (fault.id !== undefined)
        await this.switchOff(fault).catch((error: unknown) => this.warnings.push(messageOf(error)));
    await Promise.all(
      [...this.controls.values()].map((client) =>
        client.clearOwn().catch((error: unknown) => this.warnings.push(messageOf(error))),
      ),
    );
    await this.proxy?.stop();
    await Promise.all(this.pending);
  }

  private async runRollbacks(): Promise<ExperimentResult['rollbacks']> {
    const results: ExperimentResult['rollbacks'] = [];
    // Rollbacks run after a cancellation too (they undo what the run did), but bounded: each by its
    // own timeout, and once cancelled by CANCELLED_ROLLBACK_MS as well, so none outlives the call for long.
    const cap = this.options.cancelledRollbackMs ?? CANCELLED_ROLLBACK_MS;
    const cut = new AbortController();
    let cutTimer: NodeJS.Timeout | undefined;
    const onCancel = (): void => {
      cutTimer ??= setTimeout(() => cut.abort(), cap);
    };
    this.options.signal?.addEventListener('abort', onCancel, { once: true });
    if (this.options.signal?.aborted) onCancel();
    try {
      for (const rollback of this.experiment.rollbacks) {
        if (cut.signal.aborted) {
          results.push({
            command: commandText(rollback),
            exitCode: null,
            timedOut: true,
            startError: "not started: the cancelled run's rollback time was up",
          });
          continue;
        }
        const outcome = await runCommandSpec(rollback, cut.signal, this.options.programs, ROLLBACK_WHY).catch(
          (error: unknown) => ({ exitCode: null, timedOut: false, startError: messageOf(error) }),
        );
        results.push({
          command: commandText(rollback),
          exitCode: outcome.exitCode,
          timedOut: outcome.timedOut || cut.signal.aborted,
          ...(outcome.startError ? { startError: outcome.startError } : {}),
        });
      }
    } finally {
      clearTimeout(cutTimer);
      this.options.signal?.removeEventListener('abort', onCancel);
    }
    return results;
  }

  private progress(ended = false): void {
    if (!this.options.onProgress || !this.clockStarted) return;
    const now = this.now();
    // As planned: an abort moves the windows (moveWindows), not the progress a client was told the run has.
    const { phases } = this.planned;
    const phase = now < phases.baseline.toMs ? 'baseline' : now < phases.inject.toMs ? 'inject' : 'recover';
    const doneMs = ended ? this.planned.durationMs : Math.min(now, this.planned.durationMs);
    if (doneMs <= this.reportedMs) return;
    this.reportedMs = doneMs;
    const on = this.faults.filter((fault) => fault.id !== undefined).map((fault) => fault.step.name);
    this.options.onProgress({
      doneMs,
      totalMs: this.planned.durationMs,
      message:
        `${this.aborted ? 'aborted, recovering' : phase} ` +
        `${(now / 1000).toFixed(0)}s/${(this.planned.durationMs / 1000).toFixed(0)}s` +
        `${on.length ? `; faults on: ${on.join(', ')}` : ''}`,
      ...(this.planned.load ? { load: this.loadProgress(now) } : {}),
    });
  }

  private loadProgress(elapsedMs: number): RunProgress['load'] {
    const { live } = this;
    const inFlight = live.dispatched - live.settled;
    // Counted as each request settles, as `settled` is, not from the seconds (each comes only once it is whole).
    return { elapsedMs, settled: live.settled, inFlight, errors: live.errors, connections: live.openConnections };
  }

  private result(load: OpenLoopResult | undefined, rollbacks: ExperimentResult['rollbacks']): ExperimentResult {
    const samples: RequestSamples | undefined = load?.samples;
    const evaluation = evaluate({
      experiment: this.experiment,
      samples,
      faults: this.faults.map((fault) => fault.record),
      steps: this.steps,
      checks: this.checks,
      commands: this.commands,
      aborted: this.aborted,
      promql: this.promql.observations,
      unreachable: [...this.unreachable.values()],
    });
    this.options.metrics?.states(evaluation.expectations);
    const { experiment } = this;
    // The load's figures carry this machine's lateness: said with the verdict, which it may have swayed.
    const behind = load ? generatorBehindText(generatorLateness(load)) : null;
    if (behind !== null) this.warnings.push(behind);
    return {
      title: experiment.title,
      description: experiment.description,
      fileFormat: experiment.format,
      startedAt: this.startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      seed: this.proxy?.seed ?? experiment.seed ?? null,
      durationMs: experiment.durationMs,
      load:
        load && experiment.load
          ? {
              url: experiment.load.url,
              method: experiment.load.method,
              ratePerSecond: experiment.load.clients * experiment.load.rps,
              achievedRatePerSecond: load.achievedRatePerSecond,
              clients: experiment.load.clients,
              durationMs: experiment.load.durationMs,
              timeoutMs: experiment.load.timeoutMs,
              requests: load.requests,
              errors: load.errors,
              errorsByClass: load.errorsByClass,
              errorDetails: load.errorDetails,
              statusCodes: load.statusCodes,
              latency: load.latency,
              queued: load.queued,
              connectionsOpened: load.connectionsOpened,
              generatorLate: generatorLateness(load),
            }
          : null,
      proxies: (this.proxy ? (experiment.proxies.length > 0 ? experiment.proxies : []) : []).map((mapping, index) => ({
        mapping: mapping.text,
        port: this.proxy!.ports[index]!,
      })),
      control: experiment.control.map((plane) => plane.name),
      phases: experiment.phases,
      faults: this.faults.map((fault) => fault.record),
      steps: this.steps.sort((a, b) => a.index - b.index),
      timeline: samples ? timelineOf(samples, experiment.durationMs) : { bucketMs: 1000, buckets: [] },
      seconds: samples ? timelineOf(samples, experiment.durationMs, 1000).buckets : [],
      checks: this.checks,
      ...(this.promql.active ? { promql: this.promql.observations } : {}),
      commands: this.commands,
      expectations: evaluation.expectations,
      aborted: this.aborted,
      rollbacks,
      connectFailures: this.connectFailures,
      unreachable: [...this.unreachable.values()],
      injected: evaluation.injected,
      verdict: evaluation.verdict,
      // A fault that could not be set is a reason already (evaluate.ts): said once, not again as a warning.
      verdictReasons: [
        ...evaluation.reasons,
        ...this.warnings
          .filter((warning) => !evaluation.reasons.includes(warning))
          .map((warning) => `warning: ${warning}`),
      ],
    };
  }
}

function commandText(spec: Experiment['rollbacks'][number]): string {
  return Array.isArray(spec.command) ? spec.command.join(' ') : spec.command;
}
