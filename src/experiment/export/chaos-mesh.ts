/**
 * Chaos Mesh: a Workflow whose steps keep the experiment's timeline — each fault step a Serial of
 * a Suspend (its `at`) and a NetworkChaos or HTTPChaos on the dependency's pods (deadline: its
 * `for`), the steps side by side in a Parallel (so they may overlap, as in the file), and the HTTP
 * checks as StatusCheck nodes in their windows; abort_when's HTTP checks abort the workflow
 * (abortWithStatusCheck). Network faults are src/export's NetworkChaos objects; HTTP faults map to
 * HTTPChaos where it does the same thing:
 *
 *   latency (delay)           → target Request, delay            (the request waits, then goes on)
 *   error with forward: true  → target Response, replace code+body (the service answered, then replaced)
 *   schema_mismatch, top-level fields → target Response, patch body (JSON merge patch: null removes)
 *   connection_refused        → target Request, abort
 *
 * A request fault on a Redis (redis://) or opaque (tcp://) mapping acts on RESP commands or stream
 * messages, which HTTPChaos does not speak: its latency becomes a NetworkChaos delay on the
 * dependency's answers (the network meaning kept, stream-fault.ts), and the rest is refused with
 * the reason — never an HTTPChaos. On a mapping without a scheme it is exported as HTTP, said in a
 * note naming the scheme that would say otherwise.
 *
 * and refuses the rest with the reason: error without forward and rate_limit answer in the
 * service's place (HTTPChaos cannot: replace rewrites the service's own answer), timeout holds
 * and closes, malformed and connection_drop depend on each response, and HTTPChaos has no
 * probability nor more than one method.
 */
import { validateHttpFault, type FaultSpec, type ResolvedHttpFault } from '../../proxy/index.js';
import { httpBehaviour } from '../../proxy/http/spec.js';
import { formatDuration } from '../../duration.js';
import { InputError } from '../../kernel/errors.js';
import { checkNamespace, goDuration, labelSelectors, networkChaosAction } from '../../export/chaos-mesh.js';
import { networkFault } from '../../export/network.js';
import { asGiven } from '../../export/spell.js';
import { IN_FRONT_MAPPING, type Experiment, type FaultStep, type HttpCheck, type Window } from '../model.js';
import { promqlRefusals } from './promql.js';
import { streamFault } from './stream-fault.js';
import type { EngineDocument, ExperimentExportOptions, Refusal } from './index.js';
import { statusRange } from './status-range.js';

type Template = Record<string, unknown> & { name: string };

