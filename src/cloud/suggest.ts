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
  const named =
    regionsIn(context.text)[0] ??
    context.resources
      .map((r) => /^arn:aws[a-z-]*:[a-z0-9-]+:([a-z]{2}(?:-gov)?-[a-z]+-\d):/.exec(r)?.[1])
      .find((r) => r !== undefined);
  if (named) return named;
  notes.push('documentArn names us-east-1: use the Region the experiment runs in');
  return 'us-east-1';
}

/** AWS API operation names in the finding (DescribeInstances, PutRecords). */
function operationsIn(text: string): string[] {
  const verbs =
    'Describe|Run|Start|Stop|Terminate|Create|Delete|Put|Get|List|Update|Modify|Attach|Detach|Associate|Register|Deregister';
  return [...new Set(text.match(new RegExp(`\\b(?:${verbs})[A-Z][A-Za-z]+\\b`, 'g')) ?? [])].filter(
    (name) => !/Exception$|Exceeded$/.test(name),
  );
}

/** Sets the parameters one action (or a family of actions) takes from the finding. */
type Suggester = (context: SuggestContext, out: Suggestion) => void;

const latency: Suggester = ({ text }, { parameters: p }) => {
  p.delayMilliseconds = String(Math.round(delayMs(text) ?? 200));
};

const packetLoss: Suggester = (context, { parameters: p }) => {
  p.lossPercent = String(percentIn(context.text) ?? 7);
};

const blackholePort: Suggester = ({ text }, { parameters: p, notes }) => {
  const port = portIn(text);
  if (port !== undefined) p.port = String(port);
  p.trafficType = 'egress';
  p.protocol = 'tcp';
  notes.push(
    'trafficType egress: the targets lose their outbound connections ' +
      'to that port (the dependency); ingress cuts their own clients ' +
      'instead',
  );
};

const lambdaDelay: Suggester = ({ text }, { parameters: p }) => {
  const ms = delayMs(text);
  if (ms !== undefined && ms <= 900_000) p.startupDelayMilliseconds = String(Math.round(ms));
};

const lambdaError: Suggester = (context, { parameters: p }) => {
  p.preventExecution = 'true';
  p.invocationPercentage = String(percentIn(context.text, 1) ?? 50);
};

const lambdaHttpResponse: Suggester = (context, { parameters: p }) => {
  p.preventExecution = 'true';
  p.statusCode = /\b(5\d\d)\b/.exec(context.text)?.[1] ?? '500';
  p.contentTypeHeader = 'application/json';
  p.invocationPercentage = String(percentIn(context.text, 1) ?? 50);
};

const apiError: Suggester = (context, { parameters: p }) => {
  p.service = /\bkinesis\b/i.test(context.text) ? 'kinesis' : 'ec2';
  p.percentage = String(percentIn(context.text, 1) ?? 50);
  const operations = operationsIn(context.text);
  if (operations.length > 0) p.operations = operations.join(',');
};

const disruptConnectivity: Suggester = ({ text, concepts }, { parameters: p }) => {
  p.scope = /\bs3\b/i.test(text)
    ? 's3'
    : /\bdynamo(?:db)?\b/i.test(text)
      ? 'dynamodb'
      : concepts.has('az')
        ? 'availability-zone'
        : 'all';
};

/** The Region cut off (or replicated to) is the other one: the last the finding names. */
const otherRegion: Suggester = ({ text }, { parameters: p }) => {
  const regions = regionsIn(text);
  if (regions.length > 0) p.region = regions[regions.length - 1]!;
};

const zonalAutoshift: Suggester = ({ text }, { parameters: p }) => {
  const zone = zonesIn(text).ids[0];
  if (zone) p.availabilityZoneIdentifier = zone;
  p.managedResourceTypes = 'ASG,ALB,NLB,EKS';
};

const insufficientCapacity: Suggester = ({ text }, { parameters: p }) => {
  const zones = zonesIn(text);
  const named = zones.ids.length > 0 ? zones.ids : zones.names;
  if (named.length > 0) p.availabilityZoneIdentifiers = named.join(',');
  p.percentage = '100';
};

const assertAlarmState: Suggester = ({ resources, concepts }, { parameters: p }) => {
  const alarms = resources.filter((r) => /^arn:aws[a-z-]*:cloudwatch:[^:]+:\d{12}:alarm:/.test(r.trim()));
  if (alarms.length > 0) p.alarmArns = alarms.slice(0, 5).join(',');
  // An alarm that stayed silent: the experiment checks it goes to ALARM under the fault.
  if (concepts.has('alarm')) p.alarmStates = 'ALARM';
};

