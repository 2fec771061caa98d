/**
 * A scenario as an FIS CreateExperimentTemplate input: the ECS or EKS network action of the same
 * fault and numbers, after an aws:fis:wait action when the fault starts later than the load. The
 * template builder checks it against the FIS catalog; what it refuses is named back as the
 * scenario argument (or flag) that produced it, and what it only warns about becomes a note.
 */
import { InputError } from '../../kernel/errors.js';
import type { ScenarioSpec } from '../../scenario/index.js';
import { buildExperimentTemplate } from '../template.js';
import { formatIsoDuration } from '../iso-duration.js';
import { asGiven, type ExportOptions, type ExportResult, type Spell } from './context.js';
import { networkFault } from '../../export/network.js';
import { fisNetworkAction, fisTargetConfig } from '../../export/fis.js';

const WAIT = 'wait-before-fault';
const FAULT = 'fault';

function urlPort(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** The scenario argument behind each template parameter the export writes. */
function argumentOf(action: string, parameter: string, spec: ScenarioSpec): string {
  if (action === WAIT) return 'fault_start';
  switch (parameter) {
    case 'duration':
      return spec.faultEndMs < spec.durationMs ? 'fault_duration' : 'duration';
    case 'delayMilliseconds':
      return 'latency';
    case 'jitterMilliseconds':
      return 'deviation';
    case 'lossPercent':
      return 'loss_rate';
    case 'port':
      return 'url';
    default:
      return 'target_config';
  }
}

/**
 * A builder message about a template field, renamed after the argument the user gave (`actions`
 * are the action names in order): `recommendation[1].parameters.duration: PT10S …` becomes
 * `fault_duration: duration PT10S …`, `target_config.roleArn: …` keeps its path under the name
 * the caller gives target_config. Other messages are returned as they are.
 */
function renamed(
  message: string,
  actions: readonly string[],
  spec: ScenarioSpec,
  spell: Spell,
): { argument: string; rest: string } | undefined {
  const parameter = /^recommendation\[(\d+)\]\.parameters\.(\w+): (.*)$/s.exec(message);
  if (parameter) {
    const [, index, name, rest] = parameter;
    return { argument: spell(argumentOf(actions[Number(index)]!, name!, spec)), rest: `${name} ${rest}` };
  }
  const target = /^target_config([.\w[\]]*): (.*)$/s.exec(message);
  if (target) return { argument: `${spell('target_config')}${target[1]}`, rest: target[2]! };
  return undefined;
}

export function exportFis(spec: ScenarioSpec, options: ExportOptions): ExportResult {
  const spell = options.spell ?? asGiven;
  const notes: string[] = [];
  const platform = options.platform ?? 'ecs';
  const fault = networkFault(spec.fault, 'fis', spell, notes);
  const given = { ...(options.targetConfig ?? {}) };
  const serviceAccount = given.kubernetesServiceAccount;
  delete given.kubernetesServiceAccount;
  const {
    actionId: action,
    parameters,
    serviceAccountPlaceholder,
  } = fisNetworkAction(fault, platform, urlPort(new URL(spec.url)), serviceAccount, notes, spell('url'));
  const configName = spell('target_config');
  if (serviceAccountPlaceholder)
    notes.push(
      `kubernetesServiceAccount is a placeholder: give ` +
        `kubernetesServiceAccount in ${configName} (the service account ` +
        `FIS runs its pod as).`,
    );
  const recommendations: Array<Record<string, unknown>> = [];
  if (spec.faultStartMs > 0)
    recommendations.push({ action: 'aws:fis:wait', name: WAIT, duration: formatIsoDuration(spec.faultStartMs) });
  recommendations.push({
    action,
    name: FAULT,
    parameters,
    duration: formatIsoDuration(spec.faultEndMs - spec.faultStartMs),
    ...(spec.faultStartMs > 0 ? { startAfter: [WAIT] } : {}),
    description: `faultline ${spec.fault.type} scenario on ${spec.url}`.slice(0, 512),
  });
  const select =
    given.tags === undefined &&
    given.resourceTags === undefined &&
    given.resourceArns === undefined &&
    given.parameters === undefined;
  const { config, alarmGiven } = fisTargetConfig(
    given,
    platform,
    select,
    {
      role: `roleArn is a placeholder: give roleArn in ${configName}.`,
      tags: `The tasks are selected by a placeholder tag: give tags, resourceArns or target parameters in ${configName}.`,
      parameters:
        `The pods are selected by placeholder target parameters: give ` +
        `parameters {clusterIdentifier, namespace, selectorType ` +
        `(labelSelector, deploymentName, podName), selectorValue} in ` +
        `${configName}; FIS takes no tags or ARNs for pods.`,
    },
    notes,
  );
  if (!alarmGiven)
    notes.push(
      `stopConditionArn is a placeholder: give stopConditionArn in ${configName} ` +
        `(a CloudWatch alarm on the service's SLO).`,
    );
  const actions = recommendations.map((r) => String(r.name));
  let built;
  try {
    built = buildExperimentTemplate(recommendations, config);
  } catch (error) {
    const field = error instanceof InputError ? renamed(error.message, actions, spec, spell) : undefined;
    if (!field) throw error;
    throw new InputError(
      field.argument.startsWith(spell('target_config'))
        ? `${field.argument}: ${field.rest}`
        : `${field.argument}: cannot export to fis: ${field.rest}`,
    );
  }
  for (const warning of built.warnings) {
    const field = renamed(warning, actions, spec, spell);
    notes.push(field ? `${field.argument}: ${field.rest}` : warning);
  }
  notes.push(
    `FIS injects the fault; drive the load at the same time (${spell('num_clients')} ` +
      `× ${spell('rps')} = ${spec.clients * spec.rps} requests/s for ` +
      `${formatIsoDuration(spec.durationMs)}) — e.g. with the k6 export ` +
      `— and the fault starts ${formatIsoDuration(spec.faultStartMs)} ` +
      `into it.`,
  );
  return {
    to: 'fis',
    fault: spec.fault.type,
    format: 'json',
    document: JSON.stringify(built.template, null, 2),
    notes,
  };
}
