/**
 * One faultline scenario, on an engine beyond one machine (DESIGN.md §10):
 * - fis: a CreateExperimentTemplate input with the ECS or EKS network action of the same fault
 *   and numbers (a wait action first when the fault starts later than the load);
 * - chaos-mesh: a NetworkChaos manifest (delay with jitter, loss, bandwidth, partition);
 * - k6: a script whose constant-arrival-rate scenario reproduces the load (rate, duration,
 *   timeout) and whose thresholds are the scenario's SLOs.
 *
 * A fault, or a setting of it, that the engine cannot express with the same meaning is refused
 * with the reason (a ToolInputError naming the argument), never approximated. What the engine
 * does differently but explicitly (queue sizes, where the fault sits) is listed in `notes`.
 * Only the scenario's stable fields are read: the fault and its parameters, url, method, body,
 * headers, duration, rate (num_clients × rps), timeout, fault window and SLOs.
 */
import { ToolInputError } from '../errors.js';
import type { ScenarioSpec } from '../scenario/index.js';
import { buildExperimentTemplate } from './template.js';
import { formatIsoDuration } from './iso-duration.js';
import { EXPORT_TARGETS, FIS_PLATFORMS } from './export-targets.js';

export { EXPORT_TARGETS, FIS_PLATFORMS };
export type ExportTarget = (typeof EXPORT_TARGETS)[number];
export type FisPlatform = (typeof FIS_PLATFORMS)[number];

export interface ExportOptions {
  /** fis: which network actions (default ecs). */
  platform?: FisPlatform;
  /** fis: target_config as for fault_create_fis_template (roleArn, stopConditionArn, tags …, kubernetesServiceAccount for eks); placeholders fill what is missing. */
  targetConfig?: Record<string, unknown>;
  /** chaos-mesh: namespace of the pods (default "default"). */
  namespace?: string;
  /** chaos-mesh: label selectors "key=value" for the service's pods. */
  selector?: readonly string[];
}

export interface ExportResult {
  to: ExportTarget;
  fault: string;
  format: 'json' | 'yaml' | 'javascript';
  document: string;
  /** What to check or set before applying it, and how the engine's behaviour is pinned down. */
  notes: string[];
}

const PLACEHOLDER_ROLE = 'arn:aws:iam::000000000000:role/REPLACE_WITH_FIS_ROLE';
/** A placeholder alarm ARN in the account of `roleArn` when that is a role ARN (FIS wants both in one account). */
function placeholderAlarmFor(roleArn: unknown): string {
  const account = typeof roleArn === 'string' ? /^arn:aws[\w-]*:iam::(\d{12}):role\//.exec(roleArn)?.[1] : undefined;
  return `arn:aws:cloudwatch:us-east-1:${account ?? '000000000000'}:alarm:REPLACE_WITH_STOP_ALARM`;
}

function refuse(argument: string, to: ExportTarget, reason: string): never {
  throw new ToolInputError(`${argument}: cannot export to ${to}: ${reason}`);
}

/** Which half of the exchange the fault delays: responses (the default), requests, or both. */
function affected(spec: ScenarioSpec): 'responses' | 'requests' | 'both' {
  const { side, direction } = spec.fault as { side?: string; direction?: string };
  if (direction === 'both') return 'both';
  const server = (side ?? 'server') === 'server';
  const ingress = (direction ?? 'ingress') === 'ingress';
  return server === ingress ? 'responses' : 'requests';
}

function wholeNumber(value: number, argument: string, to: ExportTarget, unit: string): number {
  if (!Number.isInteger(value)) refuse(argument, to, `${value} ${unit} is not a whole number, which is all the engine takes; give a whole number`);
  return value;
}

function commonChecks(spec: ScenarioSpec, to: ExportTarget): void {
  if (spec.proxies.length > 0) {
    refuse('proxies', to, "the fault is on the app's outbound calls through proxy mappings; exports describe a fault on the service at url — export without proxies");
  }
}

