/**
 * Finding → ranked FIS experiments, offline and without a model.
 *
 * The finding's text (its values, never its keys) is tokenized and normalised; phrases from the
 * vocabulary match whole tokens in sequence, so "cpus" is not "cpu"'s substring hit and a key
 * named "network" counts for nothing. Each catalog action has a profile: the failure modes it
 * reproduces (weighted) and the services it acts on. An action scores the weights of the failure
 * modes the finding names, plus a bonus when the finding names one of its services; when the
 * finding names services and none of them is the action's, its score is cut (a database finding
 * is not an ECS experiment). Each action appears once; the list is sorted by score.
 */
import { ToolInputError } from '../errors.js';
import { durationParameter, findAction, type FisAction } from './catalog.js';
import { CONCEPTS, SERVICES, type Phrases } from './vocabulary.js';
import { byCodeUnits } from '../order.js';

export const MAX_FINDING_BYTES = 10_240;

export interface Finding {
  id: string | null;
  text: string;
}

export interface LocalRehearsal {
  tool: string;
  arguments: Record<string, string | number | boolean>;
  note: string;
}

export interface Recommendation {
  action: string;
  failure: string;
  why: string[];
  confidence: number;
  score: number;
  /** ISO 8601, for the action's duration parameter; null when the action takes none. */
  duration: string | null;
  /** Suggested values (strings, as FIS takes them), the duration excepted. */
  parameters: Record<string, string>;
  /** Required parameters the finding could not fill: set them before building the template. */
  parametersToSet: string[];
  targetResourceType: string | null;
  targetKey: string | null;
  stopCondition: { source: 'aws:cloudwatch:alarm'; suggestion: string };
  localRehearsal: LocalRehearsal | null;
}

export interface RecommendationSet {
  recommendations: Recommendation[];
  finding_id: string | null;
  count: number;
  detected: { services: string[]; failureModes: string[] };
}

interface Profile {
  concepts: Record<string, number>;
  services: readonly string[];
  /** Relevant whatever service the finding names (network-wide or account-wide faults). */
  generic?: boolean;
  duration?: string;
}