export async function exportChaosMesh(
  experiment: Experiment,
  options: ExperimentExportOptions,
): Promise<EngineDocument> {
  const namespace = checkNamespace(options.namespace ?? 'default', '--namespace');
  const refusals: Refusal[] = [];
  const notes: string[] = [];
  const templates: Template[] = [];
  const branches: string[] = [];
  const placeholders = new Set<string>();

  for (const step of experiment.steps) {
    const part = `method[${step.index}] (${step.name})`;
    if (step.kind !== 'fault') {
      refusals.push({
        part,
        reason:
          `a ${step.kind === 'toolcall' ? 'tool-call-plane' : 'probe'} step ` +
          `acts on an MCP server through faultline; Chaos Mesh has no such ` +
          `fault`,
      });
      continue;
    }
    if (step.placement.plane === 'control') {
      refusals.push({
        part,
        reason:
          `the fault is set through the control plane ${step.placement.control} ` +
          `(an admin API faultline calls); Chaos Mesh injects at the ` +
          `network instead — put the dependency under proxies to export it`,
      });
      continue;
    }
    const { port, name, protocol } = dependencyOf(experiment, step);
    const selector = options.selectors?.[name] ?? options.selectors?.['*'];
    if (!selector) placeholders.add(name);
    const labels = selector ?? [`app=REPLACE_WITH_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_LABEL`];
    const id = `step-${step.index + 1}`;
    let chaos: Template;
    try {
      const selector = { namespaces: [namespace], labelSelectors: labelSelectors(labels, 'selector') };
      if (step.config.kind === 'network' || protocol === 'resp' || protocol === 'tcp') {
        const own: string[] = [];
        const fault =
          step.config.kind === 'network'
            ? networkFault(step.config.spec as FaultSpec, 'chaos-mesh', asGiven, own)
            : streamFault(validateHttpFault(step.config.spec), protocol as 'resp' | 'tcp', 'chaos-mesh', own);
        const action = networkChaosAction(fault, own);
        // The workflow node's deadline is the step's length.
        const spec = { selector, mode: 'all', ...action };
        chaos = { name: id, templateType: 'NetworkChaos', deadline: goDuration(step.forMs), networkChaos: spec };
        for (const note of own) notes.push(`${step.name}: ${note}`);
      } else {
        if (protocol === undefined)
          notes.push(
            `${step.name}: the mapping #${name} declares no protocol, so ${step.config.type} is exported as ` +
              `an HTTPChaos on port ${port}, which acts on HTTP only: if #${name} carries something else ` +
              '(a database, a cache), give its mapping tcp:// (or redis://) and export again.',
          );
        chaos = {
          name: id,
          templateType: 'HTTPChaos',
          deadline: goDuration(step.forMs),
          httpChaos: httpChaosSpec(validateHttpFault(step.config.spec), port, namespace, labels, notes, step.name),
        };
      }
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      refusals.push({ part, reason: error.message.replace(/^[\w.[\]]+: cannot export to chaos-mesh: /, '') });
      continue;
    }
    templates.push(chaos);
    branches.push(timeline(templates, id, step.atMs));
  }

  for (const expectation of experiment.expectations) {
    if (expectation.kind !== 'http') continue;
    const part = `${expectation.id} (${expectation.title})`;
    if (expectation.mode !== 'continuous' && expectation.mode !== 'eventually') {
      refusals.push({
        part,
        reason:
          `mode ${expectation.mode} probes at set moments; a StatusCheck ` +
          `probes continuously or until it first succeeds`,
      });
      continue;
    }
    const check = statusCheck(
      expectation.check,
      expectation.window,
      expectation.mode === 'continuous' ? 'Continuous' : 'Synchronous',
      expectation.mode === 'continuous'
        ? 1
        : Math.max(1, Math.ceil((expectation.window.toMs - expectation.window.fromMs) / expectation.check.everyMs)),
      false,
    );
    if ('reason' in check) refusals.push({ part, reason: check.reason });
    else branches.push(addCheck(templates, `check-${templates.length + 1}`, check.template, expectation.window));
  }
  for (const [index, rule] of experiment.abort.entries()) {
    const part = `abort_when${experiment.abort.length > 1 ? `[${index}]` : ''} (${rule.text})`;
    if (rule.kind === 'promql') continue;
    if (rule.kind === 'load') {
      refusals.push({
        part,
        reason:
          'Chaos Mesh aborts a workflow on an HTTP status check only; it ' +
          "cannot read the load's error rate or latency — abort on an HTTP " +
          'check (a health or SLO endpoint) instead',
      });
      continue;
    }
    const check = statusCheck(rule.check, experiment.phases.inject, 'Continuous', rule.failures, true);
    if ('reason' in check) refusals.push({ part, reason: check.reason });
    else branches.push(addCheck(templates, `abort-check-${index + 1}`, check.template, experiment.phases.inject));
  }
  for (const expectation of experiment.expectations) {
    if (expectation.kind === 'command')
      refusals.push({
        part: `${expectation.id} (${expectation.title})`,
        reason:
          "a command run beside the faults is faultline's; a Workflow has " +
          'no step that runs your test suite and reads its exit code',
      });
  }
  refusals.push(...promqlRefusals(experiment, 'chaos-mesh'));
  if (experiment.rollbacks.length > 0)
    refusals.push({
      part: 'rollbacks',
      reason: 'Chaos Mesh removes its own chaos when a node ends; it runs no command of yours afterwards',
    });
  if (branches.length === 0 && refusals.length === 0)
    refusals.push({ part: 'method', reason: 'no fault step to export' });
  if (placeholders.size > 0)
    notes.push(
      `The pods are selected by placeholder labels for ` +
        `${[...placeholders].map((name) => `#${name}`).join(', ')}: give ` +
        `--selector NAME:key=value for each mapping.`,
    );
  notes.push(
    "Each chaos acts on the dependency's pods, so on every client of " +
      'it, not only the app: run it where that is acceptable.',
  );

  const entry: Template =
    branches.length === 1
      ? { name: 'experiment', templateType: 'Serial', children: branches }
      : { name: 'experiment', templateType: 'Parallel', children: branches };
  const workflow = {
    apiVersion: 'chaos-mesh.org/v1alpha1',
    kind: 'Workflow',
    metadata: { name: `faultline-${slug(experiment.title)}`, namespace },
    spec: { entry: 'experiment', templates: [entry, ...templates] },
  };
  const { stringify } = await import('yaml');
  return {
    format: 'yaml',
    render: (header) => `${header.map((line) => `# ${line}`).join('\n')}\n${stringify(workflow, { lineWidth: 0 })}`,
    notes,
    refusals,
    elsewhere: experiment.load
      ? ['the load, its SLOs (steady_state, expect) and recover_within: export with --to k6 and run both together']
      : [],
    ...(branches.length === 0 ? { empty: 'a Workflow needs at least one chaos step' } : {}),
  };
}

