/**
 * Parameters for a recommended action: what the finding says (a delay in ms, a loss percentage, a
 * port, an Availability Zone, a Region, an API operation), else a working default — AWS's own
 * where it documents one, else the usual value for the experiment. What neither gives (a
 * Kubernetes service account, a process name) is left for the user and listed as such.
 */
import type { FisAction } from './catalog.js';
import { regionsIn, zonesIn } from './finding.js';
import { documentArn, documentParameters, findDocument } from './ssm-documents.js';

export interface SuggestContext {
  /** The finding's text. */
  text: string;
  /** Failure modes the finding names. */
  concepts: ReadonlySet<string>;
  /** The resources given with the finding (ARNs carry a Region). */
  resources: readonly string[];
  /** The action's length, when it has one. */
  durationMs: number | undefined;
  /** aws:ssm:send-command: the document the recommendation runs. */
  document: string | undefined;
}

export interface Suggestion {
  parameters: Record<string, string>;
  /** Said with the recommendation: where a value came from when the user should check it. */
  notes: string[];
  /** Required values inside a parameter still to set (`documentParameters.Port`). */
  toSet: string[];
}

function firstNumber(text: string, pattern: RegExp): number | undefined {
  const match = pattern.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** A delay written in the finding: "300ms", "300 ms", "3 seconds", "2 s". */
function delayMs(text: string): number | undefined {
  const ms = firstNumber(text, /(\d+(?:\.\d+)?)\s*ms\b/i);
  if (ms !== undefined) return ms;
  const seconds = firstNumber(text, /(\d+(?:\.\d+)?)\s*(?:s|sec|secs|second|seconds)\b/i);
  return seconds === undefined ? undefined : seconds * 1000;
}

function percentIn(text: string, from = 0): number | undefined {
  const value = firstNumber(text, /(\d+(?:\.\d+)?)\s*%/);
  return value !== undefined && value >= from && value <= 100 ? value : undefined;
}

/** A port the finding names: "port 6379", ":6379". */
function portIn(text: string): number | undefined {
  const port = firstNumber(text, /\bport\s+(\d{1,5})\b/i) ?? firstNumber(text, /(?<![\d.]):(\d{2,5})\b/);
  return port !== undefined && port >= 1 && port <= 65535 ? port : undefined;
}

/** The experiment's Region: one the finding or its resources name, else us-east-1 (and a note). */
function regionOf(context: SuggestContext, notes: string[]): string {
  const named = regionsIn(context.text)[0] ?? context.resources.map((r) => /^arn:aws[a-z-]*:[a-z0-9-]+:([a-z]{2}(?:-gov)?-[a-z]+-\d):/.exec(r)?.[1]).find((r) => r !== undefined);
  if (named) return named;
  notes.push('documentArn names us-east-1: use the Region the experiment runs in');
  return 'us-east-1';
}

/** AWS API operation names in the finding (DescribeInstances, PutRecords). */
function operationsIn(text: string): string[] {
  const verbs = 'Describe|Run|Start|Stop|Terminate|Create|Delete|Put|Get|List|Update|Modify|Attach|Detach|Associate|Register|Deregister';
  return [...new Set(text.match(new RegExp(`\\b(?:${verbs})[A-Z][A-Za-z]+\\b`, 'g')) ?? [])].filter((name) => !/Exception$|Exceeded$/.test(name));
}

export function suggestParameters(action: FisAction, context: SuggestContext): Suggestion {
  const p: Record<string, string> = {};
  const notes: string[] = [];
  const toSet: string[] = [];
  const { text, concepts } = context;
  switch (action.id) {
    case 'aws:ecs:task-network-latency':
    case 'aws:eks:pod-network-latency':
      p.delayMilliseconds = String(Math.round(delayMs(text) ?? 200));
      break;
    case 'aws:ecs:task-network-packet-loss':
    case 'aws:eks:pod-network-packet-loss':
      p.lossPercent = String(percentIn(text) ?? 7);
      break;
    case 'aws:ecs:task-network-blackhole-port':
    case 'aws:eks:pod-network-blackhole-port': {
      const port = portIn(text);
      if (port !== undefined) p.port = String(port);
      p.trafficType = 'egress';
      p.protocol = 'tcp';
      notes.push('trafficType egress: the targets lose their outbound connections to that port (the dependency); ingress cuts their own clients instead');
      break;
    }
    case 'aws:lambda:invocation-add-delay': {
      const ms = delayMs(text);
      if (ms !== undefined && ms <= 900_000) p.startupDelayMilliseconds = String(Math.round(ms));
      break;
    }
    case 'aws:lambda:invocation-error':
      p.preventExecution = 'true';
      p.invocationPercentage = String(percentIn(text, 1) ?? 50);
      break;
    case 'aws:lambda:invocation-http-integration-response':
      p.preventExecution = 'true';
      p.statusCode = /\b(5\d\d)\b/.exec(text)?.[1] ?? '500';
      p.contentTypeHeader = 'application/json';
      p.invocationPercentage = String(percentIn(text, 1) ?? 50);
      break;
    case 'aws:fis:inject-api-internal-error':
    case 'aws:fis:inject-api-throttle-error':
    case 'aws:fis:inject-api-unavailable-error': {
      p.service = /\bkinesis\b/i.test(text) ? 'kinesis' : 'ec2';
      p.percentage = String(percentIn(text, 1) ?? 50);
      const operations = operationsIn(text);
      if (operations.length > 0) p.operations = operations.join(',');
      break;
    }
    case 'aws:network:disrupt-connectivity':
      p.scope = /\bs3\b/i.test(text) ? 's3' : /\bdynamo(?:db)?\b/i.test(text) ? 'dynamodb' : concepts.has('az') ? 'availability-zone' : 'all';
      break;
    case 'aws:network:route-table-disrupt-cross-region-connectivity':
    case 'aws:network:transit-gateway-disrupt-cross-region-connectivity':
    case 'aws:s3:bucket-pause-replication': {
      // The Region cut off (or replicated to) is the other one: the last the finding names.
      const regions = regionsIn(text);
      if (regions.length > 0) p.region = regions[regions.length - 1]!;
      break;
    }
    case 'aws:arc:start-zonal-autoshift': {
      const zone = zonesIn(text).ids[0];
      if (zone) p.availabilityZoneIdentifier = zone;
      p.managedResourceTypes = 'ASG,ALB,NLB,EKS';
      break;
    }
    case 'aws:ec2:asg-insufficient-instance-capacity-error':
    case 'aws:ec2:api-insufficient-instance-capacity-error': {
      const zones = zonesIn(text);
      const named = zones.ids.length > 0 ? zones.ids : zones.names;
      if (named.length > 0) p.availabilityZoneIdentifiers = named.join(',');
      p.percentage = '100';
      break;
    }
    case 'aws:rds:reboot-db-instances':
      if (concepts.has('failover')) p.forceFailover = 'true';
      break;
    case 'aws:ec2:send-spot-instance-interruptions':
      p.durationBeforeInterruption = 'PT2M';
      break;
    case 'aws:eks:terminate-nodegroup-instances':
      p.instanceTerminationPercentage = String(percentIn(text, 1) ?? 30);
      break;
    case 'aws:ecs:drain-container-instances':
      p.drainagePercentage = String(percentIn(text, 1) ?? 30);
      break;
    case 'aws:kinesis:stream-provisioned-throughput-exception':
    case 'aws:kinesis:stream-expired-iterator-exception':
    case 'aws:dsql:cluster-connection-failure':
      p.percentage = String(percentIn(text, 1) ?? 50);
      break;
    case 'aws:cloudwatch:assert-alarm-state': {
      const alarms = context.resources.filter((r) => /^arn:aws[a-z-]*:cloudwatch:[^:]+:\d{12}:alarm:/.test(r.trim()));
      if (alarms.length > 0) p.alarmArns = alarms.slice(0, 5).join(',');
      // An alarm that stayed silent: the experiment checks it goes to ALARM under the fault.
      if (concepts.has('alarm')) p.alarmStates = 'ALARM';
      break;
    }
    case 'aws:eks:inject-kubernetes-custom-resource':
      if (concepts.has('dns')) {
        p.kubernetesApiVersion = 'chaos-mesh.org/v1alpha1';
        p.kubernetesKind = 'DNSChaos';
        p.kubernetesNamespace = 'default';
        p.kubernetesSpec = JSON.stringify({ action: 'error', mode: 'all', patterns: ['*'], selector: { namespaces: ['default'] } });
        notes.push('the DNSChaos spec makes every lookup fail for the pods of the namespace "default": narrow selector and patterns to the service');
      }
      break;
    case 'aws:ssm:send-command': {
      const document = context.document === undefined ? undefined : findDocument(context.document);
      if (!document) break;
      p.documentArn = documentArn(document.name, regionOf(context, notes));
      const values: Record<string, string> = {};
      if (document.name === 'AWSFIS-Run-Memory-Stress') values.Percent = String(percentIn(text, 1) ?? 80);
      if (document.name === 'AWSFIS-Run-Network-Latency') values.DelayMilliseconds = String(Math.round(delayMs(text) ?? 200));
      if (document.name === 'AWSFIS-Run-Network-Packet-Loss') values.LossPercent = String(percentIn(text) ?? 7);
      if (document.name === 'AWSFIS-Run-Network-Blackhole-Port') {
        const port = portIn(text);
        if (port !== undefined) values.Port = String(port);
        values.Protocol = 'tcp';
        values.TrafficType = 'egress';
      }
      const parameters = documentParameters(document, values, context.durationMs);
      const missing = document.parameters.filter((parameter) => parameter.required && parameters[parameter.name] === undefined).map((parameter) => parameter.name);
      p.documentParameters = JSON.stringify(parameters);
      toSet.push(...missing.map((name) => `documentParameters.${name}`));
      break;
    }
  }
  return { parameters: p, notes, toSet };
}
