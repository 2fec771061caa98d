/**
 * k6: the experiment's load (src/export's constant-arrival-rate scenario: the same rate, duration,
 * timeout and VUs), each request tagged with the experiment's windows it falls in, so every SLO
 * expectation is a threshold on its own window's sub-metric (`http_req_failed{w2:in}`); each HTTP
 * check a one-VU scenario in its window whose `checks` carry a threshold (every probe holds, or
 * one does); and each HTTP check of abort_when a one-VU scenario that aborts the test after its
 * consecutive failures (exec.test.abort) — the thresholds that stop the run.
 *
 * Refused, with the reason: abort rules on the load's figures ("errors > 50% for 3s": a k6
 * threshold is computed over every sample since the start, never over a window of seconds),
 * recover_within (no k6 metric says when a steady state came back), commands and MCP steps.
 */
import { formatDuration } from '../../duration.js';
import { K6_DURATION_NOTE, k6LoadScenario, k6Threshold } from '../../export/k6.js';
import type { Clause, Predicate } from '../predicate.js';
import type { Experiment, HttpCheck, Window } from '../model.js';
import type { EngineDocument, Refusal } from './index.js';
import { promqlRefusals } from './promql.js';

export async function exportK6(experiment: Experiment): Promise<EngineDocument> {
  const refusals: Refusal[] = [];
  const notes: string[] = [];
  const load = experiment.load;
  if (!load) {
    return {
      format: 'javascript',
      render: (header) => header.map((line) => `// ${line}`).join('\n'),
      notes,
      refusals: [{ part: 'load', reason: 'the experiment has no load, which is what a k6 script runs' }],
      elsewhere: [],
    };
  }
  const scenario = k6LoadScenario(load, notes);
  notes.push(K6_DURATION_NOTE);
  if (!load.rejectUnauthorized) notes.push('insecure_tls: run k6 with --insecure-skip-tls-verify.');
  if (load.expectStatus !== '2xx,3xx')
    refusals.push({
      part: 'load.expect_status',
      reason:
        `"${load.expectStatus}": the script counts 2xx and 3xx as success ` +
        `(k6's default), as faultline does by default`,
    });

  refusals.push(...promqlRefusals(experiment, 'k6'));
  const windows: Window[] = [];
  const windowTag = (window: Window): string => {
    let index = windows.findIndex((w) => w.fromMs === window.fromMs && w.toMs === window.toMs);
    if (index === -1) index = windows.push(window) - 1;
    return `w${index}`;
  };
  const thresholds: Record<string, Array<string | Record<string, unknown>>> = {};
  const described: string[] = [];
  const scenarios: Record<string, Record<string, unknown>> = { load: { ...scenario, exec: 'load' } };
  const functions: string[] = [];
  for (const expectation of experiment.expectations) {
    const part = `${expectation.id} (${expectation.title})`;
    if (expectation.kind === 'promql') continue;
    if (expectation.kind === 'command') {
      refusals.push({ part, reason: "a command run beside the load is faultline's; k6 runs no program of yours" });
      continue;
    }
    if (expectation.window.toMs <= expectation.window.fromMs) {
      refusals.push({ part, reason: 'its window is empty' });
      continue;
    }
    if (expectation.kind === 'slo') {
      const tag = windowTag(expectation.window);
      const { slo } = expectation;
      const threshold = k6Threshold(slo);
      const metric = `${threshold.metric}{${tag}:in}`;
      (thresholds[metric] ??= []).push(threshold.expression);
      described.push(`${expectation.id}: ${expectation.title} → ${metric} (${describe(expectation.window)})`);
      continue;
    }
    if (expectation.mode !== 'continuous' && expectation.mode !== 'eventually') {
      refusals.push({
        part,
        reason: `mode ${expectation.mode} probes at set moments; the script probes through its window`,
      });
      continue;
    }
    const name = `check${Object.keys(scenarios).length}`;
    scenarios[name] = probeScenario(name, expectation.check, expectation.window);
    functions.push(probeFunction(name, expectation.check, `c_${name}`));
    thresholds[`checks{probe:${name}}`] = [expectation.mode === 'continuous' ? 'rate==1' : 'rate>0'];
    described.push(
      `${expectation.id}: ${expectation.title} → checks{probe:${name}} ` +
        `(${describe(expectation.window)}, ` +
        `${expectation.mode === 'continuous' ? 'every probe' : 'one probe'})`,
    );
  }
  for (const [index, rule] of experiment.abort.entries()) {
    const part = `abort_when${experiment.abort.length > 1 ? `[${index}]` : ''} (${rule.text})`;
    if (rule.kind === 'promql') continue;
    if (rule.kind === 'load') {
      refusals.push({
        part,
        reason:
          'a k6 threshold (even with abortOnFail) is computed over every ' +
          'sample since the start, never over the last seconds, so "for N ' +
          's" — or one bad second — has no k6 equivalent',
      });
      continue;
    }
    const name = `abort${index}`;
    scenarios[name] = probeScenario(name, rule.check, experiment.phases.inject);
    functions.push(abortFunction(name, rule.check, rule.failures, rule.text));
    described.push(
      `abort_when: ${rule.text} → scenario ${name} aborts the test after ${rule.failures} failed probes in a row`,
    );
  }
  if (experiment.recoverWithinMs !== undefined)
    refusals.push({
      part: 'recover_within',
      reason:
        'no k6 metric says when the steady state came back; the steady ' +
        'state after recovery is exported as thresholds on its window',
    });
  for (const step of experiment.steps)
    if (step.kind !== 'fault')
      refusals.push({
        part: `method[${step.index}] (${step.name})`,
        reason:
          `a ${step.kind === 'toolcall' ? 'tool-call-plane' : 'probe'} step ` +
          `acts on an MCP server through faultline; k6 does not`,
      });
  if (experiment.rollbacks.length > 0)
    refusals.push({ part: 'rollbacks', reason: 'k6 runs no program of yours after the test' });

  const tagCode = windows.map((w, i) => `  if (t >= ${w.fromMs} && t < ${w.toMs}) tags.w${i} = 'in';`).join('\n');
  const options = { scenarios, thresholds };
  const body = [
    "import http from 'k6/http';",
    "import exec from 'k6/execution';",
    "import { check, sleep } from 'k6';",
    '',
    `export const options = ${JSON.stringify(options, null, 2)};`,
    '',
    `const params = ` +
      `${JSON.stringify({ timeout: `${load.timeoutMs}ms`, headers: { ...load.headers, ...(load.body !== '' && !Object.keys(load.headers).some((h) => h.toLowerCase() === 'content-type') ? { 'Content-Type': 'application/json' } : {}) } }, null, 2)};`,
    '',
    "/** The experiment's windows this moment (ms from the start of the load) falls in, as tags. */",
    'function windowTags(t) {',
    '  const tags = {};',
    tagCode,
    '  return tags;',
    '}',
    '',
    'export function load() {',
    '  const t = Date.now() - exec.scenario.startTime;',
    `  http.request(${JSON.stringify(load.method)}, ` +
      `${JSON.stringify(load.url)}, ` +
      `${load.body === '' ? 'null' : JSON.stringify(load.body)}, ` +
      `Object.assign({}, params, { tags: windowTags(t) }));`,
    '}',
    '',
    K6_HELPERS,
    ...functions,
  ].join('\n');
  notes.push(`The thresholds: ${described.join('; ') || 'none'}.`);
  if (Object.keys(scenarios).length > 1)
    notes.push(
      "The HTTP checks' own requests are tagged probe:<name> and left " +
        "out of the load's thresholds, which are on window tags only the " +
        'load sets.',
    );
  return {
    format: 'javascript',
    render: (header) =>
      `${[...header, ...described.map((line) => `  ${line}`)].map((line) => `// ${line}`).join('\n')}\n${body}\n`,
    notes,
    refusals,
    elsewhere: experiment.steps.some((step) => step.kind === 'fault')
      ? [
          'the faults: export them with --to chaos-mesh or --to fis and ' +
            "start both together (the faults' at is from the start of this " +
            'script)',
        ]
      : [],
  };
}