/** The fault's parameters as the network engines take them, or a refusal. */
function networkFault(spec: ScenarioSpec, to: 'fis' | 'chaos-mesh'): { kind: 'latency'; delay: number; jitter: number } | { kind: 'loss'; percent: number } | { kind: 'bandwidth'; bytesPerSecond: number } | { kind: 'blackhole' } {
  const fault = spec.fault as unknown as Record<string, unknown> & { type: string };
  const half = affected(spec);
  if (fault.type !== 'blackhole' && half !== 'responses') {
    refuse('direction', to, `the fault acts on the ${half === 'both' ? 'requests and the responses' : 'requests'}; the exported fault acts on the service's outbound traffic (its responses) only — use the default side server, direction ingress`);
  }
  switch (fault.type) {
    case 'latency': {
      const deviation = Number(fault.deviationMs ?? 0);
      const distribution = String(fault.distribution ?? 'normal');
      if (deviation > 0 && distribution !== 'uniform') {
        refuse('distribution', to, `a ${distribution} spread of ${deviation} ms has no equivalent: the engine's jitter is netem's uniform spread (latency ± jitter); use distribution uniform, or deviation 0`);
      }
      if (fault.perOp === true) refuse('per_read_write_op', to, 'a delay per read/write chunk has no equivalent; the engine delays packets');
      return { kind: 'latency', delay: wholeNumber(Number(fault.latencyMs ?? 100), 'latency', to, 'ms'), jitter: wholeNumber(deviation, 'deviation', to, 'ms') };
    }
    case 'packet_loss':
      if ((fault.model ?? 'bernoulli') !== 'bernoulli') refuse('model', to, `the ${String(fault.model)} loss model has no equivalent; the engine drops packets independently (bernoulli)`);
      return { kind: 'loss', percent: Math.round(Number(fault.lossRate ?? 0.05) * 100 * 1e6) / 1e6 };
    case 'bandwidth':
      if (to === 'fis') refuse('fault', to, 'FIS has no bandwidth-limiting action');
      if ((fault.scope ?? 'connection') !== 'shared') {
        refuse('bandwidth_scope', to, "the cap applies to each connection; Chaos Mesh's bandwidth action caps the pods' whole traffic — use bandwidth_scope shared");
      }
      return { kind: 'bandwidth', bytesPerSecond: wholeNumber(Number(fault.bytesPerSecond), 'rate', to, 'bytes/s') };
    case 'blackhole':
      return { kind: 'blackhole' };
    case 'jitter':
      refuse('fault', to, "faultline's jitter redraws a delay in [0, amplitude] frequency times a second; the engine's jitter varies each packet's delay around a mean — no equivalent (export a latency fault with distribution uniform instead)");
    // falls through: refuse() never returns
    default:
      refuse('fault', to, `the ${fault.type} fault has no equivalent on ${to}`);
  }
}