/** Where a step's dependency is: the mapping's remote, or the load's own host for the proxy in front of it. */
export function dependencyOf(
  experiment: Experiment,
  step: FaultStep,
): { host: string; port: number; name: string; protocol: 'http' | 'resp' | 'tcp' | undefined } {
  const target = step.placement.target;
  if (target === IN_FRONT_MAPPING && experiment.load) {
    const url = new URL(experiment.load.url);
    return {
      host: url.hostname,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      name: IN_FRONT_MAPPING,
      protocol: 'http',
    };
  }
  const mapping = experiment.proxies.find((m) => m.name === target || String(m.listenPort) === target)!;
  return {
    host: mapping.remoteHost,
    port: mapping.remotePort,
    name: mapping.name ?? String(mapping.listenPort),
    protocol: mapping.protocol,
  };
}

/** A Serial of a Suspend (the step's start) and the node; returns the branch's name. */
function timeline(templates: Template[], id: string, atMs: number): string {
  if (atMs <= 0) return id;
  templates.push({ name: `${id}-wait`, templateType: 'Suspend', deadline: goDuration(atMs) });
  templates.push({ name: `${id}-timeline`, templateType: 'Serial', children: [`${id}-wait`, id] });
  return `${id}-timeline`;
}

function addCheck(templates: Template[], id: string, template: Record<string, unknown>, window: Window): string {
  templates.push({ name: id, ...template, deadline: goDuration(window.toMs - window.fromMs) });
  return timeline(templates, id, window.fromMs);
}

function statusCheck(
  check: HttpCheck,
  window: Window,
  mode: 'Continuous' | 'Synchronous',
  failures: number,
  abort: boolean,
): { template: Record<string, unknown> } | { reason: string } {
  if (window.toMs <= window.fromMs) return { reason: 'its window is empty' };
  const range = statusRange(check.predicate);
  if ('reason' in range) return range;
  if (check.everyMs % 1000 !== 0)
    return { reason: `every ${formatDuration(check.everyMs)}: a StatusCheck's interval is whole seconds` };
  if (check.timeoutMs % 1000 !== 0)
    return { reason: `timeout ${formatDuration(check.timeoutMs)}: a StatusCheck's timeout is whole seconds` };
  if (check.method !== 'GET' && check.method !== 'POST')
    return { reason: `${check.method}: a StatusCheck sends GET or POST` };
  return {
    template: {
      templateType: 'StatusCheck',
      ...(abort ? { abortWithStatusCheck: true } : {}),
      statusCheck: {
        mode,
        type: 'HTTP',
        intervalSeconds: check.everyMs / 1000,
        timeoutSeconds: check.timeoutMs / 1000,
        failureThreshold: failures,
        successThreshold: 1,
        http: {
          url: check.url,
          method: check.method,
          ...(Object.keys(check.headers).length
            ? { headers: Object.fromEntries(Object.entries(check.headers).map(([k, v]) => [k, [v]])) }
            : {}),
          ...(check.body ? { body: check.body } : {}),
          criteria: { statusCode: range.text },
        },
      },
    },
  };
}

