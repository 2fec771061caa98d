/**
 * What goes with a recommended action besides its parameters: the CloudWatch alarm that should
 * stop it, and the local faultline scenario that rehearses the same failure before the cloud run
 * (null where no faultline scenario reproduces it: CPU, memory, instance loss).
 */
import type { FaultDeclaration } from '../proxy/faults/declaration.js';
import { LATENCY } from '../proxy/faults/latency.declaration.js';
import { PACKET_LOSS } from '../proxy/faults/packet-loss.declaration.js';
import { HTTP_ERROR } from '../proxy/http/error.declaration.js';
import type { FisAction } from './catalog.js';

export interface LocalRehearsal {
  tool: string;
  arguments: Record<string, string | number | boolean>;
  note: string;
}

const STOP_SUGGESTIONS: Array<[RegExp, string]> = [
  [
    /network|latency|blackhole|connectivity|vpc|transit|directconnect|arc|elasticache/,
    'an alarm on the client-facing p99 latency or 5xx rate of the ' +
      'affected service (e.g. the load balancer’s TargetResponseTime ' +
      'p99 or HTTPCode_Target_5XX_Count)',
  ],
  [
    /rds|dsql|dynamodb|memorydb|s3/,
    'an alarm on the application’s error rate or the data store’s error/latency metric',
  ],
  [/lambda/, 'an alarm on the function’s Errors or Throttles, or the API’s 5XXError'],
  [/kinesis/, 'an alarm on the consumer’s IteratorAge or the producer’s error rate'],
  [/./, 'an alarm on the service’s error rate or latency SLO (burn rate)'],
];

/**
 * A fault's scenario arguments from FIS action parameters (`lossPercent` 7 → loss_rate 0.07), by
 * the parameter each field's declaration names; a parameter left out takes `defaults`' value, a
 * field with neither is left out.
 */
function fisArguments(
  fault: FaultDeclaration,
  parameters: Readonly<Record<string, string | undefined>>,
  defaults: Readonly<Record<string, number>> = {},
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const field of fault.fields) {
    if (field.fis === undefined || field.argument === undefined) continue;
    const given = parameters[field.fis.parameter];
    const value = given === undefined ? defaults[field.fis.parameter] : Number(given);
    if (value !== undefined) out[field.argument.name] = value / (field.fis.divisor ?? 1);
  }
  return out;
}