const PROFILES: Record<string, Profile> = {
  'aws:fis:inject-api-internal-error': { concepts: { api_error: 3, error: 0.5 }, services: ['awsapi', 'ec2', 'kinesis'] },
  'aws:fis:inject-api-throttle-error': { concepts: { throttle: 3.5 }, services: ['awsapi', 'ec2', 'kinesis'] },
  'aws:fis:inject-api-unavailable-error': { concepts: { unavailable: 3.5 }, services: ['awsapi', 'ec2', 'kinesis'] },
  'aws:arc:start-zonal-autoshift': { concepts: { zonal_shift: 4, az: 2 }, services: ['ec2', 'eks'], generic: true, duration: 'PT30M' },
  'aws:cloudwatch:assert-alarm-state': { concepts: { alarm: 5 }, services: [], generic: true },
  'aws:dynamodb:global-table-pause-replication': { concepts: { replication: 3, region: 1.5 }, services: ['dynamodb'], duration: 'PT10M' },
  'aws:dsql:cluster-connection-failure': { concepts: { connectivity: 3, error: 0.5, timeout: 1 }, services: ['dsql'] },
  'aws:ebs:pause-volume-io': { concepts: { io_pause: 4, io: 1, timeout: 1.5 }, services: ['ebs'], duration: 'PT2M' },
  'aws:ebs:volume-io-latency': { concepts: { io: 2.5, latency: 2 }, services: ['ebs'] },
  'aws:ec2:api-insufficient-instance-capacity-error': { concepts: { capacity: 3.5 }, services: ['ec2', 'awsapi'], duration: 'PT10M' },
  'aws:ec2:asg-insufficient-instance-capacity-error': { concepts: { capacity: 3, scaling: 2 }, services: ['ec2'], duration: 'PT10M' },
  'aws:ec2:reboot-instances': { concepts: { reboot: 3 }, services: ['ec2'] },
  'aws:ec2:send-spot-instance-interruptions': { concepts: { spot: 4 }, services: ['ec2'] },
  'aws:ec2:stop-instances': { concepts: { stop: 3, terminate: 1, az: 0.5 }, services: ['ec2'] },
  'aws:ec2:terminate-instances': { concepts: { terminate: 3.5 }, services: ['ec2'] },
  'aws:ecs:drain-container-instances': { concepts: { drain: 4 }, services: ['ecs'] },
  'aws:ecs:stop-task': { concepts: { crash: 1.5, terminate: 2, stop: 2, reboot: 1.5 }, services: ['ecs'] },
  'aws:ecs:task-cpu-stress': { concepts: { cpu: 4 }, services: ['ecs'] },
  'aws:ecs:task-io-stress': { concepts: { io: 3 }, services: ['ecs'] },
  'aws:ecs:task-kill-process': { concepts: { crash: 2.5, process: 2 }, services: ['ecs'] },
  'aws:ecs:task-network-blackhole-port': { concepts: { connectivity: 3, timeout: 1.5, port: 1 }, services: ['ecs'] },
  'aws:ecs:task-network-latency': { concepts: { latency: 4, timeout: 1, network: 0.5 }, services: ['ecs'] },
  'aws:ecs:task-network-packet-loss': { concepts: { packet_loss: 4.5, network: 0.5 }, services: ['ecs'] },
  'aws:eks:inject-kubernetes-custom-resource': { concepts: { custom_resource: 5 }, services: ['eks'] },
  'aws:eks:pod-cpu-stress': { concepts: { cpu: 4 }, services: ['eks'] },
  'aws:eks:pod-delete': { concepts: { pod_loss: 4, crash: 1.5, terminate: 1, reboot: 1 }, services: ['eks'] },
  'aws:eks:pod-io-stress': { concepts: { io: 3 }, services: ['eks'] },
  'aws:eks:pod-memory-stress': { concepts: { memory: 4 }, services: ['eks'] },
  'aws:eks:pod-network-blackhole-port': { concepts: { connectivity: 3, timeout: 1.5, port: 1 }, services: ['eks'] },
  'aws:eks:pod-network-latency': { concepts: { latency: 4, timeout: 1, network: 0.5 }, services: ['eks'] },
  'aws:eks:pod-network-packet-loss': { concepts: { packet_loss: 4.5, network: 0.5 }, services: ['eks'] },
  'aws:eks:terminate-nodegroup-instances': { concepts: { nodegroup: 3, terminate: 3 }, services: ['eks'] },
  'aws:elasticache:replicationgroup-interrupt-az-power': { concepts: { az: 3, failover: 2, connectivity: 1.5, terminate: 1 }, services: ['elasticache'] },
  'aws:kinesis:stream-provisioned-throughput-exception': { concepts: { throughput_exceeded: 4, throttle: 3 }, services: ['kinesis'] },
  'aws:kinesis:stream-expired-iterator-exception': { concepts: { expired_iterator: 5 }, services: ['kinesis'] },
  'aws:lambda:invocation-add-delay': { concepts: { cold_start: 4, latency: 3, timeout: 1 }, services: ['lambda'] },
  'aws:lambda:invocation-error': { concepts: { invocation_error: 4, error: 1.5, api_error: 1, crash: 1 }, services: ['lambda'] },
  'aws:lambda:invocation-http-integration-response': { concepts: { http_status: 4, api_error: 1 }, services: ['lambda'] },
  'aws:memorydb:multi-region-cluster-pause-replication': { concepts: { replication: 3, region: 1.5 }, services: ['memorydb'], duration: 'PT10M' },
  'aws:network:disrupt-connectivity': { concepts: { connectivity: 3, az: 1.5, network: 1, timeout: 0.5 }, services: ['network', 's3', 'dynamodb'], generic: true },
  'aws:network:route-table-disrupt-cross-region-connectivity': { concepts: { region: 3.5, connectivity: 1.5 }, services: ['network'], generic: true },
  'aws:network:transit-gateway-disrupt-cross-region-connectivity': { concepts: { transit_gateway: 5, region: 1.5, connectivity: 1 }, services: ['network'], generic: true },
  'aws:network:disrupt-vpc-endpoint': { concepts: { vpc_endpoint: 5, connectivity: 1.5 }, services: ['network'], generic: true },
  'aws:rds:failover-db-cluster': { concepts: { failover: 4, connectivity: 1.5, az: 1, reboot: 0.5 }, services: ['rds'] },
  'aws:rds:reboot-db-instances': { concepts: { reboot: 3.5, failover: 2, connectivity: 1.5 }, services: ['rds'] },
  'aws:s3:bucket-pause-replication': { concepts: { replication: 3.5, region: 1 }, services: ['s3'], duration: 'PT10M' },
  'aws:ssm:send-command': { concepts: { ssm: 4, cpu: 2.5, memory: 2.5, io: 1.5, crash: 0.5 }, services: ['ec2'] },
  'aws:ssm:start-automation-execution': { concepts: { automation: 3 }, services: [], generic: true },
  'aws:directconnect:virtual-interface-disconnect': { concepts: { direct_connect: 5, connectivity: 1 }, services: ['network'], generic: true, duration: 'PT10M' },
};

