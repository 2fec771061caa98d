/**
 * AWS FIS: one CreateExperimentTemplate whose actions keep the experiment's timeline — each
 * network fault step the ECS or EKS network action src/export builds for it (same fault, same
 * numbers), started by startAfter: after the step that ends when it starts, or after an
 * aws:fis:wait that covers the gap — and a stop condition, the CloudWatch alarm abort_when stands
 * for. Validated by src/cloud's template builder (durations, ranges, startAfter cycles).
 *
 * A request fault on a tcp:// or redis:// mapping is exported by its network meaning (its latency a
 * network latency action) or refused with the reason (stream-fault.ts); never called HTTP.
 *
 * Refused with the reason: HTTP faults (FIS has no HTTP fault for tasks or pods), faults set
 * through a control plane, MCP steps, commands, and HTTP checks (FIS probes nothing; its stop
 * condition is an alarm).
 */
import { InputError } from '../../kernel/errors.js';
import { formatIsoDuration } from '../../cloud/iso-duration.js';
import { isPlainObject } from '../../config-reader.js';
import { buildExperimentTemplate as buildTemplate } from '../../cloud/template.js';
import { fisNetworkAction, fisTargetConfig } from '../../export/fis.js';
import { networkFault } from '../../export/network.js';
import { asGiven } from '../../export/spell.js';
import { validateHttpFault, type FaultSpec } from '../../proxy/index.js';
import { IN_FRONT_MAPPING, type Experiment, type FaultStep } from '../model.js';
import type { EngineDocument, ExperimentExportOptions, Refusal } from './index.js';
import { promqlRefusals } from './promql.js';
import { streamFault } from './stream-fault.js';

/** A fault step FIS can run, as the action it becomes. */
interface FisStep {
  step: FaultStep;
  name: string;
  actionId: string;
  parameters: Record<string, string>;
}

export async function exportFis(experiment: Experiment, options: ExperimentExportOptions): Promise<EngineDocument> {
  const refusals: Refusal[] = [];
  const notes: string[] = [];
  const given = { ...(options.targetConfig ?? {}) };
  const mappings = given.mappings;
  delete given.mappings;
  if (mappings !== undefined && !isPlainObject(mappings))
    throw new InputError('--target: mappings must be an object of mapping name → target selection');
  const steps = await fisSteps(experiment, options, refusals, notes);
  refuseWhatFisCannotRun(experiment, refusals);
  refusals.push(...promqlRefusals(experiment, 'fis'));
  if (steps.length === 0 && refusals.length === 0) refusals.push({ part: 'method', reason: 'no fault step to export' });

  const recommendations = sequence(steps);
  const { config, alarmGiven } = templateConfig(given, mappings, steps, options, notes);
  noteStopAndLoad(experiment, alarmGiven, notes);
  let built: ReturnType<typeof buildTemplate> | undefined;
  const stepOfRecommendation = (message: string): { part: string; rest: string } | undefined => {
    const match = /^recommendation\[(\d+)\]\./.exec(message);
    const name = match ? String(recommendations[Number(match[1])]?.name) : undefined;
    const step = steps.find((candidate) => candidate.name === name || `${candidate.name}-wait` === name);
    return step && match
      ? { part: `method[${step.step.index}] (${step.step.name})`, rest: message.slice(match[0].length) }
      : undefined;
  };
  if (recommendations.length > 0) {
    try {
      built = buildTemplate(recommendations, {
        description: `faultline experiment: ${experiment.title}`.slice(0, 512),
        ...config,
      });
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      // Name the step behind a recommendation the builder refused.
      const named = stepOfRecommendation(error.message);
      if (named) refusals.push({ part: named.part, reason: named.rest });
      else if (/^recommendation: at most \d+ actions/.test(error.message)) {
        // A wait before each step that does not follow the previous one at once: say it in steps.
        refusals.push({
          part: 'method',
          reason:
            `${error.message.replace(/^recommendation: /, '')}: its ${steps.length} ` +
            `fault steps need ${recommendations.length} FIS actions (a wait ` +
            `before each gap); split the experiment`,
        });
      } else throw error;
    }
  }
  // The builder's warnings name recommendation[i]; the reader wrote method[k].
  if (built)
    notes.push(
      ...built.warnings.map((warning) => {
        const named = stepOfRecommendation(warning);
        return named ? `${named.part}: ${named.rest}` : warning;
      }),
    );
  return {
    format: 'json',
    render: () => `${JSON.stringify(built?.template ?? {}, null, 2)}\n`,
    notes,
    refusals,
    elsewhere: experiment.load
      ? ['the load, its SLOs and recover_within: export with --to k6 (JSON has no comments, so this says it)']
      : [],
    ...(built ? {} : { empty: 'a template needs at least one action' }),
  };
}