export function localRehearsal(action: FisAction, parameters: Record<string, string>): LocalRehearsal | null {
  if (action.id === 'aws:ssm:send-command') return documentRehearsal(parameters);
  const dependency =
    'add url (your service) and, for a dependency of it, proxies "LOCAL=HOST:PORT" pointed at that dependency';
  const percentage = (value: string | undefined, fallback: number): number =>
    value === undefined ? fallback : Number(value) / 100;
  switch (action.id) {
    case 'aws:ecs:task-network-latency':
    case 'aws:eks:pod-network-latency':
      return {
        tool: 'fault_run_latency_impact_scenario',
        arguments: {
          ...fisArguments(LATENCY, parameters, { delayMilliseconds: 200, jitterMilliseconds: 0 }),
          distribution: 'uniform',
        },
        note: `the same added delay on the service's traffic, through a local proxy; ${dependency}`,
      };
    case 'aws:lambda:invocation-add-delay':
      return {
        tool: 'fault_run_latency_impact_scenario',
        arguments: fisArguments(
          LATENCY,
          { delayMilliseconds: parameters.startupDelayMilliseconds },
          { delayMilliseconds: 1000 },
        ),
        note: `the function's delay as a delay on calls to it; ${dependency}`,
      };
    case 'aws:ecs:task-network-packet-loss':
    case 'aws:eks:pod-network-packet-loss':
      return {
        tool: 'fault_run_packet_loss_impact_scenario',
        arguments: fisArguments(PACKET_LOSS, parameters, { lossPercent: 7 }),
        note: `TCP segment loss with the retransmission stalls it causes; ${dependency}`,
      };
    case 'aws:ecs:task-network-blackhole-port':
    case 'aws:eks:pod-network-blackhole-port':
    case 'aws:network:disrupt-connectivity':
    case 'aws:network:route-table-disrupt-cross-region-connectivity':
    case 'aws:network:transit-gateway-disrupt-cross-region-connectivity':
    case 'aws:network:disrupt-vpc-endpoint':
    case 'aws:directconnect:virtual-interface-disconnect':
    case 'aws:dsql:cluster-connection-failure':
    case 'aws:elasticache:replicationgroup-interrupt-az-power':
      return {
        tool: 'fault_run_blackhole_impact_scenario',
        arguments: { fault_start: '20%', fault_duration: '50%' },
        note:
          `traffic to the lost dependency stops moving (clients wait for ` +
          `their own timeouts), for part of the run; ${dependency}`,
      };
    case 'aws:rds:reboot-db-instances':
    case 'aws:rds:failover-db-cluster':
      return {
        tool: 'fault_run_blackhole_impact_scenario',
        arguments: { fault_start: '20%', fault_duration: '30s' },
        note:
          `the database unreachable for about a failover's length; put the ` +
          `proxy between the app and the database with proxies ` +
          `"LOCAL=DBHOST:5432" and add url`,
      };
    case 'aws:fis:inject-api-throttle-error':
    case 'aws:kinesis:stream-provisioned-throughput-exception':
      return {
        tool: 'fault_run_http_error_impact_scenario',
        arguments: { http_fault: 'rate_limit', probability: percentage(parameters.percentage, 0.5) },
        note: `HTTP 429 answers on the calls the app makes to the API; ${dependency}`,
      };
    case 'aws:fis:inject-api-internal-error':
      return {
        tool: 'fault_run_http_error_impact_scenario',
        arguments: {
          http_fault: 'error',
          ...fisArguments(HTTP_ERROR, { statusCode: '500' }),
          probability: percentage(parameters.percentage, 0.5),
        },
        note: `HTTP 500 answers on the calls the app makes to the API; ${dependency}`,
      };
    case 'aws:fis:inject-api-unavailable-error':
      return {
        tool: 'fault_run_http_error_impact_scenario',
        arguments: {
          http_fault: 'error',
          ...fisArguments(HTTP_ERROR, { statusCode: '503' }),
          probability: percentage(parameters.percentage, 0.5),
        },
        note: `HTTP 503 answers on the calls the app makes to the API; ${dependency}`,
      };
    case 'aws:lambda:invocation-error':
      return {
        tool: 'fault_run_http_error_impact_scenario',
        arguments: {
          http_fault: 'error',
          ...fisArguments(HTTP_ERROR, { statusCode: '500' }),
          probability: percentage(parameters.invocationPercentage, 1),
        },
        note: `HTTP 5xx answers from the function's endpoint; ${dependency}`,
      };
    case 'aws:lambda:invocation-http-integration-response':
      return {
        tool: 'fault_run_http_error_impact_scenario',
        arguments: {
          http_fault: 'error',
          ...fisArguments(HTTP_ERROR, parameters, { statusCode: 500 }),
          probability: percentage(parameters.invocationPercentage, 1),
        },
        note: `the same status code from the function's endpoint; ${dependency}`,
      };
    default:
      return null;
  }
}

/** The kind of alarm that should stop the action: on what its failure hurts first. */
export function stopSuggestion(actionId: string): string {
  return STOP_SUGGESTIONS.find(([pattern]) => pattern.test(actionId))![1];
}

/** An SSM network document on EC2 is rehearsed as the same fault on ECS would be. */
function documentRehearsal(parameters: Record<string, string>): LocalRehearsal | null {
  const document = /:document\/([\w.-]+)$/.exec(parameters.documentArn ?? '')?.[1];
  let values: Record<string, string> = {};
  try {
    values = JSON.parse(parameters.documentParameters ?? '{}') as Record<string, string>;
  } catch {
    // not JSON: the template builder refuses it; there is nothing to rehearse from
  }
  const stands = (id: string, own: Record<string, string>) => localRehearsal({ id } as FisAction, own);
  switch (document) {
    case 'AWSFIS-Run-Network-Latency':
      return stands('aws:ecs:task-network-latency', { delayMilliseconds: values.DelayMilliseconds ?? '200' });
    case 'AWSFIS-Run-Network-Packet-Loss':
      return stands('aws:ecs:task-network-packet-loss', { lossPercent: values.LossPercent ?? '7' });
    case 'AWSFIS-Run-Network-Blackhole-Port':
      return stands('aws:ecs:task-network-blackhole-port', {});
    default:
      return null;
  }
}