// ---------------------------------------------------------------- finding text

/** The finding as fis-recommender takes it ({id, summary, type, description}, any JSON) or plain text. */
export function readFinding(input: string): Finding {
  if (typeof input !== 'string' || input.trim() === '') throw new ToolInputError('finding: give the finding as plain text or as JSON {id, summary, type, description}');
  if (Buffer.byteLength(input) > MAX_FINDING_BYTES) throw new ToolInputError(`finding: at most ${MAX_FINDING_BYTES} bytes (got ${Buffer.byteLength(input)})`);
  const trimmed = input.trim();
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return { id: null, text: trimmed };
    }
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const object = parsed as Record<string, unknown>;
      const id = object.id ?? object.finding_id ?? object.investigationId;
      return { id: typeof id === 'string' || typeof id === 'number' ? String(id) : null, text: valuesOf(object).join(' . ') };
    }
  }
  return { id: null, text: trimmed };
}

/** String values only (keys would match themselves: a key named "network" is not a finding about networks). */
function valuesOf(value: unknown, depth = 0): string[] {
  if (depth > 6) return [];
  if (typeof value === 'string') return [value];
  if (typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap((item) => valuesOf(item, depth + 1));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value)
      .filter(([key]) => key !== 'id' && key !== 'finding_id' && key !== 'investigationId')
      .flatMap(([, item]) => valuesOf(item, depth + 1));
  }
  return [];
}

/** Lower-case words; a plural's final s dropped (tasks → task, pods → pod). */
export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((token) => token.length > 0)
    .map(normalize);
}

function normalize(token: string): string {
  if (token.length > 4 && token.endsWith('ies')) return `${token.slice(0, -3)}y`;
  // status, kinesis, redis keep their s; cpus, gpus lose it.
  if (token.length > 3 && token.endsWith('s') && !/(ss|is|os)$/.test(token) && !(token.length > 4 && token.endsWith('us'))) return token.slice(0, -1);
  return token;
}

interface Match {
  strength: number;
  phrases: string[];
}

/**
 * Both readings of the text: words as written ("DynamoDB", "MySQL") and with CamelCase split
 * ("ProvisionedThroughputExceededException" → "provisioned throughput exceeded exception").
 */
function readings(text: string): string {
  return ` ${tokenize(text).join(' ')} | ${tokenize(text.replace(/([a-z])([A-Z])/g, '$1 $2')).join(' ')} `;
}

/** Each phrase once in normalised form (` packet loss `), so matching is a search per phrase. */
const NORMALISED = new Map<string, string>();
function normalisedPhrase(phrase: string): string {
  let found = NORMALISED.get(phrase);
  if (found === undefined) {
    found = ` ${tokenize(phrase).join(' ')} `;
    NORMALISED.set(phrase, found);
  }
  return found;
}

function matchGroups(joined: string, groups: Record<string, Phrases>): Map<string, Match> {
  const found = new Map<string, Match>();
  for (const [group, phrases] of Object.entries(groups)) {
    for (const [phrase, weight] of phrases) {
      if (!joined.includes(normalisedPhrase(phrase))) continue;
      const entry = found.get(group) ?? { strength: 0, phrases: [] };
      entry.strength = Math.max(entry.strength, weight);
      if (!entry.phrases.includes(phrase)) entry.phrases.push(phrase);
      found.set(group, entry);
    }
  }
  return found;
}

