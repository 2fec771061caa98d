/**
 * From a checked file (shape.ts) to a validated Experiment: every field's meaning is checked by
 * the module that owns it — mappings by the proxy's parser and the target policy, faults by the
 * proxy's one validator (parseFaultConfig: camelCase or snake_case), the load by the scenario
 * tools' own argument check, SLOs by the scenario's parser, plans by the tool-call plane's — so
 * an experiment accepts and refuses exactly what those doors do. Every refusal is a
 * InputError naming the field as written (`method[2].fault: …`).
 *
 * mcp-chaos-monkey's scenario JSON is read as it is: `name` is the title, each of `faults` a step
 * from the start for its durationMs, `expectedBehavior` and `assertions` are reported, not checked.
 */
import { isAbsolute, resolve } from 'node:path';
import { InputError } from '../kernel/errors.js';
import { formatDuration } from '../duration.js';
import type { ScenarioLimits } from '../config.js';
import { inexpressible, parseMapping, validateHttpFault, type Mapping } from '../proxy/index.js';
import { parseFaultConfig } from '../proxy/control/index.js';
import { parseSlo, scenarioFromArguments, type Slo } from '../scenario/index.js';
import { checkProxyMappings, checkTokenEnv, checkUrl, type SafetyPolicy } from './adapters/policy.js';
import { readMcpStep } from './read-steps.js';
import { looksLikeHttpCheck, parseHttpLine, parseLoadAbort, parseRequestLine } from './conditions.js';
import { DEFAULT_PREDICATE, parsePredicate } from './predicate.js';
import {
  IN_FRONT_MAPPING,
  type AbortRule,
  type CheckMode,
  type CommandSpec,
  type ControlPlane,
  type Expectation,
  type Experiment,
  type FaultStep,
  type HttpCheck,
  type LoadPlan,
  type Step,
  type Window,
} from './model.js';
import { checkShape } from './shape.js';
import {
  abortPolls,
  isPromqlEntry,
  promqlContext,
  promqlTitle,
  readPromqlCheck,
  type PromqlContext,
} from './read-promql.js';
import {
  afterRecoveryWindow,
  durationField,
  injectingSteps,
  momentField,
  phasesOf,
  stepEnd,
  windowOf,
} from './timeline.js';

export interface ReadOptions {
  limits: ScenarioLimits;
  policy: SafetyPolicy;
  /** Mappings and control planes from the command line, added to the file's (--proxy, --admin). */
  extraProxies?: readonly string[];
  extraControl?: readonly ControlPlane[];
  /** Relative command cwd's resolve against this (the file's directory). */
  baseDir?: string;
  /** Where FAULTLINE_PROMETHEUS_URL and the Prometheus credentials are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * The run's length the person gave (`run --duration`), when the file gives none: how long
   * mcp-chaos-monkey's faults without a durationMs are held.
   */
  durationMs?: number;
  /**
   * A person's own command, given after `--` on the command line (never over MCP): the run lasts while it runs, the
   * faults held meanwhile, and its exit code is an expectation (`--`).
   */
  whileCommand?: readonly string[];
}

/** The expectation a command after `--` is. */
export const WHILE_COMMAND_ID = '--';

/** The command after `--`, checked: the run's length is its, so the file and the flags give none. */
function whileCommandOf(options: ReadOptions, fileGivesLength: boolean): readonly string[] | undefined {
  const argv = options.whileCommand;
  if (argv === undefined) return undefined;
  if (!Array.isArray(argv) || argv.length === 0 || argv.some((part) => typeof part !== 'string' || part === ''))
    throw new InputError('--: the command after it is empty');
  if (fileGivesLength)
    throw new InputError(
      '--: the run lasts while the command after -- runs, and the file gives its length already ' +
        '(load.duration or duration); drop one (a command during a load goes in expect)',
    );
  if (options.durationMs !== undefined)
    throw new InputError('--duration: the run lasts while the command after -- runs; give one or the other');
  return argv;
}

/** The command after `--` as an expectation over the whole run: its exit code says passed or failed. */
function whileCommandExpectation(argv: readonly string[], durationMs: number): Expectation {
  return {
    kind: 'command',
    id: WHILE_COMMAND_ID,
    title: `the command after --: ${argv.join(' ')}`,
    // Its own working directory and environment: the person's shell's.
    command: { argument: '--', command: [...argv], timeoutMs: durationMs, cwd: undefined, env: {} },
    window: { label: 'run', fromMs: 0, toMs: durationMs },
    role: 'expect',
  };
}