function httpChaosSpec(
  fault: ResolvedHttpFault,
  port: number,
  namespace: string,
  labels: readonly string[],
  notes: string[],
  stepName: string,
): Record<string, unknown> {
  const refuse = (reason: string): never => {
    throw new InputError(`fault: cannot export to chaos-mesh: ${reason}`);
  };
  if (fault.probability < 1) refuse(`probability ${fault.probability}: HTTPChaos acts on every matching request`);
  if (fault.methods && fault.methods.length > 1)
    refuse(`methods ${fault.methods.join(',')}: HTTPChaos matches one method`);
  let path: string | undefined;
  if (fault.path !== undefined) {
    if (!fault.path.includes('*')) path = fault.path;
    else if (/^[^*]*\/\*\*$/.test(fault.path)) path = `${fault.path.slice(0, -2)}*`;
    else
      refuse(
        `path ${fault.path}: faultline's * stops at a /, HTTPChaos's ` +
          `matches across; only an exact path or a trailing /** has the ` +
          `same meaning`,
      );
  }
  const selector: Record<string, unknown> = {
    namespaces: [namespace],
    labelSelectors: Object.fromEntries(labels.map((label) => label.split('=') as [string, string])),
  };
  const base = {
    mode: 'all',
    selector,
    port,
    ...(path ? { path } : {}),
    ...(fault.methods ? { method: fault.methods[0] } : {}),
  };
  switch (fault.type) {
    case 'latency':
      return { ...base, target: 'Request', delay: `${fault.delay}ms` };
    case 'error':
      if (!fault.forward)
        refuse(
          "error answers in the service's place without calling it; " +
            'HTTPChaos can only replace the answer the service gave after ' +
            'handling the request — give the fault forward: true to export ' +
            'that',
        );
      {
        // The answer the fault itself gives, so code, body and content type are the proxy's own.
        const answer = httpBehaviour(fault).response?.({
          status: 200,
          statusMessage: 'OK',
          headers: [],
          body: Buffer.alloc(0),
        });
        if (answer?.kind !== 'replace') return refuse('error gives no answer to replace with');
        const headers = Object.fromEntries(
          answer.response.headers.map(([name, value]) => [name.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase()), value]),
        );
        return {
          ...base,
          target: 'Response',
          replace: { code: answer.response.status, body: answer.response.body.toString('base64'), headers },
        };
      }
    case 'schema_mismatch': {
      const nested = fault.missing_fields.find((field) => field.includes('.'));
      if (nested)
        refuse(
          `missing_fields ${nested}: a JSON merge patch cannot remove a ` +
            `field inside arrays as faultline does, and the body's shape is ` +
            `not known here; only top-level fields export`,
        );
      notes.push(
        `${stepName}: removes ${fault.missing_fields.join(', ')} with a ` +
          `JSON merge patch (null removes a field); a body that is not a ` +
          `JSON object is replaced by the patch, where faultline leaves it ` +
          `as it is.`,
      );
      return {
        ...base,
        target: 'Response',
        patch: {
          body: {
            type: 'JSON',
            value: JSON.stringify(Object.fromEntries(fault.missing_fields.map((field) => [field, null]))),
          },
        },
      };
    }
    case 'connection_refused':
      notes.push(
        `${stepName}: HTTPChaos abort interrupts the connection, ` +
          `faultline resets it (RST): the client sees a failed request ` +
          `either way.`,
      );
      return { ...base, target: 'Request', abort: true };
    case 'rate_limit':
      return refuse(
        "rate_limit answers 429 in the service's place without calling " +
          'it; HTTPChaos can only rewrite the answer the service gave',
      );
    case 'timeout':
      return refuse(
        'timeout holds the request and closes the connection without ' +
          'calling the service; HTTPChaos delay forwards the request after ' +
          'its delay',
      );
    case 'malformed':
      return refuse(
        "malformed cuts each response's own body in half behind a marker; " +
          'HTTPChaos replaces or patches with a fixed body',
      );
    case 'connection_drop':
      return refuse('connection_drop cuts the response after some bytes; HTTPChaos has no fault that does');
  }
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'experiment'
  )
    .slice(0, 40)
    .replace(/-$/, '');
}