/** Services named by ARNs (arn:aws:rds:…) or resource types (aws:rds:db) the caller passed. */
function servicesOfResources(resources: readonly string[]): Map<string, Match> {
  const found = new Map<string, Match>();
  resources.forEach((resource, index) => {
    const text = resource.trim();
    const arn = /^arn:aws[a-z-]*:([a-z0-9-]+):[^:]*:[^:]*:(.*)$/.exec(text);
    const type = /^aws:([a-z0-9-]+):([a-z0-9-]+)$/.exec(text);
    if (!arn && !type) throw new ToolInputError(`resources[${index}]: "${resource}" is neither an ARN (arn:aws:…) nor a resource type (aws:<service>:<type>)`);
    const service = arn ? arn[1]! : type![1]!;
    const rest = arn ? arn[2]! : type![2]!;
    let name: string | undefined;
    if (service === 'ec2') name = /volume|ebs/.test(rest) ? 'ebs' : /subnet|vpc|transit|route/.test(rest) ? 'network' : 'ec2';
    else if (service === 'autoscaling') name = 'ec2';
    else if (service === 'iam') name = 'awsapi';
    else if (service in SERVICES) name = service;
    if (name) found.set(name, { strength: 2, phrases: [text] });
  });
  return found;
}

// ---------------------------------------------------------------- suggestions

function firstNumber(text: string, pattern: RegExp): number | undefined {
  const match = pattern.exec(text);
  return match ? Number(match[1]) : undefined;
}

function suggestParameters(action: FisAction, text: string, services: Set<string>, concepts: Set<string>): Record<string, string> {
  const p: Record<string, string> = {};
  const ms = firstNumber(text, /(\d+(?:\.\d+)?)\s*ms\b/i);
  const percent = firstNumber(text, /(\d+(?:\.\d+)?)\s*%/);
  switch (action.id) {
    case 'aws:ecs:task-network-latency':
    case 'aws:eks:pod-network-latency':
      p.delayMilliseconds = String(Math.round(ms ?? 200));
      break;
    case 'aws:ecs:task-network-packet-loss':
    case 'aws:eks:pod-network-packet-loss':
      p.lossPercent = String(percent !== undefined && percent <= 100 ? percent : 7);
      break;
    case 'aws:lambda:invocation-add-delay':
      if (ms !== undefined && ms <= 900_000) p.startupDelayMilliseconds = String(Math.round(ms));
      break;
    case 'aws:lambda:invocation-error':
      p.preventExecution = 'true';
      p.invocationPercentage = '50';
      break;
    case 'aws:lambda:invocation-http-integration-response':
      p.preventExecution = 'true';
      p.statusCode = /\b502\b/.test(text) ? '502' : /\b504\b/.test(text) ? '504' : '500';
      p.contentTypeHeader = 'application/json';
      p.invocationPercentage = '50';
      break;
    case 'aws:fis:inject-api-internal-error':
    case 'aws:fis:inject-api-throttle-error':
    case 'aws:fis:inject-api-unavailable-error':
      p.service = services.has('kinesis') ? 'kinesis' : 'ec2';
      p.percentage = '50';
      break;
    case 'aws:network:disrupt-connectivity':
      p.scope = services.has('s3') ? 's3' : services.has('dynamodb') ? 'dynamodb' : concepts.has('az') ? 'availability-zone' : 'all';
      break;
    case 'aws:rds:reboot-db-instances':
      if (concepts.has('failover')) p.forceFailover = 'true';
      break;
    case 'aws:ec2:send-spot-instance-interruptions':
      p.durationBeforeInterruption = 'PT2M';
      break;
    case 'aws:ec2:stop-instances':
      p.startInstancesAfterDuration = 'PT5M';
      break;
    case 'aws:eks:terminate-nodegroup-instances':
      p.instanceTerminationPercentage = '30';
      break;
    case 'aws:ecs:drain-container-instances':
      p.drainagePercentage = '30';
      break;
    case 'aws:ec2:asg-insufficient-instance-capacity-error':
    case 'aws:ec2:api-insufficient-instance-capacity-error':
      p.percentage = '100';
      break;
    case 'aws:kinesis:stream-provisioned-throughput-exception':
    case 'aws:kinesis:stream-expired-iterator-exception':
    case 'aws:dsql:cluster-connection-failure':
      p.percentage = String(percent !== undefined && percent >= 1 && percent <= 100 ? percent : 50);
      break;
    case 'aws:ssm:send-command': {
      // The pre-built AWSFIS-Run-* documents (§5.2); the Region in the ARN is the user's to set.
      // Only the documents our reference names; memory stress is left for the user to choose.
      const document = concepts.has('memory') ? undefined : concepts.has('io') ? 'AWSFIS-Run-IO-Stress' : concepts.has('cpu') ? 'AWSFIS-Run-CPU-Stress' : undefined;
      if (document) p.documentArn = `arn:aws:ssm:us-east-1::document/${document}`;
      break;
    }
  }
  return p;
}