function urlPort(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

// ---------------------------------------------------------------- FIS

function exportFis(spec: ScenarioSpec, options: ExportOptions): ExportResult {
  commonChecks(spec, 'fis');
  const platform = options.platform ?? 'ecs';
  const fault = networkFault(spec, 'fis');
  const notes: string[] = [];
  const prefix = platform === 'ecs' ? 'aws:ecs:task-network-' : 'aws:eks:pod-network-';
  const given = { ...(options.targetConfig ?? {}) };
  const serviceAccount = given.kubernetesServiceAccount;
  delete given.kubernetesServiceAccount;
  const parameters: Record<string, string> = {};
  let action: string;
  switch (fault.kind) {
    case 'latency':
      action = `${prefix}latency`;
      parameters.delayMilliseconds = String(fault.delay);
      // Set even when 0: the ECS action's default jitter is 10 ms.
      parameters.jitterMilliseconds = String(fault.jitter);
      if (fault.jitter > 0) notes.push('jitterMilliseconds carries faultline\'s uniform deviation (latency ± deviation); our reference does not state the distribution FIS uses — check it before comparing tails.');
      break;
    case 'loss':
      action = `${prefix}packet-loss`;
      parameters.lossPercent = String(fault.percent);
      break;
    case 'blackhole': {
      action = `${prefix}blackhole-port`;
      const port = urlPort(new URL(spec.url));
      parameters.port = String(port);
      parameters.trafficType = 'ingress';
      parameters.protocol = 'tcp';
      notes.push(`The blackhole drops traffic arriving at port ${port} (the port of url) on the targeted ${platform === 'ecs' ? 'tasks' : 'pods'}: clients hang until their timeout, as with faultline's blackhole.`);
      break;
    }
    default:
      throw new Error('unreachable');
  }
  if (platform === 'eks') {
    if (typeof serviceAccount === 'string' && serviceAccount.trim() !== '') parameters.kubernetesServiceAccount = serviceAccount;
    else {
      parameters.kubernetesServiceAccount = 'REPLACE_WITH_SERVICE_ACCOUNT';
      notes.push('kubernetesServiceAccount is a placeholder: give target_config.kubernetesServiceAccount (the service account FIS runs its pod as).');
    }
  }
  const faultLength = spec.faultEndMs - spec.faultStartMs;
  const recommendations: Array<Record<string, unknown>> = [];
  if (spec.faultStartMs > 0) {
    recommendations.push({ action: 'aws:fis:wait', name: 'wait-before-fault', duration: formatIsoDuration(spec.faultStartMs) });
  }
  recommendations.push({
    action,
    name: 'fault',
    parameters,
    duration: formatIsoDuration(faultLength),
    ...(spec.faultStartMs > 0 ? { startAfter: ['wait-before-fault'] } : {}),
    description: `faultline ${spec.fault.type} scenario on ${spec.url}`.slice(0, 512),
  });
  const config: Record<string, unknown> = { roleArn: PLACEHOLDER_ROLE, ...given };
  // The alarm placeholder only stands in for an alarm nobody mentioned: not next to an explicit
  // waiver (noStopCondition), and in the given role's account, which the template builder checks.
  const alarmGiven = 'stopConditionArn' in given || 'noStopCondition' in given;
  if (!alarmGiven) config.stopConditionArn = placeholderAlarmFor(config.roleArn);
  if (given.tags === undefined && given.resourceTags === undefined && given.resourceArns === undefined && given.parameters === undefined) {
    if (platform === 'ecs') {
      config.tags = { REPLACE_TAG_KEY: 'REPLACE_TAG_VALUE' };
      notes.push('The tasks are selected by a placeholder tag: give target_config.tags, resourceArns or target parameters.');
    } else {
      // FIS selects EKS pods by target parameters only (never by tag or ARN).
      config.parameters = { clusterIdentifier: 'REPLACE_WITH_CLUSTER', namespace: 'REPLACE_WITH_NAMESPACE', selectorType: 'labelSelector', selectorValue: 'REPLACE_KEY=REPLACE_VALUE' };
      notes.push('The pods are selected by placeholder target parameters: give target_config.parameters {clusterIdentifier, namespace, selectorType (labelSelector, deploymentName, podName), selectorValue}; FIS takes no tags or ARNs for pods.');
    }
  }
  if (config.roleArn === PLACEHOLDER_ROLE) notes.push('roleArn is a placeholder: give target_config.roleArn.');
  if (!alarmGiven) notes.push('stopConditionArn is a placeholder: give target_config.stopConditionArn (a CloudWatch alarm on the service\'s SLO).');
  let built;
  try {
    built = buildExperimentTemplate(recommendations, config);
  } catch (error) {
    if (error instanceof ToolInputError && /^recommendation\[\d\]\.parameters\.(duration|delayMilliseconds|lossPercent)/.test(error.message)) {
      throw new ToolInputError(`cannot export to fis: ${error.message} (from the scenario's duration / fault_duration / fault_start)`);
    }
    throw error;
  }
  notes.push(...built.warnings);
  notes.push(`FIS injects the fault; drive the load at the same time (num_clients × rps = ${spec.clients * spec.rps} requests/s for ${formatIsoDuration(spec.durationMs)}) — e.g. with the k6 export — and the fault starts ${formatIsoDuration(spec.faultStartMs)} into it.`);
  return { to: 'fis', fault: spec.fault.type, format: 'json', document: JSON.stringify(built.template, null, 2), notes };
}

// ---------------------------------------------------------------- Chaos Mesh

function goDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${Math.round(ms)}ms`;
}

function labels(selector: readonly string[] | undefined): { labels: Record<string, string>; placeholder: boolean } {
  if (!selector || selector.length === 0) return { labels: { app: 'REPLACE_WITH_APP_LABEL' }, placeholder: true };
  const out: Record<string, string> = {};
  selector.forEach((entry, index) => {
    const match = /^([A-Za-z0-9][-A-Za-z0-9_./]*)=([-A-Za-z0-9_.]*)$/.exec(entry.trim());
    if (!match) throw new ToolInputError(`selector[${index}]: "${entry}" is not a label selector key=value`);
    out[match[1]!] = match[2]!;
  });
  return { labels: out, placeholder: false };
}

async function exportChaosMesh(spec: ScenarioSpec, options: ExportOptions): Promise<ExportResult> {
  commonChecks(spec, 'chaos-mesh');
  const fault = networkFault(spec, 'chaos-mesh');
  const namespace = options.namespace ?? 'default';
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) throw new ToolInputError(`namespace: "${namespace}" is not a Kubernetes namespace name`);
  const selected = labels(options.selector);
  const notes: string[] = [];
  if (selected.placeholder) notes.push('The pods are selected by a placeholder label app=REPLACE_WITH_APP_LABEL: give selector key=value.');
  const specBody: Record<string, unknown> = {
    selector: { namespaces: [namespace], labelSelectors: selected.labels },
    mode: 'all',
  };
  switch (fault.kind) {
    case 'latency':
      Object.assign(specBody, { action: 'delay', direction: 'to', delay: { latency: `${fault.delay}ms`, jitter: `${fault.jitter}ms`, correlation: '0' } });
      break;
    case 'loss':
      Object.assign(specBody, { action: 'loss', direction: 'to', loss: { loss: String(fault.percent), correlation: '0' } });
      break;
    case 'bandwidth': {
      // tbf's queue (limit) and bucket (buffer) have no faultline counterpart: faultline holds
      // no burst and pauses the sender instead of queueing. One second of data queued, one
      // full-size packet of burst is the closest reading; both are stated in the notes.
      const limit = Math.max(fault.bytesPerSecond, 1514);
      const buffer = 1514;
      Object.assign(specBody, { action: 'bandwidth', direction: 'to', bandwidth: { rate: `${fault.bytesPerSecond}bps`, limit, buffer } });
      notes.push(`rate is ${fault.bytesPerSecond} bytes/s (Chaos Mesh's "bps" is bytes per second, as faultline's). limit ${limit} bytes (one second queued) and buffer ${buffer} bytes (one packet of burst) are Chaos Mesh settings faultline has no equivalent for: faultline holds no burst and pauses the sender instead of queueing.`);
      break;
    }
    case 'blackhole':
      Object.assign(specBody, { action: 'partition', direction: 'both' });
      notes.push('No spec.target is set: add spec.target (the client pods) or spec.externalTargets to limit the partition to the clients, and check your Chaos Mesh version\'s partition semantics for a missing target.');
      break;
  }
  specBody.duration = goDuration(spec.faultEndMs - spec.faultStartMs);
  if (fault.kind !== 'blackhole') notes.push('direction "to" acts on the selected pods\' outbound traffic, their responses: faultline\'s default (side server, direction ingress).');
  if (spec.faultStartMs > 0) notes.push(`Apply the manifest ${goDuration(spec.faultStartMs)} after the load starts (faultline's fault_start); it removes itself after ${specBody.duration as string}.`);
  const manifest = {
    apiVersion: 'chaos-mesh.org/v1alpha1',
    kind: 'NetworkChaos',
    metadata: { name: `faultline-${spec.fault.type.replace('_', '-')}`, namespace },
    spec: specBody,
  };
  const { stringify } = await import('yaml');
  return { to: 'chaos-mesh', fault: spec.fault.type, format: 'yaml', document: stringify(manifest), notes };
}

// ---------------------------------------------------------------- k6

/** k6's constant-arrival-rate takes a whole `rate` per `timeUnit`: the smallest time unit that makes it whole. */
function arrivalRate(perSecond: number): { rate: number; timeUnit: string } {
  for (const seconds of [1, 2, 4, 5, 10, 20, 25, 50, 100, 1000]) {
    const rate = perSecond * seconds;
    if (Math.abs(rate - Math.round(rate)) < 1e-9 && Math.round(rate) >= 1) return { rate: Math.round(rate), timeUnit: `${seconds}s` };
  }
  throw new ToolInputError(`rps: num_clients × rps = ${perSecond} requests/s cannot be written as whole requests per 1–1000 s for k6; round rps`);
}

export const MAX_K6_VUS = 10_000;

function exportK6(spec: ScenarioSpec): ExportResult {
  commonChecks(spec, 'k6');
  const perSecond = spec.clients * spec.rps;
  const { rate, timeUnit } = arrivalRate(perSecond);
  const notes: string[] = [];
  // k6's constant-arrival-rate adds VUs as iterations fall due while others are in flight, as
  // faultline opens connections. Enough VUs for every request to wait its full timeout keeps k6
  // open-loop. This deliberately differs from faultline's own default of at most 1,000
  // connections (load/options.ts DEFAULT_MAX_CONNECTIONS), which bounds the sockets one process
  // and its in-process proxy hold; a k6 VU is cheap and the cloud run has no in-process proxy.
  const needed = Math.max(spec.clients, Math.ceil(perSecond * (spec.timeoutMs / 1000)));
  const maxVUs = Math.min(needed, MAX_K6_VUS);
  if (needed > MAX_K6_VUS) notes.push(`maxVUs capped at ${MAX_K6_VUS} (rate × timeout asks ${needed}); k6 drops iterations (dropped_iterations) when every VU is busy.`);
  const thresholds: Record<string, string[]> = {};
  for (const slo of spec.slos) {
    if (slo.type === 'latency') (thresholds.http_req_duration ??= []).push(`p(${slo.objective})<=${slo.threshold}`);
    else (thresholds.http_req_failed ??= []).push(`rate<${Number((slo.threshold / 100).toFixed(6))}`);
  }
  const headers = { ...spec.headers };
  if (spec.body !== '' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  const options = {
    scenarios: {
      faultline: {
        executor: 'constant-arrival-rate',
        rate,
        timeUnit,
        duration: goDuration(spec.durationMs),
        preAllocatedVUs: spec.clients,
        maxVUs,
      },
    },
    thresholds,
  };
  const params = { timeout: goDuration(spec.timeoutMs), headers };
  const document = [
    `// k6 load from a faultline ${spec.fault.type} scenario: ${perSecond} requests/s for ${goDuration(spec.durationMs)}, timeout ${goDuration(spec.timeoutMs)}.`,
    '// Thresholds are the scenario\'s SLOs. Inject the fault separately (the fis or chaos-mesh export).',
    "import http from 'k6/http';",
    '',
    `export const options = ${JSON.stringify(options, null, 2)};`,
    '',
    `const params = ${JSON.stringify(params, null, 2)};`,
    '',
    'export default function () {',
    `  http.request(${JSON.stringify(spec.method)}, ${JSON.stringify(spec.url)}, ${spec.body === '' ? 'null' : JSON.stringify(spec.body)}, params);`,
    '}',
    '',
  ].join('\n');
  notes.push("k6's http_req_duration runs from the request's send; faultline measures from the intended start, so under queueing faultline's percentiles can be higher.");
  if (!spec.rejectUnauthorized) notes.push('insecure_tls: run k6 with --insecure-skip-tls-verify.');
  return { to: 'k6', fault: spec.fault.type, format: 'javascript', document, notes };
}

export async function exportScenario(spec: ScenarioSpec, to: ExportTarget, options: ExportOptions = {}): Promise<ExportResult> {
  switch (to) {
    case 'fis':
      return exportFis(spec, options);
    case 'chaos-mesh':
      return exportChaosMesh(spec, options);
    case 'k6':
      return exportK6(spec);
    default:
      throw new ToolInputError(`to: "${String(to)}" is not one of ${EXPORT_TARGETS.join(', ')}`);
  }
}

/** The scenario arguments each exportable fault reads; another fault's argument is a mistake, not a default. */
export const EXPORT_FAULT_ARGUMENTS: Record<string, readonly string[]> = {
  latency: ['latency', 'deviation', 'distribution'],
  packet_loss: ['loss_rate', 'model'],
  bandwidth: ['rate', 'unit', 'bandwidth_scope'],
  jitter: [],
  blackhole: [],
};

/** Refuses an argument of another fault (`loss_rate` on a latency export); `spell` names it as the caller wrote it. */
export function checkFaultArguments(fault: string, given: Record<string, unknown>, spell: (name: string) => string = (name) => name): void {
  const own = new Set(EXPORT_FAULT_ARGUMENTS[fault] ?? []);
  for (const [other, names] of Object.entries(EXPORT_FAULT_ARGUMENTS)) {
    if (other === fault) continue;
    const stray = names.find((name) => !own.has(name) && given[name] !== undefined);
    if (stray) {
      const accepted = [...own].map(spell).join(', ') || 'none of its own';
      throw new ToolInputError(`${spell(stray)}: applies to ${other} scenarios; a ${fault} scenario takes ${accepted}`);
    }
  }
}

/** Scenario limits for exports: nothing is loaded, so any host and the engines' own lengths apply. */
export const EXPORT_LIMITS = { allowRemoteTargets: true, maxDurationMs: 12 * 3_600_000, maxRatePerSecond: 1_000_000 };
