/**
 * The SSM documents AWS publishes for FIS's aws:ssm:send-command on EC2 instances (the
 * AWSFIS-Run-* documents), as data: what each reproduces and its parameters, with the defaults
 * the documents declare. The recommender fills `documentArn` and `documentParameters` from here;
 * the template builder warns when a document's required parameter is missing or its
 * DurationSeconds disagrees with the action's duration (FIS does not check either: the command
 * fails on the instance).
 *
 * Source: the FIS user guide, "Use Systems Manager SSM documents with AWS FIS" (the pre-configured
 * AWSFIS-Run-* documents and their parameters); our reference summary names the CPU, I/O,
 * kill-process and network documents. Check a document with `aws ssm describe-document --name <name>`.
 */
import { parseIsoDuration } from './iso-duration.js';

export interface DocumentParameter {
  name: string;
  required: boolean;
  /** The document's own default (strings, as documentParameters carries them). */
  default?: string;
  note?: string;
}

export interface SsmDocument {
  name: string;
  /** The failure it reproduces on the instance, in a line. */
  failure: string;
  parameters: readonly DocumentParameter[];
}

const durationSeconds: DocumentParameter = {
  name: 'DurationSeconds',
  required: true,
  note: 'how long the fault lasts, in seconds',
};
const installDependencies: DocumentParameter = {
  name: 'InstallDependencies',
  required: false,
  default: 'True',
  note: 'installs stress-ng / tc when missing',
};

export const SSM_DOCUMENTS: readonly SsmDocument[] = [
  {
    name: 'AWSFIS-Run-CPU-Stress',
    failure: 'CPU load on the instance (stress-ng)',
    parameters: [
      durationSeconds,
      { name: 'CPU', required: false, default: '0', note: 'CPU stressors; 0 uses every CPU' },
      { name: 'LoadPercent', required: false, default: '100' },
      installDependencies,
    ],
  },
  {
    name: 'AWSFIS-Run-Memory-Stress',
    failure: 'memory pressure on the instance (stress-ng virtual-memory stressors)',
    parameters: [
      durationSeconds,
      { name: 'Percent', required: true, note: 'share of virtual memory to use' },
      { name: 'Workers', required: false, default: '1' },
      installDependencies,
    ],
  },
  {
    name: 'AWSFIS-Run-IO-Stress',
    failure: 'disk I/O load on the instance',
    parameters: [
      durationSeconds,
      { name: 'Percent', required: false, default: '80', note: 'share of free disk to use' },
      { name: 'Workers', required: false, default: '1' },
      installDependencies,
    ],
  },
  {
    name: 'AWSFIS-Run-Kill-Process',
    failure: 'a process on the instance is killed',
    parameters: [
      { name: 'ProcessName', required: true },
      { name: 'Signal', required: false, default: 'SIGTERM' },
      installDependencies,
    ],
  },
  {
    name: 'AWSFIS-Run-Network-Latency',
    failure: 'network latency on the instance (tc netem)',
    parameters: [
      durationSeconds,
      { name: 'DelayMilliseconds', required: false, default: '200' },
      { name: 'Interface', required: false, default: 'eth0' },
      installDependencies,
    ],
  },
  {
    name: 'AWSFIS-Run-Network-Packet-Loss',
    failure: 'packet loss on the instance (tc netem)',
    parameters: [
      durationSeconds,
      { name: 'LossPercent', required: false, default: '7' },
      { name: 'Interface', required: false, default: 'eth0' },
      installDependencies,
    ],
  },
  {
    name: 'AWSFIS-Run-Network-Blackhole-Port',
    failure: 'traffic to or from a port of the instance is dropped',
    parameters: [
      durationSeconds,
      { name: 'Port', required: true },
      { name: 'Protocol', required: true, note: 'tcp or udp' },
      { name: 'TrafficType', required: false, default: 'ingress' },
      installDependencies,
    ],
  },
];

const BY_NAME = new Map(SSM_DOCUMENTS.map((document) => [document.name, document]));

/** The AWS-owned document's ARN in `region` (AWS documents have no account in their ARN). */
export function documentArn(name: string, region: string): string {
  return `arn:aws:ssm:${region}::document/${name}`;
}

/** The AWSFIS-Run-* document an ARN names, if it is one we know. */
export function documentOfArn(arn: string): SsmDocument | undefined {
  const name = /:document\/([\w.-]+)$/.exec(arn)?.[1];
  return name === undefined ? undefined : BY_NAME.get(name);
}

export function findDocument(name: string): SsmDocument | undefined {
  return BY_NAME.get(name);
}

/**
 * The document's parameters as documentParameters carries them: `values` over the document's
 * defaults (optional ones with a default are written out, so the template says what will run),
 * DurationSeconds from `durationMs`.
 */
export function documentParameters(
  document: SsmDocument,
  values: Record<string, string>,
  durationMs: number | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const parameter of document.parameters) {
    const value =
      parameter.name === 'DurationSeconds' && durationMs !== undefined
        ? String(Math.round(durationMs / 1000))
        : (values[parameter.name] ?? parameter.default);
    if (value !== undefined) out[parameter.name] = value;
  }
  return out;
}

/**
 * Warnings for an aws:ssm:send-command action's parameters (`field` names them): a known
 * document's required parameter missing, an unknown one given, DurationSeconds other than the
 * action's duration. Unknown documents are the user's own: nothing to check.
 */
export function checkDocumentParameters(parameters: Record<string, string>, field: string): string[] {
  const document = parameters.documentArn === undefined ? undefined : documentOfArn(parameters.documentArn);
  if (!document) return [];
  let given: Record<string, unknown> = {};
  try {
    const parsed: unknown =
      parameters.documentParameters === undefined ? {} : JSON.parse(parameters.documentParameters);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      given = parsed as Record<string, unknown>;
  } catch {
    return []; // the builder refuses text that is not JSON
  }
  const warnings: string[] = [];
  const at = `${field}.documentParameters`;
  const missing = document.parameters.filter((p) => p.required && given[p.name] === undefined).map((p) => p.name);
  if (missing.length > 0)
    warnings.push(
      `${at}: ${document.name} needs ${missing.join(', ')}; the command ` +
        `fails on the instance without ${missing.length > 1 ? 'them' : 'it'}`,
    );
  const known = new Set(document.parameters.map((p) => p.name));
  const unknown = Object.keys(given).filter((name) => !known.has(name));
  if (unknown.length > 0)
    warnings.push(
      `${at}: ${unknown.join(', ')} ${unknown.length > 1 ? 'are not parameters' : 'is not a parameter'} ` +
        `of ${document.name} (it takes ${[...known].join(', ')})`,
    );
  const actionMs = parameters.duration === undefined ? undefined : parseIsoDuration(parameters.duration);
  const seconds = Number(given.DurationSeconds);
  if (
    actionMs !== undefined &&
    given.DurationSeconds !== undefined &&
    Number.isFinite(seconds) &&
    Math.round(actionMs / 1000) !== seconds
  ) {
    warnings.push(
      `${at}: DurationSeconds ${seconds} differs from the action's ` +
        `duration ${parameters.duration} (${Math.round(actionMs / 1000)} ` +
        `s); FIS stops the command at the action's end`,
    );
  }
  return warnings;
}