const STOP_SUGGESTION: Array<[RegExp, string]> = [
  [/network|latency|blackhole|connectivity|vpc|transit|directconnect|arc|elasticache/, 'an alarm on the client-facing p99 latency or 5xx rate of the affected service (e.g. the load balancer’s TargetResponseTime p99 or HTTPCode_Target_5XX_Count)'],
  [/rds|dsql|dynamodb|memorydb|s3/, 'an alarm on the application’s error rate or the data store’s error/latency metric'],
  [/lambda/, 'an alarm on the function’s Errors or Throttles, or the API’s 5XXError'],
  [/kinesis/, 'an alarm on the consumer’s IteratorAge or the producer’s error rate'],
  [/./, 'an alarm on the service’s error rate or latency SLO (burn rate)'],
];

function localRehearsal(action: FisAction, parameters: Record<string, string>): LocalRehearsal | null {
  const dependency = 'add url (your service) and, for a dependency of it, proxies "LOCAL=HOST:PORT" pointed at that dependency';
  const percentage = (value: string | undefined, fallback: number): number => (value === undefined ? fallback : Number(value) / 100);
  switch (action.id) {
    case 'aws:ecs:task-network-latency':
    case 'aws:eks:pod-network-latency':
      return {
        tool: 'fault_run_latency_impact_scenario',
        arguments: { latency: Number(parameters.delayMilliseconds ?? 200), deviation: Number(parameters.jitterMilliseconds ?? 0), distribution: 'uniform' },
        note: `the same added delay on the service's traffic, through a local proxy; ${dependency}`,
      };
    case 'aws:lambda:invocation-add-delay':
      return {
        tool: 'fault_run_latency_impact_scenario',
        arguments: { latency: Number(parameters.startupDelayMilliseconds ?? 1000) },
        note: `the function's delay as a delay on calls to it; ${dependency}`,
      };
    case 'aws:ecs:task-network-packet-loss':
    case 'aws:eks:pod-network-packet-loss':
      return {
        tool: 'fault_run_packet_loss_impact_scenario',
        arguments: { loss_rate: Number(parameters.lossPercent ?? 7) / 100 },
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
        note: `traffic to the lost dependency stops moving (clients wait for their own timeouts), for part of the run; ${dependency}`,
      };
    case 'aws:rds:reboot-db-instances':
    case 'aws:rds:failover-db-cluster':
      return {
        tool: 'fault_run_blackhole_impact_scenario',
        arguments: { fault_start: '20%', fault_duration: '30s' },
        note: `the database unreachable for about a failover's length; put the proxy between the app and the database with proxies "LOCAL=DBHOST:5432" and add url`,
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
        arguments: { http_fault: 'error', status_code: 500, probability: percentage(parameters.percentage, 0.5) },
        note: `HTTP 500 answers on the calls the app makes to the API; ${dependency}`,
      };
    case 'aws:fis:inject-api-unavailable-error':
      return {
        tool: 'fault_run_http_error_impact_scenario',
        arguments: { http_fault: 'error', status_code: 503, probability: percentage(parameters.percentage, 0.5) },
        note: `HTTP 503 answers on the calls the app makes to the API; ${dependency}`,
      };
    case 'aws:lambda:invocation-error':
      return {
        tool: 'fault_run_http_error_impact_scenario',
        arguments: { http_fault: 'error', status_code: 500, probability: percentage(parameters.invocationPercentage, 1) },
        note: `HTTP 5xx answers from the function's endpoint; ${dependency}`,
      };
    case 'aws:lambda:invocation-http-integration-response':
      return {
        tool: 'fault_run_http_error_impact_scenario',
        arguments: { http_fault: 'error', status_code: Number(parameters.statusCode ?? 500), probability: percentage(parameters.invocationPercentage, 1) },
        note: `the same status code from the function's endpoint; ${dependency}`,
      };
    default:
      return null;
  }
}