const kubernetesCustomResource: Suggester = ({ concepts }, { parameters: p, notes }) => {
  if (!concepts.has('dns')) return;
  p.kubernetesApiVersion = 'chaos-mesh.org/v1alpha1';
  p.kubernetesKind = 'DNSChaos';
  p.kubernetesNamespace = 'default';
  p.kubernetesSpec = JSON.stringify({
    action: 'error',
    mode: 'all',
    patterns: ['*'],
    selector: { namespaces: ['default'] },
  });
  notes.push(
    'the DNSChaos spec makes every lookup fail for the pods of the ' +
      'namespace "default": narrow selector and patterns to the service',
  );
};

/** aws:ssm:send-command: the document's ARN and its parameters, those the finding gives filled in. */
const ssmSendCommand: Suggester = (context, { parameters: p, notes, toSet }) => {
  const { text } = context;
  const document = context.document === undefined ? undefined : findDocument(context.document);
  if (!document) return;
  p.documentArn = documentArn(document.name, regionOf(context, notes));
  const values: Record<string, string> = {};
  if (document.name === 'AWSFIS-Run-Memory-Stress') values.Percent = String(percentIn(text, 1) ?? 80);
  if (document.name === 'AWSFIS-Run-Network-Latency')
    values.DelayMilliseconds = String(Math.round(delayMs(text) ?? 200));
  if (document.name === 'AWSFIS-Run-Network-Packet-Loss') values.LossPercent = String(percentIn(text) ?? 7);
  if (document.name === 'AWSFIS-Run-Network-Blackhole-Port') {
    const port = portIn(text);
    if (port !== undefined) values.Port = String(port);
    values.Protocol = 'tcp';
    values.TrafficType = 'egress';
  }
  const parameters = documentParameters(document, values, context.durationMs);
  const missing = document.parameters
    .filter((parameter) => parameter.required && parameters[parameter.name] === undefined)
    .map((parameter) => parameter.name);
  p.documentParameters = JSON.stringify(parameters);
  toSet.push(...missing.map((name) => `documentParameters.${name}`));
};

/** Sets one parameter to a percentage the finding gives (at least 1), else `fallback`. */
const percentage =
  (name: string, fallback: number): Suggester =>
  (context, { parameters }) => {
    parameters[name] = String(percentIn(context.text, 1) ?? fallback);
  };

const SUGGESTERS = new Map<string, Suggester>([
  ['aws:ecs:task-network-latency', latency],
  ['aws:eks:pod-network-latency', latency],
  ['aws:ecs:task-network-packet-loss', packetLoss],
  ['aws:eks:pod-network-packet-loss', packetLoss],
  ['aws:ecs:task-network-blackhole-port', blackholePort],
  ['aws:eks:pod-network-blackhole-port', blackholePort],
  ['aws:lambda:invocation-add-delay', lambdaDelay],
  ['aws:lambda:invocation-error', lambdaError],
  ['aws:lambda:invocation-http-integration-response', lambdaHttpResponse],
  ['aws:fis:inject-api-internal-error', apiError],
  ['aws:fis:inject-api-throttle-error', apiError],
  ['aws:fis:inject-api-unavailable-error', apiError],
  ['aws:network:disrupt-connectivity', disruptConnectivity],
  ['aws:network:route-table-disrupt-cross-region-connectivity', otherRegion],
  ['aws:network:transit-gateway-disrupt-cross-region-connectivity', otherRegion],
  ['aws:s3:bucket-pause-replication', otherRegion],
  ['aws:arc:start-zonal-autoshift', zonalAutoshift],
  ['aws:ec2:asg-insufficient-instance-capacity-error', insufficientCapacity],
  ['aws:ec2:api-insufficient-instance-capacity-error', insufficientCapacity],
  [
    'aws:rds:reboot-db-instances',
    ({ concepts }, { parameters }) => {
      if (concepts.has('failover')) parameters.forceFailover = 'true';
    },
  ],
  [
    'aws:ec2:send-spot-instance-interruptions',
    (_context, { parameters }) => {
      parameters.durationBeforeInterruption = 'PT2M';
    },
  ],
  ['aws:eks:terminate-nodegroup-instances', percentage('instanceTerminationPercentage', 30)],
  ['aws:ecs:drain-container-instances', percentage('drainagePercentage', 30)],
  ['aws:kinesis:stream-provisioned-throughput-exception', percentage('percentage', 50)],
  ['aws:kinesis:stream-expired-iterator-exception', percentage('percentage', 50)],
  ['aws:dsql:cluster-connection-failure', percentage('percentage', 50)],
  ['aws:cloudwatch:assert-alarm-state', assertAlarmState],
  ['aws:eks:inject-kubernetes-custom-resource', kubernetesCustomResource],
  ['aws:ssm:send-command', ssmSendCommand],
]);

export function suggestParameters(action: FisAction, context: SuggestContext): Suggestion {
  const suggestion: Suggestion = { parameters: {}, notes: [], toSet: [] };
  SUGGESTERS.get(action.id)?.(context, suggestion);
  return suggestion;
}