/** A fault without its own length, with no run length given either: planned for this long, and refused by the runner.
 * */
const UNTIMED_PLAN_MS = 10_000;

/** Limits of one experiment. */
export const EXPERIMENT_LIMITS = {
  steps: 64,
  expectations: 64,
  abortRules: 16,
  rollbacks: 8,
  probes: 20_000,
  commandTimeoutMs: 3_600_000,
  defaultCommandTimeoutMs: 300_000,
  /** A rollback's bound unless it sets its own `timeout`: cleanup must not hold the run (or a cancelled call) for long.
   * */
  defaultRollbackTimeoutMs: 60_000,
};
const DEFAULT_TOKEN_ENV = 'FAULTLINE_ADMIN_TOKEN';
/** The run goes on this long after the last fault's end plus recover_within, when its length is not given. */
const DEFAULT_TAIL_MS = 5000;
/** The least time after recovery in which the steady state is measured again. */
const MIN_AFTER_MS = 1000;

type Raw = Record<string, unknown>;

/**
 * A run that breaks nothing and checks nothing would wait out its length and report 0 tests: refused,
 * naming the field that is missing. An abort rule alone checks nothing; it only stops faults.
 */
function refuseNothingToRun(
  format: Experiment['format'],
  steps: Step[],
  expectations: Expectation[],
  rollbacks: number,
): void {
  // Rollbacks alone run their commands (a clean-up experiment): something to run.
  if (steps.length > 0 || expectations.length > 0 || rollbacks > 0) return;
  throw new InputError(
    `${format === 'mcp-chaos-monkey' ? 'faults' : 'method'}: no steps, and no steady_state or expect either: ` +
      'nothing to run; an experiment has at least a title and a method (faults to inject) or expectations ' +
      '(steady_state, expect)',
  );
}