function describe(window: Window): string {
  return `${window.label} ${formatDuration(window.fromMs)}–${formatDuration(window.toMs)}`;
}

function probeScenario(name: string, check: HttpCheck, window: Window): Record<string, unknown> {
  return {
    executor: 'constant-vus',
    vus: 1,
    startTime: `${window.fromMs}ms`,
    duration: `${Math.max(1, window.toMs - window.fromMs)}ms`,
    exec: name,
    gracefulStop: `${check.timeoutMs}ms`,
    tags: { probe: name },
  };
}

function request(check: HttpCheck): string {
  return (
    `http.request(${JSON.stringify(check.method)}, ` +
    `${JSON.stringify(check.url)}, ` +
    `${check.body ? JSON.stringify(check.body) : 'null'}, { timeout: ` +
    `'${check.timeoutMs}ms', headers: ${JSON.stringify(check.headers)} ` +
    `})`
  );
}

function probeFunction(name: string, check: HttpCheck, label: string): string {
  return [
    `export function ${name}() {`,
    `  const r = ${request(check)};`,
    `  check(r, { ${JSON.stringify(`${label}: ${check.predicate.text}`)}: (r) => ${predicateCode(check.predicate)} });`,
    `  sleep(${check.everyMs / 1000});`,
    '}',
    '',
  ].join('\n');
}

