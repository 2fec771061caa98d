/**
 * AWS FIS's objects, built once for every export (a scenario's template, an experiment's
 * actions): the ECS or EKS network action of a fault, with its parameters, and the placeholders
 * a template carries until the user gives the real role and alarm.
 */
import type { NetworkFault } from './network.js';

export type FisPlatform = 'ecs' | 'eks';

const PLACEHOLDER_ROLE = 'arn:aws:iam::000000000000:role/REPLACE_WITH_FIS_ROLE';

/** A placeholder alarm ARN in the account of `roleArn` when that is a role ARN (FIS wants both in one account). */
function placeholderAlarmFor(roleArn: unknown): string {
  const account = typeof roleArn === 'string' ? /^arn:aws[\w-]*:iam::(\d{12}):role\//.exec(roleArn)?.[1] : undefined;
  return `arn:aws:cloudwatch:us-east-1:${account ?? '000000000000'}:alarm:REPLACE_WITH_STOP_ALARM`;
}

/**
 * A template's target config: what the user `given`, and placeholders for the rest, each said in `notes` with the
 * caller's words for where to give it (`say`): the role; the stop alarm (its note is the caller's: it names what to
 * alarm on); when `select`, the selection: a tag for ECS tasks, target parameters for EKS pods.
 */
export function fisTargetConfig(
  given: Record<string, unknown>,
  platform: FisPlatform,
  select: boolean,
  say: { role: string; tags: string; parameters: string },
  notes: string[],
): { config: Record<string, unknown>; alarmGiven: boolean } {
  const config: Record<string, unknown> = { roleArn: PLACEHOLDER_ROLE, ...given };
  // The alarm placeholder only stands in for an alarm nobody mentioned: not next to an explicit
  // waiver (noStopCondition), and in the given role's account, which the template builder checks.
  const alarmGiven = 'stopConditionArn' in given || 'noStopCondition' in given;
  if (!alarmGiven) config.stopConditionArn = placeholderAlarmFor(config.roleArn);
  if (select && platform === 'ecs') {
    config.tags = { REPLACE_TAG_KEY: 'REPLACE_TAG_VALUE' };
    notes.push(say.tags);
  } else if (select) {
    // FIS selects EKS pods by target parameters only (never by tag or ARN).
    config.parameters = {
      clusterIdentifier: 'REPLACE_WITH_CLUSTER',
      namespace: 'REPLACE_WITH_NAMESPACE',
      selectorType: 'labelSelector',
      selectorValue: 'REPLACE_KEY=REPLACE_VALUE',
    };
    notes.push(say.parameters);
  }
  if (config.roleArn === PLACEHOLDER_ROLE) notes.push(say.role);
  return { config, alarmGiven };
}

export interface FisAction {
  actionId: string;
  parameters: Record<string, string>;
  /** eks: no service account was given, the parameter is a placeholder. */
  serviceAccountPlaceholder: boolean;
}

/**
 * The network action for `fault` on the dependency's tasks or pods (`port`: the dependency's,
 * which the blackhole drops), its jitter and blackhole meaning said in `notes`. `portArgument`
 * names where the port came from, for the note.
 */
export function fisNetworkAction(
  fault: NetworkFault,
  platform: FisPlatform,
  port: number,
  serviceAccount: unknown,
  notes: string[],
  portArgument: string,
): FisAction {
  const prefix = platform === 'ecs' ? 'aws:ecs:task-network-' : 'aws:eks:pod-network-';
  const parameters: Record<string, string> = {};
  let actionId: string;
  switch (fault.kind) {
    case 'latency':
      actionId = `${prefix}latency`;
      parameters.delayMilliseconds = String(fault.delay);
      // Set even when 0: the ECS action's default jitter is 10 ms.
      parameters.jitterMilliseconds = String(fault.jitter);
      if (fault.jitter > 0)
        notes.push(
          "jitterMilliseconds carries faultline's uniform deviation " +
            '(latency ± deviation); our reference does not state the ' +
            'distribution FIS uses — check it before comparing tails.',
        );
      break;
    case 'loss':
      actionId = `${prefix}packet-loss`;
      parameters.lossPercent = String(fault.percent);
      break;
    case 'blackhole':
      // Inbound traffic to the port dropped: no request reaches the service and nothing is
      // answered, which is faultline's blackhole both ways (and one way on the requests).
      actionId = `${prefix}blackhole-port`;
      parameters.port = String(port);
      parameters.trafficType = 'ingress';
      parameters.protocol = 'tcp';
      notes.push(
        `The blackhole drops traffic arriving at port ${port} (the port ` +
          `of ${portArgument}) on the targeted ` +
          `${platform === 'ecs' ? 'tasks' : 'pods'}: no request reaches the ` +
          `service and clients hang until their timeout, as with ` +
          `faultline's blackhole (both ways by default).`,
      );
      break;
    default:
      throw new Error(`unreachable: ${fault.kind} on fis`);
  }
  let serviceAccountPlaceholder = false;
  if (platform === 'eks') {
    if (typeof serviceAccount === 'string' && serviceAccount.trim() !== '')
      parameters.kubernetesServiceAccount = serviceAccount;
    else {
      parameters.kubernetesServiceAccount = 'REPLACE_WITH_SERVICE_ACCOUNT';
      serviceAccountPlaceholder = true;
    }
  }
  return { actionId, parameters, serviceAccountPlaceholder };
}