export async function readExperiment(raw: unknown, options: ReadOptions): Promise<Experiment> {
  checkShape(raw);
  const file = raw as Raw;
  const title = (file.title ?? file.name) as string | undefined;
  if (title === undefined) throw new InputError("title: required (mcp-chaos-monkey's name is taken too)");
  const format =
    file.title === undefined && file.name !== undefined && Array.isArray(file.faults)
      ? 'mcp-chaos-monkey'
      : 'faultline';

  const proxies = readProxies(
    [...((file.proxies as string[] | undefined) ?? []), ...(options.extraProxies ?? [])],
    options.policy,
  );
  const control = await readControl(file.control as Raw | undefined, options);

  // The run's length: given (load.duration, duration), or from the steps once they are read.
  const load = file.load as Raw | undefined;
  const whileCommand = whileCommandOf(options, load !== undefined || file.duration !== undefined);
  const givenMs =
    load?.duration !== undefined
      ? durationField(load.duration, 'load.duration')
      : file.duration !== undefined
        ? durationField(file.duration, 'duration')
        : // A command after -- may run as long as a run may (--max-duration): planned so, ended when it exits.
          (options.durationMs ?? (whileCommand ? options.limits.maxDurationMs : undefined));
  if (load !== undefined && file.duration !== undefined)
    throw new InputError('duration: with a load, the run lasts load.duration; give that instead');

  const untimed: string[] = [];
  const stepsRaw = [
    ...((file.method as Raw[] | undefined) ?? []).map((step, index) => ({ step, where: `method[${index}]` })),
    ...monkeySteps(file, givenMs, untimed),
  ];
  if (stepsRaw.length > EXPERIMENT_LIMITS.steps)
    throw new InputError(`method: ${stepsRaw.length} steps; at most ${EXPERIMENT_LIMITS.steps}`);
  const inFront = load !== undefined && proxies.length === 0;
  const steps: Step[] = [];
  for (const [index, { step, where }] of stepsRaw.entries())
    steps.push(await readStep(step, where, index, { proxies, control, inFront, runMs: givenMs, options }));
  const names = new Set<string>();
  for (const step of steps) {
    if (names.has(step.name))
      throw new InputError(
        `method[${step.index}].name: "${step.name}" is another step's name too; give each step its own`,
      );
    names.add(step.name);
  }

  const recoverWithinMs =
    file.recover_within === undefined ? undefined : durationField(file.recover_within, 'recover_within');
  const lastEnd = Math.max(0, ...steps.map((step) => stepEnd(step) ?? step.atMs));
  const durationMs = givenMs ?? (steps.length === 0 ? 10_000 : lastEnd + (recoverWithinMs ?? 0) + DEFAULT_TAIL_MS);
  if (durationMs <= 0) throw new InputError(`${load ? 'load.duration' : 'duration'}: must be above 0`);
  if (durationMs > options.limits.maxDurationMs) {
    throw new InputError(
      `${load?.duration !== undefined ? 'load.duration' : 'duration'}: ${formatDuration(durationMs)} ` +
        `is longer than the ${options.limits.maxDurationMs / 1000} s this ` +
        `server allows (raise it with --max-duration)`,
    );
  }
  for (const step of steps) {
    const end = stepEnd(step);
    if (step.atMs >= durationMs)
      throw new InputError(
        `method[${step.index}].at: ${formatDuration(step.atMs)} is not ` +
          `before the end of the run (${formatDuration(durationMs)})`,
      );
    if (end !== undefined && end > durationMs)
      throw new InputError(
        `method[${step.index}].for: the step ends at ` +
          `${formatDuration(end)}, after the run ` +
          `(${formatDuration(durationMs)}); shorten it or lengthen the run`,
      );
  }

  const loadPlan = load === undefined ? undefined : await readLoad(load, durationMs, proxies, options);
  const phases = phasesOf(steps, durationMs);
  const base = loadPlan?.url;
  // Nothing injected (no fault or tool-call step): the run is one window, and `expect` without `during` is judged
  // over it, as the steady state is (once); an empty inject window would leave every verdict inconclusive.
  const injects = injectingSteps(steps).length > 0;
  const context: CheckContext = {
    base,
    policy: options.policy,
    steps,
    phases,
    expectWindow: injects ? phases.inject : { label: 'run', fromMs: 0, toMs: durationMs },
    durationMs,
    baseDir: options.baseDir,
    promql: promqlContext(file, options.policy, options.env),
  };

  const afterWindow = afterRecoveryWindow(phases, recoverWithinMs, durationMs);
  const steadyRaw = (file.steady_state as unknown[] | undefined) ?? [];
  if (steadyRaw.length > 0 && injects && afterWindow.toMs - afterWindow.fromMs < MIN_AFTER_MS) {
    throw new InputError(
      `${load?.duration !== undefined ? 'load.duration' : 'duration'}: ` +
        `the run ends ${formatDuration(Math.max(0, durationMs - phases.recover.fromMs))} ` +
        `after the last step${recoverWithinMs !== undefined ? `, which leaves less than ${formatDuration(MIN_AFTER_MS)} after recover_within (${formatDuration(recoverWithinMs)})` : ''} ` +
        `to see the steady state again; lengthen the run`,
    );
  }
  const steadyWindows: SteadyWindow[] = injects
    ? [
        ['before', 'steady-before', phases.baseline, 'before the faults'],
        ['after', 'steady-after', afterWindow, afterWindow.label],
      ]
    : [['', 'steady', { label: 'run', fromMs: 0, toMs: durationMs }, 'over the run']];
  const { steadySlos, expectations } = await readSteadyState(steadyRaw, steadyWindows, loadPlan, context);
  for (const [index, item] of ((file.expect as unknown[] | undefined) ?? []).entries()) {
    expectations.push(await readExpectation(item, `expect[${index}]`, loadPlan, context));
  }
  if (whileCommand) expectations.push(whileCommandExpectation(whileCommand, durationMs));
  if (expectations.length > EXPERIMENT_LIMITS.expectations)
    throw new InputError(
      `expect: ${expectations.length} expectations with the steady state's; at most ${EXPERIMENT_LIMITS.expectations}`,
    );
  if (recoverWithinMs !== undefined) {
    if (steadySlos.length === 0)
      throw new InputError(
        'recover_within: needs steady_state SLOs on the load (e.g. ' +
          '"errors < 1%", "p95 < 300ms") to say what recovered means',
      );
    if (!injects)
      throw new InputError(
        'recover_within: there is no fault or tool-call step whose end recovery is measured from; ' +
          'add one under method, or drop recover_within',
      );
  }

  const abort = await readAbort(file.abort_when, context);
  const rollbacksRaw = (file.rollbacks as Raw[] | undefined) ?? [];
  refuseNothingToRun(format, steps, expectations, Array.isArray(rollbacksRaw) ? rollbacksRaw.length : 0);
  if (rollbacksRaw.length > EXPERIMENT_LIMITS.rollbacks)
    throw new InputError(`rollbacks: at most ${EXPERIMENT_LIMITS.rollbacks} commands`);
  // Every HTTP check is a timer and a request per probe: bounded, so a 100 ms check over a long
  // window cannot schedule hundreds of thousands of them.
  const probes =
    expectations.reduce(
      (sum, e) =>
        sum +
        (e.kind === 'http' || e.kind === 'promql'
          ? Math.ceil(Math.max(0, e.window.toMs - e.window.fromMs) / e.check.everyMs)
          : 0),
      0,
    ) +
    abort.reduce(
      (sum, rule) =>
        sum +
        (rule.kind === 'http' || rule.kind === 'promql'
          ? Math.ceil(Math.max(0, phases.inject.toMs - phases.inject.fromMs) / rule.check.everyMs)
          : 0),
      0,
    );
  if (probes > EXPERIMENT_LIMITS.probes)
    throw new InputError(
      `expect: the HTTP checks would probe ${probes} times; at most ${EXPERIMENT_LIMITS.probes} ` +
        `per run — probe less often (every) or in shorter windows`,
    );

  return {
    title,
    description: typeof file.description === 'string' ? file.description : '',
    format,
    seed: file.seed as number | undefined,
    load: loadPlan,
    durationMs,
    proxies: inFront ? [] : proxies,
    control,
    steps,
    phases,
    expectations,
    steadySlos,
    recoverWithinMs,
    abort,
    rollbacks: rollbacksRaw.map((item, index) =>
      readCommand(item, `rollbacks[${index}]`, context.baseDir, EXPERIMENT_LIMITS.defaultRollbackTimeoutMs),
    ),
    untimed,
    ...(whileCommand ? { whileCommand: WHILE_COMMAND_ID } : {}),
    notChecked: [
      ...(typeof file.expectedBehavior === 'string' && file.expectedBehavior.trim() !== ''
        ? [`expected behaviour: ${file.expectedBehavior.trim()}`]
        : []),
      ...((file.assertions as string[] | undefined) ?? []).map((text) => text.trim()).filter((text) => text !== ''),
    ],
  };
}