function abortFunction(name: string, check: HttpCheck, failures: number, text: string): string {
  return [
    `let ${name}Failures = 0;`,
    `export function ${name}() {`,
    `  const r = ${request(check)};`,
    `  ${name}Failures = ${predicateCode(check.predicate)} ? 0 : ${name}Failures + 1;`,
    `  if (${name}Failures >= ${failures}) exec.test.abort(${JSON.stringify(`abort_when: ${text}`)});`,
    `  sleep(${check.everyMs / 1000});`,
    '}',
    '',
  ].join('\n');
}

/** The predicate as a JavaScript expression over the response `r` (the helpers below). */
export function predicateCode(predicate: Predicate): string {
  return predicate.clauses
    .map(clauseCode)
    .map((code) => `(${code})`)
    .join(' && ');
}

function clauseCode(clause: Clause): string {
  const value = JSON.stringify(clause.value);
  let subject: string;
  let present: string;
  switch (clause.subject.kind) {
    case 'status':
      subject = 'r.status';
      present = 'r.status !== 0';
      break;
    case 'latency':
      subject = 'r.timings.duration';
      present = 'r.status !== 0';
      break;
    case 'body':
      subject = 'String(r.body)';
      present = 'r.body !== null';
      break;
    case 'header':
      subject = `header(r, ${JSON.stringify(clause.subject.name)})`;
      present = `${subject} !== undefined`;
      break;
    case 'json':
      subject = `path(r, ${JSON.stringify(clause.subject.path)}).value`;
      present = `path(r, ${JSON.stringify(clause.subject.path)}).present`;
      break;
  }
  switch (clause.op) {
    case 'exists':
      return present;
    case 'absent':
      return `!(${present})`;
    case '==':
      return `${present} && same(${subject}, ${value})`;
    case '!=':
      return `!(${present}) || !same(${subject}, ${value})`;
    case 'contains':
      return `${present} && holds(${subject}, ${value})`;
    case 'matches':
      return (
        `${present} && new RegExp(${value}).test(typeof ${subject} === ` +
        `'string' ? ${subject} : JSON.stringify(${subject}))`
      );
    default:
      return `${present} && Number(${subject}) ${clause.op} ${value}`;
  }
}

export const K6_HELPERS = `/** The helpers the checks use: a header by any case, a JSON path, faultline's equality. */
function header(r, name) {
  for (const key of Object.keys(r.headers)) if (key.toLowerCase() === name) return r.headers[key];
  return undefined;
}
function path(r, steps) {
  let value;
  try { value = JSON.parse(r.body); } catch (e) { return { present: false }; }
  for (const step of steps) {
    if (value === null || typeof value !== 'object' || !(step in value)) return { present: false };
    value = value[step];
  }
  return { present: true, value: value };
}
function same(a, b) {
  if (typeof a === 'number' && typeof b === 'string') return String(a) === b;
  if (typeof a === 'string' && typeof b === 'number') return a === String(b);
  return JSON.stringify(a) === JSON.stringify(b);
}
function holds(a, b) {
  return Array.isArray(a) ? a.some((item) => same(item, b)) : String(typeof a === 'object' ? JSON.stringify(a) : a).includes(String(b));
}
`;