// ---------------------------------------------------------------- ranking

export interface RecommendOptions {
  resources?: readonly string[];
  /** Most recommendations returned (default 5). */
  limit?: number;
}

export function recommendExperiments(input: string, options: RecommendOptions = {}): RecommendationSet {
  const finding = readFinding(input);
  const text = readings(finding.text);
  const concepts = matchGroups(text, CONCEPTS);
  const services = matchGroups(text, SERVICES);
  for (const [name, match] of servicesOfResources(options.resources ?? [])) services.set(name, match);
  // "memorydb" names a service, not memory pressure; "db instance" is RDS, not EC2.
  if (services.has('rds') && services.get('ec2')?.phrases.every((p) => p === 'instance')) services.delete('ec2');
  const strongServices = new Map([...services].filter(([, m]) => m.strength >= 0.6));
  const limit = options.limit ?? 5;

  const scored: Recommendation[] = [];
  for (const [id, profile] of Object.entries(PROFILES)) {
    const action = findAction(id)!;
    let score = 0;
    const why: string[] = [];
    for (const [concept, weight] of Object.entries(profile.concepts)) {
      const match = concepts.get(concept);
      if (!match) continue;
      score += weight * match.strength;
      why.push(`${concept.replace('_', ' ')}: "${match.phrases.join('", "')}"`);
    }
    if (score === 0) continue;
    const shared = profile.services.filter((s) => strongServices.has(s));
    if (shared.length > 0) {
      const strength = Math.max(...shared.map((s) => strongServices.get(s)!.strength));
      score += 3 * Math.min(1, strength);
      why.push(...shared.map((s) => `service ${s}: "${strongServices.get(s)!.phrases.join('", "')}"`));
    } else if (strongServices.size > 0 && !profile.generic) {
      score *= 0.3;
    }
    const parameters = suggestParameters(action, finding.text, new Set(strongServices.keys()), new Set(concepts.keys()));
    const durationSpec = durationParameter(action);
    const duration = durationSpec ? (profile.duration ?? 'PT5M') : null;
    const parametersToSet = action.parameters
      .filter((p) => p.required && p !== durationSpec && parameters[p.name] === undefined)
      .map((p) => p.name);
    scored.push({
      action: id,
      failure: action.failure,
      why,
      confidence: 0,
      score: Math.round(score * 100) / 100,
      duration,
      parameters,
      parametersToSet,
      targetResourceType: action.resourceType,
      targetKey: action.targetKey,
      stopCondition: { source: 'aws:cloudwatch:alarm', suggestion: STOP_SUGGESTION.find(([pattern]) => pattern.test(id))![1] },
      localRehearsal: localRehearsal(action, parameters),
    });
  }
  scored.sort((a, b) => b.score - a.score || byCodeUnits(a.action, b.action));
  const top = scored[0]?.score ?? 0;
  const recommendations = scored.slice(0, limit).map((r) => ({
    ...r,
    // Relative to the best match and to how much evidence there is: one weak word never gets 0.9.
    confidence: Math.round(Math.min(0.95, (r.score / (r.score + 3)) * (r.score / top)) * 100) / 100,
  }));
  return {
    recommendations,
    finding_id: finding.id,
    count: recommendations.length,
    detected: { services: [...strongServices.keys()], failureModes: [...concepts.keys()] },
  };
}