/** Where each steady-state entry is judged: its id's suffix, its role, its window, its title's words. */
type SteadyWindow = readonly [string, 'steady-before' | 'steady-after' | 'steady', Window, string];

/**
 * The steady state, each entry judged in every window given: over the baseline and after recovery
 * (`before`, `after`) when something is injected, once over the run when nothing is.
 */
async function readSteadyState(
  steadyRaw: readonly unknown[],
  windows: readonly SteadyWindow[],
  loadPlan: LoadPlan | undefined,
  context: CheckContext,
): Promise<{ steadySlos: Slo[]; expectations: Expectation[] }> {
  const steadySlos: Slo[] = [];
  const expectations: Expectation[] = [];
  for (const [index, item] of steadyRaw.entries()) {
    const where = `steady_state[${index}]`;
    const each = (make: (id: string, title: string, window: Window, role: SteadyWindow[1]) => Expectation): void => {
      for (const [suffix, role, window, words] of windows)
        expectations.push(make(suffix ? `${where}.${suffix}` : where, `steady state ${words}: `, window, role));
    };
    if (isPromqlEntry(item)) {
      const check = await readPromqlCheck(item as Raw, where, context.promql);
      const title = promqlTitle(item as Raw, check);
      each((id, words, window, role) => ({ kind: 'promql', id, title: words + title, check, window, role }));
      continue;
    }
    if (typeof item === 'string' && !looksLikeHttpCheck(item)) {
      const slo = needLoad(parseSlo(item, where), loadPlan, where);
      steadySlos.push(slo);
      each((id, words, window, role) => ({ kind: 'slo', id, title: words + slo.title, slo, window, role }));
    } else {
      const { check, mode } = await readHttpCheck(item, where, context);
      const label = String(
        typeof item === 'string' ? item : (((item as Raw).name as string | undefined) ?? (item as Raw).http),
      );
      each((id, words, window, role) => ({ kind: 'http', id, title: words + label, check, mode, window, role }));
    }
  }
  return { steadySlos, expectations };
}

function needLoad<T>(value: T, load: LoadPlan | undefined, where: string): T {
  if (load === undefined)
    throw new InputError(
      `${where}: an SLO is measured on the load; give the experiment a load (load.url, rps, duration)`,
    );
  return value;
}