/** The network fault steps as FIS actions; every other step is refused with the reason. */
async function fisSteps(
  experiment: Experiment,
  options: ExperimentExportOptions,
  refusals: Refusal[],
  notes: string[],
): Promise<FisStep[]> {
  const steps: FisStep[] = [];
  for (const step of experiment.steps) {
    const part = `method[${step.index}] (${step.name})`;
    if (step.kind !== 'fault') {
      refusals.push({
        part,
        reason:
          `a ${step.kind === 'toolcall' ? 'tool-call-plane' : 'probe'} step ` +
          `acts on an MCP server through faultline; FIS has no such action`,
      });
      continue;
    }
    if (step.placement.plane === 'control') {
      refusals.push({
        part,
        reason:
          `the fault is set through the control plane ` +
          `${step.placement.control}; FIS injects at the network of tasks ` +
          `or pods — put the dependency under proxies to export it`,
      });
      continue;
    }
    const mapping = experiment.proxies.find(
      (m) => m.name === step.placement.target || String(m.listenPort) === step.placement.target,
    );
    // A request fault on a tcp:// or redis:// mapping keeps its network meaning (stream-fault.ts).
    const stream = mapping?.protocol === 'tcp' || mapping?.protocol === 'resp' ? mapping.protocol : undefined;
    if (step.config.kind === 'http' && stream === undefined) {
      refusals.push({
        part,
        reason: `${step.config.type} is an HTTP fault; FIS has no HTTP fault action for ECS tasks or EKS pods`,
      });
      continue;
    }
    const url = experiment.load ? new URL(experiment.load.url) : undefined;
    const port = mapping?.remotePort ?? Number(url!.port || (url!.protocol === 'https:' ? 443 : 80));
    try {
      const own: string[] = [];
      const fault =
        step.config.kind === 'network'
          ? networkFault(step.config.spec as FaultSpec, 'fis', asGiven, own)
          : streamFault(validateHttpFault(step.config.spec), stream!, 'fis', own);
      const action = fisNetworkAction(fault, options.platform ?? 'ecs', port, undefined, own, 'the mapping');
      // The step's length is the action's duration (the builder checks it against the catalog).
      const parameters = { duration: formatIsoDuration(step.forMs), ...action.parameters };
      steps.push({ step, name: `step-${step.index + 1}`, actionId: action.actionId, parameters });
      for (const note of own) notes.push(`${step.name}: ${note}`);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      refusals.push({ part, reason: error.message.replace(/^[\w.[\]]+: cannot export to fis: /, '') });
    }
  }
  return steps;
}

/** Commands and HTTP abort checks: FIS runs neither. */
function refuseWhatFisCannotRun(experiment: Experiment, refusals: Refusal[]): void {
  for (const expectation of experiment.expectations) {
    if (expectation.kind === 'command')
      refusals.push({
        part: `${expectation.id} (${expectation.title})`,
        reason: 'FIS runs no command of yours beside its actions',
      });
  }
  for (const [index, rule] of experiment.abort.entries()) {
    if (rule.kind === 'http')
      refusals.push({
        part: `abort_when${experiment.abort.length > 1 ? `[${index}]` : ''} (${rule.text})`,
        reason:
          'FIS stops on a CloudWatch alarm, not on an HTTP check it makes; ' +
          "point an alarm at that endpoint's health (e.g. a Route 53 health " +
          'check) and give its ARN as stopConditionArn',
      });
  }
  if (experiment.rollbacks.length > 0)
    refusals.push({ part: 'rollbacks', reason: 'FIS runs no command of yours after its actions' });
}

/**
 * The template builder's target_config: what --target gave, each mapping's selection for the
 * steps on it, and placeholders (said in the notes) for the role, the alarm and the selection.
 */
