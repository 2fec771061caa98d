/**
 * A validated experiment: what the reader (read.ts) makes of a file, and what the runner, the
 * reports and the exports read. Times are milliseconds from the start of the load (t = 0).
 */
import type { Mapping } from '../proxy/index.js';
import type { FaultConfig } from '../proxy/control/index.js';
import type { ScenarioSpec, Slo } from '../scenario/index.js';
import type { Plan as ToolcallPlan } from '../toolcall/plan.js';
import type { FamilyId } from '../probe/index.js';
import type { Predicate } from './predicate.js';
import type { Condition } from '../prometheus/index.js';

/** The load: the scenario tools' own validated open-loop settings. */
export type LoadPlan = Pick<
  ScenarioSpec,
  | 'url'
  | 'method'
  | 'body'
  | 'headers'
  | 'durationMs'
  | 'clients'
  | 'rps'
  | 'timeoutMs'
  | 'maxConnections'
  | 'expectStatus'
  | 'expectedStatus'
  | 'rejectUnauthorized'
  | 'targets'
>;

export interface ControlPlane {
  name: string;
  url: string;
  /** The variable its token is read from (never written in the file). */
  tokenEnv: string;
}

/** Where a fault step's fault is set: on a mapping of the runner's proxies, or through a control plane. */
export type FaultPlacement = { plane: 'proxy'; target: string } | { plane: 'control'; control: string; target: string };

export interface FaultStep {
  kind: 'fault';
  index: number;
  name: string;
  atMs: number;
  forMs: number;
  placement: FaultPlacement;
  /** Validated by the proxy's one validator; `raw` is what is sent (a control plane takes it as written). */
  config: FaultConfig;
  raw: Record<string, unknown>;
}

export interface McpTarget {
  command?: string;
  /** The argument that named command (`method[1].toolcall.command`), for consent and its refusals. */
  argument?: string;
  args: string[];
  url?: string;
}

export interface ToolcallStep {
  kind: 'toolcall';
  index: number;
  name: string;
  atMs: number;
  /** Undefined: it runs until done, within its plane's own bounds (the run waits for it). */
  forMs: number | undefined;
  server: McpTarget;
  plan: ToolcallPlan;
  calls: Array<{ tool: string; arguments: Record<string, unknown> }>;
  tasks: number;
  resilience: boolean;
  expect: SliCondition[];
}

export interface ProbeStep {
  kind: 'probe';
  index: number;
  name: string;
  atMs: number;
  forMs: number | undefined;
  server: McpTarget;
  families: FamilyId[];
  cases: number;
  allowWrites: boolean;
  callTimeoutMs: number;
  /** Whether a leaf that failed fails the step (false with expect: []). */
  mustPass: boolean;
}

export type Step = FaultStep | ToolcallStep | ProbeStep;

/** A threshold on one of a tool-call step's SLIs: "tcsr >= 0.95". */
export interface SliCondition {
  text: string;
  sli: string;
  op: '<' | '<=' | '>' | '>=';
  value: number;
}

/** A window of the run: a phase, a step's own window, or explicit bounds. */
export interface Window {
  /** As written (or the default): inject, baseline, recover, run, a step name, "10s..20s". */
  label: string;
  fromMs: number;
  toMs: number;
}

export interface HttpCheck {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  predicate: Predicate;
  everyMs: number;
  timeoutMs: number;
}

export interface CommandSpec {
  /** The argument it was read from (`expect[0].command`, `rollbacks[1].command`), for consent and its refusals. */
  argument: string;
  /** argv, or one string run through /bin/sh -c. */
  command: string[] | string;
  timeoutMs: number;
  cwd: string | undefined;
  env: Record<string, string>;
}

/** A PromQL check (read-promql.ts): the query, asked every `everyMs` over its window, and what its value must be. */
export interface PromqlCheck {
  /** The Prometheus server's base URL (checked against the target policy when read). */
  url: string;
  query: string;
  condition: Condition;
  everyMs: number;
  timeoutMs: number;
}

export type CheckMode = 'continuous' | 'eventually' | 'start' | 'end' | 'edge';

/**
 * Why an expectation is there: the steady state before the faults and after recovery, the steady
 * state over a run that injects nothing (`steady`, judged once), or `expect`.
 */
export type ExpectationRole = 'steady-before' | 'steady-after' | 'steady' | 'expect';

/** One thing the experiment claims; each gets a verdict. */
export type Expectation =
  | {
      kind: 'slo';
      id: string;
      title: string;
      slo: Slo;
      window: Window;
      role: ExpectationRole;
    }
  | {
      kind: 'http';
      id: string;
      title: string;
      check: HttpCheck;
      mode: CheckMode;
      window: Window;
      role: ExpectationRole;
    }
  | { kind: 'command'; id: string; title: string; command: CommandSpec; window: Window; role: 'expect' }
  | {
      kind: 'promql';
      id: string;
      title: string;
      check: PromqlCheck;
      window: Window;
      role: ExpectationRole;
    };

export type AbortRule =
  | {
      kind: 'load';
      text: string;
      metric: 'errors' | 'p50' | 'p95';
      op: '>' | '>=' | '<' | '<=';
      threshold: number;
      forSeconds: number;
    }
  | { kind: 'http'; text: string; check: HttpCheck; failures: number }
  /** Aborts when the query's value meets `check.condition` on `polls` consecutive polls. */
  | { kind: 'promql'; text: string; check: PromqlCheck; polls: number };

export interface Phases {
  /** [0, first fault on). */
  baseline: Window;
  /** [first fault on, last fault off). */
  inject: Window;
  /** [last fault off, end). */
  recover: Window;
}

export interface Experiment {
  title: string;
  description: string;
  /** 'mcp-chaos-monkey' when the file was that tool's scenario JSON. */
  format: 'faultline' | 'mcp-chaos-monkey';
  seed: number | undefined;
  load: LoadPlan | undefined;
  /** The run's length: the load's duration, or `duration` without load. */
  durationMs: number;
  /** The runner's proxies; empty with a load means one in front of the load's url. */
  proxies: Mapping[];
  /**
   * A scenario's proxy in front of the load's url (scenario/compile.ts): started even without a fault step (the
   * baseline is measured through it), its connections warmed before the clock starts (a fault at 0 is switched on
   * after that), and its connect failures counted from the clock's start. Parses HTTP only when `http`.
   */
  front?: { mapping: Mapping; http: boolean };
  control: ControlPlane[];
  steps: Step[];
  phases: Phases;
  /** steady state (before and after), expect, recover_within, tool-call and probe steps: in report order. */
  expectations: Expectation[];
  /** The steady-state SLOs, for recover_within. */
  steadySlos: Slo[];
  recoverWithinMs: number | undefined;
  abort: AbortRule[];
  rollbacks: CommandSpec[];
  /** mcp-chaos-monkey's faults without durationMs while the run's length is not given: `run` refuses them. */
  untimed: string[];
  /** The id of the command expectation whose end ends the run (a person's command after `--`), if any. */
  whileCommand?: string;
  /** Free text the file states and nothing checks (mcp-chaos-monkey's expectedBehavior and assertions). */
  notChecked: string[];
}

/** The name a fault step's proxy in front of the load's url answers to. */
export const IN_FRONT_MAPPING = 'load';