function readProxies(texts: readonly string[], policy: SafetyPolicy): Mapping[] {
  const mappings = texts.map((text, index) => {
    try {
      return parseMapping(text);
    } catch (error) {
      throw error instanceof InputError ? new InputError(`proxies[${index}]: ${error.message}`) : error;
    }
  });
  checkProxyMappings(mappings, policy, 'proxies');
  mappings.forEach((mapping, index) => {
    const first = mappings.findIndex((other) => other.name !== undefined && other.name === mapping.name);
    if (first < index && first !== -1)
      throw new InputError(
        `proxies[${index}]: the name #${mapping.name} is already proxies[${first}]'s; give each mapping its own`,
      );
    if (mapping.name === IN_FRONT_MAPPING)
      throw new InputError(
        `proxies[${index}]: #${IN_FRONT_MAPPING} names the proxy in front of the load; give the mapping another name`,
      );
  });
  return mappings;
}

async function readControl(raw: Raw | undefined, options: ReadOptions): Promise<ControlPlane[]> {
  const planes: ControlPlane[] = [];
  for (const [name, value] of Object.entries(raw ?? {})) {
    const entry = value as Raw;
    const url = await checkUrl(String(entry.url), options.policy, `control.${name}.url`);
    const tokenEnv = (entry.token_env as string | undefined) ?? DEFAULT_TOKEN_ENV;
    checkTokenEnv(tokenEnv, options.policy, `control.${name}.token_env`);
    planes.push({ name, url: url.origin, tokenEnv });
  }
  // --admin-token-env is the owner's own choice on the command line: not checked against the list.
  for (const extra of options.extraControl ?? []) {
    if (planes.some((plane) => plane.name === extra.name))
      throw new InputError(`--admin: the file already has a control plane named ${extra.name}`);
    planes.push({ ...extra, url: (await checkUrl(extra.url, options.policy, '--admin')).origin });
  }
  return planes;
}

/**
 * mcp-chaos-monkey's faults as steps: each from the start, for its durationMs; one without it is
 * held for the run, whose length the person gives (`--duration`, or the file's `duration`). With
 * neither, it is planned for 10 s and listed in `untimed`, which the runner refuses: `validate`
 * accepts the file, `run` asks for its length.
 */
function monkeySteps(file: Raw, runMs: number | undefined, untimed: string[]): Array<{ step: Raw; where: string }> {
  return ((file.faults as Raw[] | undefined) ?? []).map((fault, index) => {
    let durationMs = (fault.durationMs ?? fault.duration_ms) as number | undefined;
    if (durationMs === undefined) {
      durationMs = runMs ?? UNTIMED_PLAN_MS;
      if (runMs === undefined) untimed.push(`faults[${index}]`);
    }
    const config = fault.config as Raw;
    return {
      where: `faults[${index}]`,
      step: {
        name: `${String(fault.target)}: ${String(config.type)}`,
        at: 0,
        for: (durationMs as number) / 1000,
        fault: { ...config, target: fault.target },
      },
    };
  });
}

interface StepContext {
  proxies: readonly Mapping[];
  control: readonly ControlPlane[];
  inFront: boolean;
  runMs: number | undefined;
  options: ReadOptions;
}

async function readStep(raw: Raw, where: string, index: number, context: StepContext): Promise<Step> {
  const kinds = (['fault', 'toolcall', 'probe'] as const).filter((kind) => raw[kind] !== undefined);
  if (kinds.length !== 1)
    throw new InputError(
      `${where}: give exactly one of fault, toolcall or probe (got ` +
        `${kinds.length === 0 ? 'none' : kinds.join(' and ')})`,
    );
  const atMs = raw.at === undefined ? 0 : momentField(raw.at, `${where}.at`, context.runMs);
  const forMs = raw.for === undefined ? undefined : durationField(raw.for, `${where}.for`);
  if (forMs !== undefined && forMs <= 0) throw new InputError(`${where}.for: must be above 0`);
  if (kinds[0] !== 'fault') {
    if (raw.via !== undefined) throw new InputError(`${where}.via: only a fault step is set through a control plane`);
    return readMcpStep(kinds[0]!, raw, where, index, atMs, forMs, context.options.policy);
  }
  if (raw.expect !== undefined)
    throw new InputError(
      `${where}.expect: a fault step's expectations go under the experiment's expect (with during: its name)`,
    );
  if (forMs === undefined)
    throw new InputError(
      `${where}.for: a fault step needs its length, e.g. for: 10s (every fault is cleared when it ends)`,
    );
  const fault = raw.fault as Raw;
  const { target: rawTarget, ...config } = fault;
  const target = rawTarget === undefined ? undefined : String(rawTarget);
  const parsed = parseFaultConfig(config, `${where}.fault`);
  const placement = placeFault(target, raw.via as string | undefined, where, context);
  if (placement.plane === 'proxy' && parsed.kind === 'http')
    refuseInexpressible(parsed.spec, placement, where, context);
  if (placement.plane === 'control' && target === undefined)
    throw new InputError(
      `${where}.fault.target: the control plane ${placement.control} ` +
        `needs the target to fault (its own name for the dependency)`,
    );
  const name =
    (raw.name as string | undefined) ??
    `${parsed.type} on ${placement.plane === 'proxy' ? `#${placement.target}` : `${placement.control}/${placement.target}`} ` +
      `at ${formatDuration(atMs)}`;
  const step: FaultStep = {
    kind: 'fault',
    index,
    name,
    atMs,
    forMs,
    placement,
    config: parsed,
    raw: placement.plane === 'control' ? fault : config,
  };
  return step;
}