function templateConfig(
  given: Record<string, unknown>,
  mappings: unknown,
  steps: FisStep[],
  options: ExperimentExportOptions,
  notes: string[],
): { config: Record<string, unknown>; alarmGiven: boolean } {
  const perAction: Record<string, unknown> = { ...((given.targets as Record<string, unknown> | undefined) ?? {}) };
  for (const { step, name } of steps) {
    const own = (mappings as Record<string, unknown> | undefined)?.[step.placement.target];
    if (own !== undefined) perAction[name] = own;
  }
  const select =
    given.tags === undefined &&
    given.resourceArns === undefined &&
    given.parameters === undefined &&
    steps.some(({ name }) => perAction[name] === undefined);
  // The example names a mapping of this file that has no targets yet, so it can be copied as it is.
  const unselected = steps.find(({ name }) => perAction[name] === undefined)?.step.placement.target ?? '<name>';
  const example = JSON.stringify(unselected.replace(/^#/, ''));
  return fisTargetConfig(
    Object.keys(perAction).length > 0 ? { ...given, targets: perAction } : given,
    options.platform ?? 'ecs',
    select,
    {
      role: 'roleArn is a placeholder: give it in --target.',
      tags:
        'The tasks are selected by a placeholder tag: give --target ' +
        `'{"mappings": {${example}: {"tags": {"service": ${example}}}}}' ` +
        'for each dependency (or tags, resourceArns for all).',
      parameters:
        'The pods are selected by placeholder target parameters: give ' +
        `--target '{"mappings": {${example}: {"parameters": {…}}}}' for ` +
        'each dependency.',
    },
    notes,
  );
}

/** What stands for the experiment's load abort rules in FIS, and how to drive its load. */
function noteStopAndLoad(experiment: Experiment, alarmGiven: boolean, notes: string[]): void {
  const loadRules = experiment.abort.filter((rule) => rule.kind === 'load');
  if (!alarmGiven) {
    notes.push(
      loadRules.length > 0
        ? `stopConditionArn is a placeholder: create a CloudWatch alarm for ` +
            `${loadRules.map((rule) => `"${rule.text}"`).join(' or ')} on the ` +
            `service's metrics and give its ARN (CloudWatch alarm periods are ` +
            `10 s or more: the alarm you write decides how fast FIS stops).`
        : 'stopConditionArn is a placeholder: give the CloudWatch alarm on ' +
            "the service's SLO that should stop the experiment.",
    );
  } else if (loadRules.length > 0)
    notes.push(
      `The stop condition stands for ` +
        `${loadRules.map((rule) => `"${rule.text}"`).join(' and ')}: the ` +
        `alarm you gave decides when FIS stops.`,
    );
  if (experiment.load)
    notes.push(
      `FIS injects the faults; drive the load at the same time (${experiment.load.clients * experiment.load.rps} ` +
        `requests/s for ` +
        `${formatIsoDuration(experiment.load.durationMs)}), e.g. with the ` +
        `k6 export.`,
    );
}

/**
 * startAfter for each step: after the step that ends exactly when it starts, else after an
 * aws:fis:wait of the gap since the latest step that ended before it (or since the start).
 */
function sequence(steps: readonly FisStep[]): Array<Record<string, unknown>> {
  const recommendations: Array<Record<string, unknown>> = [];
  for (const { step, name, actionId, parameters } of steps) {
    const before = steps
      .filter((other) => other.step.atMs + other.step.forMs <= step.atMs)
      .sort((a, b) => b.step.atMs + b.step.forMs - (a.step.atMs + a.step.forMs))[0];
    const from = before ? before.step.atMs + before.step.forMs : 0;
    const after = before ? [before.name] : [];
    const description = (
      `${step.name}: ${step.config.type} on #${step.placement.target === IN_FRONT_MAPPING ? 'the service' : step.placement.target} ` +
      `at ${formatIsoDuration(step.atMs)}`
    ).slice(0, 512);
    if (step.atMs > from) {
      recommendations.push({
        action: 'aws:fis:wait',
        name: `${name}-wait`,
        duration: formatIsoDuration(step.atMs - from),
        ...(after.length ? { startAfter: after } : {}),
      });
      recommendations.push({ action: actionId, name, parameters, description, startAfter: [`${name}-wait`] });
    } else
      recommendations.push({
        action: actionId,
        name,
        parameters,
        description,
        ...(after.length ? { startAfter: after } : {}),
      });
  }
  return recommendations;
}