/**
 * A request fault on a mapping whose scheme says what it carries (tcp://, redis://) that it cannot
 * act on there: refused now, with the proxy's own reason, as the proxy would refuse it when the
 * step starts — so `validate` and `run` agree and no run spends its load on a fault that is never
 * set. A mapping without a scheme is sorted per connection, so only the run can tell.
 */
function refuseInexpressible(
  spec: unknown,
  placement: Extract<FaultStep['placement'], { plane: 'proxy' }>,
  where: string,
  context: StepContext,
): void {
  const mapping = context.proxies.find(
    (m) => m.name === placement.target || (m.listenPort !== 0 && String(m.listenPort) === placement.target),
  );
  if (mapping?.protocol === undefined || mapping.protocol === 'http') return;
  const problem = inexpressible(validateHttpFault(spec), mapping.protocol);
  if (problem !== undefined)
    throw new InputError(`${where}.fault: cannot act on its mapping ${JSON.stringify(mapping.text)}: ${problem}`);
}

/** Where a fault goes: through `via`, on a mapping it names, on the only mapping, or through the only control plane. */
function placeFault(
  target: string | undefined,
  via: string | undefined,
  where: string,
  context: StepContext,
): FaultStep['placement'] {
  if (via !== undefined) {
    if (!context.control.some((plane) => plane.name === via)) {
      throw new InputError(
        `${where}.via: "${via}" is not a control plane of this ` +
          `experiment; ${context.control.length ? `accepted: ${context.control.map((plane) => plane.name).join(', ')}` : 'declare it under control: with its url'}`,
      );
    }
    return { plane: 'control', control: via, target: target ?? '' };
  }
  if (context.inFront) {
    if (target === undefined || target.replace(/^#/, '') === IN_FRONT_MAPPING)
      return { plane: 'proxy', target: IN_FRONT_MAPPING };
  }
  const mapping =
    target === undefined
      ? context.proxies.length === 1
        ? context.proxies[0]
        : undefined
      : context.proxies.find(
          (m) => m.name === target.replace(/^#/, '') || (m.listenPort !== 0 && String(m.listenPort) === target),
        );
  if (mapping) return { plane: 'proxy', target: mapping.name ?? String(mapping.listenPort) };
  if (target !== undefined && context.control.length === 1)
    return { plane: 'control', control: context.control[0]!.name, target };
  const names = context.proxies.map((m) => (m.name ? `#${m.name}` : String(m.listenPort)));
  if (target === undefined) {
    throw new InputError(
      `${where}.fault.target: required with ${context.proxies.length} ` +
        `mappings; accepted: ${names.join(', ') || 'none (add proxies, or a load for the proxy in front of it)'}`,
    );
  }
  throw new InputError(
    `${where}.fault.target: "${target}" names no ` +
      `mapping${context.inFront ? ` (the proxy in front of the load is #${IN_FRONT_MAPPING})` : ''}; ` +
      `accepted: ${[...names, ...(context.inFront ? [`#${IN_FRONT_MAPPING}`] : [])].join(', ') || 'none'}` +
      (context.control.length > 1
        ? `; or set it through a control plane with via: ${context.control.map((plane) => plane.name).join(', ')}`
        : context.control.length === 0
          ? '; add the mapping under proxies (with #name), or a control plane under control:'
          : ''),
  );
}

async function readLoad(
  raw: Raw,
  durationMs: number,
  proxies: readonly Mapping[],
  options: ReadOptions,
): Promise<LoadPlan> {
  const headers = Array.isArray(raw.headers)
    ? (raw.headers as string[])
    : Object.entries((raw.headers as Record<string, string> | undefined) ?? {}).map(
        ([name, value]) => `${name}: ${value}`,
      );
  const body = raw.body === undefined ? undefined : typeof raw.body === 'string' ? raw.body : JSON.stringify(raw.body);
  let spec;
  try {
    spec = await scenarioFromArguments(
      'latency',
      {
        url: String(raw.url),
        method: raw.method as string | undefined,
        body,
        headers,
        duration: `${durationMs}ms`,
        num_clients: (raw.num_clients as number | undefined) ?? 1,
        rps: raw.rps as number | undefined,
        timeout: raw.timeout === undefined ? undefined : durationField(raw.timeout, 'load.timeout') / 1000,
        expect_status: raw.expect_status as string | undefined,
        max_connections: raw.max_connections as number | undefined,
        insecure_tls: raw.insecure_tls as boolean | undefined,
        proxies: proxies.map((mapping) => mapping.text),
      },
      options.limits,
    );
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    // The scenario check names its arguments; here they sit under load (the mappings stay proxies).
    throw new InputError(/^proxies/.test(error.message) ? error.message : `load.${error.message}`);
  }
  return {
    url: spec.url,
    method: spec.method,
    body: spec.body,
    headers: spec.headers,
    durationMs: spec.durationMs,
    clients: spec.clients,
    rps: spec.rps,
    timeoutMs: spec.timeoutMs,
    maxConnections: spec.maxConnections,
    expectStatus: spec.expectStatus,
    expectedStatus: spec.expectedStatus,
    rejectUnauthorized: spec.rejectUnauthorized,
    targets: spec.targets,
  };
}

interface CheckContext {
  base: string | undefined;
  policy: SafetyPolicy;
  steps: readonly Step[];
  phases: Experiment['phases'];
  /** An expectation's window without `during`: the inject phase, or the run when nothing is injected. */
  expectWindow: Window;
  durationMs: number;
  baseDir: string | undefined;
  promql: PromqlContext;
}

async function readExpectation(
  item: unknown,
  where: string,
  load: LoadPlan | undefined,
  context: CheckContext,
): Promise<Expectation> {
  const during = (raw: Raw): Window =>
    raw.during === undefined
      ? context.expectWindow
      : windowOf(String(raw.during), `${where}.during`, context.phases, context.steps, context.durationMs);
  if (typeof item === 'string') {
    if (looksLikeHttpCheck(item)) {
      const { check, mode } = await readHttpCheck(item, where, context);
      return {
        kind: 'http',
        id: where,
        title: item.trim(),
        check,
        mode,
        window: context.expectWindow,
        role: 'expect',
      };
    }
    const slo = needLoad(parseSlo(item, where), load, where);
    return { kind: 'slo', id: where, title: slo.title, slo, window: context.expectWindow, role: 'expect' };
  }
  const raw = item as Raw;
  if (isPromqlEntry(raw)) {
    const check = await readPromqlCheck(raw, where, context.promql);
    return { kind: 'promql', id: where, title: promqlTitle(raw, check), check, window: during(raw), role: 'expect' };
  }
  if (raw.slo !== undefined) {
    const slo = needLoad(parseSlo(String(raw.slo), `${where}.slo`), load, where);
    return {
      kind: 'slo',
      id: where,
      title: (raw.name as string | undefined) ?? slo.title,
      slo,
      window: during(raw),
      role: 'expect',
    };
  }
  if (raw.http !== undefined) {
    const { check, mode } = await readHttpCheck(raw, where, context);
    return {
      kind: 'http',
      id: where,
      title: (raw.name as string | undefined) ?? `${String(raw.http)} -> ${check.predicate.text}`,
      check,
      mode,
      window: during(raw),
      role: 'expect',
    };
  }
  const command = readCommand(raw, where, context.baseDir);
  const title =
    (raw.name as string | undefined) ??
    `${Array.isArray(command.command) ? command.command.join(' ') : command.command} exits 0`;
  return { kind: 'command', id: where, title, command, window: during(raw), role: 'expect' };
}

async function readHttpCheck(
  item: unknown,
  where: string,
  context: CheckContext,
): Promise<{ check: HttpCheck; mode: CheckMode }> {
  if (typeof item === 'string') {
    const { method, url, predicate } = parseHttpLine(item, where, context.base);
    await checkUrl(url, context.policy, where);
    return {
      check: { method, url, headers: {}, body: '', predicate, everyMs: 1000, timeoutMs: 2000 },
      mode: 'continuous',
    };
  }
  const raw = item as Raw;
  const { method, url } = parseRequestLine(String(raw.http), `${where}.http`, context.base);
  await checkUrl(url, context.policy, `${where}.http`);
  const everyMs = raw.every === undefined ? 1000 : durationField(raw.every, `${where}.every`);
  const timeoutMs = raw.timeout === undefined ? 2000 : durationField(raw.timeout, `${where}.timeout`);
  if (everyMs < 100) throw new InputError(`${where}.every: at least 100ms`);
  if (timeoutMs < 10 || timeoutMs > 60_000) throw new InputError(`${where}.timeout: 10ms to 60s`);
  const headers = (raw.headers as Record<string, string> | undefined) ?? {};
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name) || /[\r\n\0]/.test(value))
      throw new InputError(`${where}.headers.${name}: not a header name and value`);
  }
  return {
    check: {
      method,
      url,
      headers,
      body: (raw.body as string | undefined) ?? '',
      predicate: parsePredicate((raw.expect as string | undefined) ?? DEFAULT_PREDICATE, `${where}.expect`),
      everyMs,
      timeoutMs,
    },
    mode: (raw.mode as CheckMode | undefined) ?? 'continuous',
  };
}

function readCommand(
  raw: Raw,
  where: string,
  baseDir: string | undefined,
  defaultTimeoutMs = EXPERIMENT_LIMITS.defaultCommandTimeoutMs,
): CommandSpec {
  const command = raw.command as string | string[];
  if (Array.isArray(command) ? command.length === 0 || command.some((part) => part === '') : command.trim() === '')
    throw new InputError(`${where}.command: empty`);
  const timeoutMs = raw.timeout === undefined ? defaultTimeoutMs : durationField(raw.timeout, `${where}.timeout`);
  if (timeoutMs <= 0 || timeoutMs > EXPERIMENT_LIMITS.commandTimeoutMs)
    throw new InputError(
      `${where}.timeout: above 0 and at most ${EXPERIMENT_LIMITS.commandTimeoutMs / 60_000} minutes`,
    );
  const cwd =
    raw.cwd === undefined
      ? baseDir
      : isAbsolute(String(raw.cwd))
        ? String(raw.cwd)
        : resolve(baseDir ?? process.cwd(), String(raw.cwd));
  return {
    argument: `${where}.command`,
    command,
    timeoutMs,
    cwd,
    env: (raw.env as Record<string, string> | undefined) ?? {},
  };
}

async function readAbort(raw: unknown, context: CheckContext): Promise<AbortRule[]> {
  if (raw === undefined) return [];
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length > EXPERIMENT_LIMITS.abortRules)
    throw new InputError(`abort_when: at most ${EXPERIMENT_LIMITS.abortRules} conditions`);
  const rules: AbortRule[] = [];
  for (const [index, item] of list.entries()) {
    const where = Array.isArray(raw) ? `abort_when[${index}]` : 'abort_when';
    if (typeof item === 'string') {
      if (looksLikeHttpCheck(item))
        rules.push({
          kind: 'http',
          text: item.trim(),
          check: (await readHttpCheck(item, where, context)).check,
          failures: 3,
        });
      else rules.push(parseLoadAbort(item, where));
      continue;
    }
    const entry = item as Raw;
    if (isPromqlEntry(entry)) {
      const check = await readPromqlCheck({ ...entry, for: undefined }, where, context.promql);
      rules.push({ kind: 'promql', text: promqlTitle(entry, check), check, polls: abortPolls(entry, check, where) });
      continue;
    }
    const { check } = await readHttpCheck({ ...entry, failures: undefined, name: undefined }, where, context);
    rules.push({
      kind: 'http',
      text: (entry.name as string | undefined) ?? `${String(entry.http)} -> ${check.predicate.text}`,
      check,
      failures: (entry.failures as number | undefined) ?? 3,
    });
  }
  if (rules.some((rule) => rule.kind === 'load') && context.base === undefined)
    throw new InputError(
      'abort_when: a condition on errors or latency is measured on the load; give the experiment a load',
    );
  return rules;
}
