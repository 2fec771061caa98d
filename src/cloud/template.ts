/**
 * From one or more recommended actions and a target configuration to a complete FIS
 * CreateExperimentTemplate input, validated field by field against the catalog and the API's
 * limits (botocore's CreateExperimentTemplate), or an InputError naming the field and what is
 * accepted. Offline: nothing here calls AWS.
 *
 * Input shapes (fis-recommender's, extended):
 *   recommendation: {action, parameters?, duration?, description?, name?, startAfter?} or an array
 *     of them (several actions; `startAfter` names other actions of the same template)
 *   target_config: {roleArn, stopConditionArn | noStopCondition: true, resourceType?, selectionMode?,
 *     tags? | resourceArns?, parameters?, filters?, targets?: {<action name>: selection},
 *     description?, templateTags?, logConfiguration?, experimentOptions?, clientToken?}
 */
import { createHash } from 'node:crypto';
import { InputError } from '../kernel/errors.js';
import { isPlainObject, refuseUnknownKeys } from '../config-reader.js';
import {
  durationParameter,
  findAction,
  FIS_ACTIONS,
  PARAMETER_SELECTED_TYPES,
  type FisAction,
  type ParameterSpec,
} from './catalog.js';
import { describeMs, parseIsoDuration } from './iso-duration.js';
import { checkDocumentParameters } from './ssm-documents.js';

export interface TemplateTarget {
  resourceType: string;
  selectionMode: string;
  resourceArns?: string[];
  resourceTags?: Record<string, string>;
  filters?: Array<{ path: string; values: string[] }>;
  parameters?: Record<string, string>;
}

export interface TemplateAction {
  actionId: string;
  description?: string;
  parameters?: Record<string, string>;
  targets?: Record<string, string>;
  startAfter?: string[];
}

/** The CreateExperimentTemplate request body (botocore field names). */
export interface ExperimentTemplateInput {
  clientToken: string;
  description: string;
  stopConditions: Array<{ source: string; value?: string }>;
  targets?: Record<string, TemplateTarget>;
  actions: Record<string, TemplateAction>;
  roleArn: string;
  tags?: Record<string, string>;
  logConfiguration?: {
    logSchemaVersion: number;
    cloudWatchLogsConfiguration?: { logGroupArn: string };
    s3Configuration?: { bucketName: string; prefix?: string };
  };
  experimentOptions?: { accountTargeting?: string; emptyTargetResolutionMode?: string };
}

export interface BuiltTemplate {
  template: ExperimentTemplateInput;
  /** Things to check before applying: unverified target keys, ranges from the general rule. */
  warnings: string[];
}

const MAX_ARNS = 5;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const ALARM_ARN = /^arn:aws[a-z-]*:cloudwatch:[a-z]{2}(?:-[a-z]+)+-\d:\d{12}:alarm:.+$/;
const LOG_GROUP_ARN = /^arn:aws[a-z-]*:logs:[a-z]{2}(?:-[a-z]+)+-\d:\d{12}:log-group:[\w#/.-]+(?::\*)?$/;
const ANY_ARN = /^arn:aws[a-z-]*:([a-z0-9-]+):([a-z0-9-]*):(\d{12})?:(.+)$/;
const TARGET_PARAMETER_VALUE = /^[A-Za-z0-9 _.:/=+\-@]{1,1024}$/;
/** The service segment a resource type's ARNs carry, where it is not the type's own service. */
const ARN_SERVICE_OF: Record<string, string> = {
  'aws:ec2:ebs-volume': 'ec2',
  'aws:ec2:autoscaling-group': 'autoscaling',
  'aws:ec2:spot-instance': 'ec2',
  'aws:arc:zonal-shift-managed-resource': '*',
};

type Json = Record<string, unknown>;

function fail(field: string, message: string): never {
  throw new InputError(`${field}: ${message}`);
}

function optionalString(object: Json, key: string, field: string, max?: number): string | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') fail(`${field}.${key}`, `must be a string (got ${typeof value})`);
  if (max !== undefined && value.length > max)
    fail(`${field}.${key}`, `at most ${max} characters (got ${value.length})`);
  return value;
}

function stringMap(
  value: unknown,
  field: string,
  limits: { keyMax: number; valueMax: number; entries?: number },
): Record<string, string> {
  if (!isPlainObject(value)) fail(field, 'must be an object of name → string value');
  const entries = Object.entries(value);
  if (limits.entries !== undefined && entries.length > limits.entries)
    fail(field, `at most ${limits.entries} entries (got ${entries.length})`);
  const out: Record<string, string> = {};
  for (const [key, raw] of entries) {
    if (key.length === 0 || key.length > limits.keyMax)
      fail(`${field}.${key}`, `names are 1–${limits.keyMax} characters`);
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean')
      fail(`${field}.${key}`, 'must be a string, number or boolean');
    const text = String(raw);
    if (text.length > limits.valueMax) fail(`${field}.${key}`, `values are at most ${limits.valueMax} characters`);
    out[key] = text;
  }
  return out;
}

// ---------------------------------------------------------------- parameters

/**
 * One parameter's value checked against the catalog: its form, and its range. A range the action
 * documents is enforced both ways. The general FIS rule (1 minute–12 hours) is enforced only at
 * its top, FIS's limit on an experiment's length; below its minimum the value is kept and a
 * warning says that this action's own minimum is not known, since FIS may well take it.
 */
function checkParameter(
  action: FisAction,
  spec: ParameterSpec,
  value: string,
  field: string,
  warnings: string[],
): string {
  const at = `${field}.${spec.name}`;
  const range = (n: number, show: (x: number) => string): void => {
    if (spec.min !== undefined && n < spec.min) {
      if (spec.rangeSource === 'general') {
        warnings.push(
          `${at}: ${value} is below ${show(spec.min)}, the minimum of most ` +
            `FIS actions; ${action.id}'s own minimum is not in our reference: ` +
            `check that FIS accepts it`,
        );
      } else fail(at, `${value} is below ${show(spec.min)}, the least ${action.id} accepts`);
    }
    if (spec.max !== undefined && n > spec.max)
      fail(
        at,
        `${value} is above ${show(spec.max)}, the most ${action.id} ` +
          `accepts${spec.rangeSource === 'general' ? ' (FIS runs an action 12 hours at most)' : ''}`,
      );
  };
  switch (spec.kind) {
    case 'duration': {
      const ms = parseIsoDuration(value);
      if (ms === undefined) fail(at, `"${value}" is not an ISO 8601 duration; write e.g. PT30S, PT5M, PT1H30M`);
      if (ms <= 0) fail(at, `"${value}" is zero; ${action.id} needs at least ${describeMs(spec.min ?? 1000)}`);
      range(ms, describeMs);
      return value.trim().toUpperCase();
    }
    case 'integer':
    case 'percent':
    case 'number': {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n)) fail(at, `"${value}" is not a number`);
      if (spec.kind === 'integer' && !Number.isInteger(n)) fail(at, `"${value}" is not a whole number`);
      range(n, String);
      if (spec.kind === 'percent' && (n < 0 || n > 100)) fail(at, `"${value}" is not a percentage 0–100`);
      return String(n);
    }
    case 'boolean':
      if (!/^(true|false)$/i.test(value)) fail(at, `"${value}" is not true or false`);
      return value.toLowerCase();
    case 'enum':
      if (!spec.values!.includes(value)) fail(at, `"${value}" is not one of ${spec.values!.join(', ')}`);
      return value;
    case 'list': {
      const items = value.split(',').map((item) => item.trim());
      if (items.some((item) => item === '')) fail(at, `"${value}" has an empty item; write a comma-separated list`);
      if (spec.max !== undefined && items.length > spec.max)
        fail(at, `at most ${spec.max} items (got ${items.length})`);
      const bad = spec.values ? items.find((item) => !spec.values!.includes(item)) : undefined;
      if (bad !== undefined) fail(at, `"${bad}" is not one of ${spec.values!.join(', ')}`);
      return items.join(',');
    }
    case 'json':
      try {
        JSON.parse(value);
      } catch {
        fail(at, 'must be JSON text');
      }
      return value;
    case 'arn':
      if (!ANY_ARN.test(value) || value.length > 2048)
        fail(at, `"${value}" is not an ARN (arn:aws:<service>:<region>:<account>:<resource>)`);
      return value;
    case 'string':
      if (value.trim() === '') fail(at, 'must not be empty');
      return value;
  }
}

function buildParameters(
  action: FisAction,
  given: Record<string, string>,
  field: string,
  warnings: string[],
): Record<string, string> {
  const known = new Map(action.parameters.map((p) => [p.name, p]));
  for (const name of Object.keys(given)) {
    if (!known.has(name)) {
      const accepted = action.parameters.map((p) => p.name).join(', ');
      fail(`${field}.${name}`, `${action.id} has no parameter "${name}"; it accepts ${accepted || 'no parameters'}`);
    }
  }
  const out: Record<string, string> = {};
  for (const spec of action.parameters) {
    const value = given[spec.name];
    if (value === undefined) {
      if (spec.required)
        fail(`${field}.${spec.name}`, `${action.id} requires ${spec.name}${spec.note ? ` (${spec.note})` : ''}`);
      continue;
    }
    out[spec.name] = checkParameter(action, spec, value, field, warnings);
  }
  // Cross-field rules the reference states.
  if (
    action.id === 'aws:network:disrupt-connectivity' &&
    out.scope === 'prefix-list' &&
    out.prefixListIdentifier === undefined
  ) {
    fail(`${field}.prefixListIdentifier`, 'required when scope is prefix-list');
  }
  if (action.id === 'aws:ssm:send-command') warnings.push(...checkDocumentParameters(out, field));
  return out;
}

// ---------------------------------------------------------------- targets

/** `ALL`, `COUNT(n)` with n ≥ 1, `PERCENT(n)` with 1 ≤ n ≤ 100. */
export function checkSelectionMode(text: string, field: string): string {
  const mode = text.trim().toUpperCase();
  if (mode === 'ALL') return mode;
  const count = /^COUNT\((\d+)\)$/.exec(mode);
  if (count) {
    if (Number(count[1]) < 1) fail(field, `${text}: COUNT needs n ≥ 1`);
    return `COUNT(${Number(count[1])})`;
  }
  const percent = /^PERCENT\((\d+)\)$/.exec(mode);
  if (percent) {
    const n = Number(percent[1]);
    if (n < 1 || n > 100) fail(field, `${text}: PERCENT needs 1–100`);
    return `PERCENT(${n})`;
  }
  fail(field, `"${text}" is not ALL, COUNT(n) or PERCENT(n)`);
}

function arnService(resourceType: string): string {
  return ARN_SERVICE_OF[resourceType] ?? resourceType.split(':')[1] ?? '';
}

function buildTarget(action: FisAction, selection: Json, field: string, warnings: string[]): TemplateTarget {
  const givenType = optionalString(selection, 'resourceType', field);
  if (givenType !== undefined && givenType !== action.resourceType) {
    fail(`${field}.resourceType`, `${action.id} targets ${action.resourceType}, not ${givenType}`);
  }
  const resourceType = action.resourceType!;
  const target: TemplateTarget = {
    resourceType,
    selectionMode: checkSelectionMode(
      optionalString(selection, 'selectionMode', field) ?? 'ALL',
      `${field}.selectionMode`,
    ),
  };
  const tagsValue = selection.tags ?? selection.resourceTags;
  const arnsValue = selection.resourceArns;
  if (tagsValue !== undefined && arnsValue !== undefined) fail(field, 'give tags or resourceArns, not both');
  const byParameters = PARAMETER_SELECTED_TYPES[resourceType];
  if (byParameters) {
    // FIS refuses a template that selects these by ARN or tag.
    const how =
      `${resourceType} targets are selected by target parameters only ` +
      `(${byParameters.required.join(', ')}), never by ARN or tag`;
    if (arnsValue !== undefined) fail(`${field}.resourceArns`, how);
    if (tagsValue !== undefined) fail(`${field}.tags`, how);
    if (selection.parameters === undefined)
      fail(
        `${field}.parameters`,
        `required: ${how}, e.g. ` +
          `{"clusterIdentifier":"prod","namespace":"shop","selectorType":"labelSelector","selectorValue":"app=checkout"}`,
      );
  }
  if (arnsValue !== undefined) {
    if (!Array.isArray(arnsValue) || arnsValue.length === 0)
      fail(`${field}.resourceArns`, 'must be a non-empty array of ARNs');
    if (arnsValue.length > MAX_ARNS)
      fail(`${field}.resourceArns`, `at most ${MAX_ARNS} ARNs (got ${arnsValue.length}); select more by tags`);
    if (action.selection === 'single-arn' && arnsValue.length !== 1)
      fail(`${field}.resourceArns`, `${action.id} takes exactly one ARN`);
    if (action.selection === 'tags-only')
      fail(`${field}.resourceArns`, `${action.id} selects ${resourceType} by tags only`);
    const service = arnService(resourceType);
    target.resourceArns = arnsValue.map((arn: unknown, index: number) => {
      const at = `${field}.resourceArns[${index}]`;
      if (typeof arn !== 'string' || arn.length > 2048) fail(at, 'must be an ARN string of at most 2048 characters');
      const match = ANY_ARN.exec(arn);
      if (!match) fail(at, `"${arn}" is not an ARN (arn:aws:<service>:<region>:<account>:<resource>)`);
      if (service !== '*' && match[1] !== service)
        fail(at, `"${arn}" is an ${match[1]} ARN; ${resourceType} needs an arn:aws:${service}:… ARN`);
      return arn;
    });
  } else if (tagsValue !== undefined) {
    if (action.selection === 'arns-only' || action.selection === 'single-arn')
      fail(`${field}.tags`, `${action.id} selects ${resourceType} by ARN only`);
    target.resourceTags = stringMap(tagsValue, `${field}.tags`, { keyMax: 128, valueMax: 256, entries: 50 });
    if (Object.keys(target.resourceTags).length === 0) fail(`${field}.tags`, 'must have at least one tag');
  }
  if (selection.parameters !== undefined) {
    target.parameters = stringMap(selection.parameters, `${field}.parameters`, { keyMax: 64, valueMax: 1024 });
    for (const [key, value] of Object.entries(target.parameters)) {
      if (!TARGET_PARAMETER_VALUE.test(value))
        fail(`${field}.parameters.${key}`, 'values use letters, digits, spaces and _.:/=+-@ only (1–1024)');
    }
    if (byParameters) {
      const missing = byParameters.required.filter((name) => target.parameters![name] === undefined);
      if (missing.length > 0)
        fail(
          `${field}.parameters`,
          `${resourceType} targets need ${missing.join(', ')} (given: ` +
            `${Object.keys(target.parameters).join(', ') || 'none'})`,
        );
      const known = [...byParameters.required, ...byParameters.optional];
      for (const key of Object.keys(target.parameters)) {
        if (!known.includes(key))
          warnings.push(
            `${field}.parameters.${key}: not a ${resourceType} target ` +
              `parameter our source lists (${known.join(', ')}); FIS may refuse ` +
              `it`,
          );
      }
      for (const [name, values] of Object.entries(byParameters.values)) {
        const value = target.parameters[name];
        if (value !== undefined && !values.includes(value))
          warnings.push(
            `${field}.parameters.${name}: "${value}" is not one of ` +
              `${values.join(', ')}, the values our source lists; FIS may ` +
              `refuse it`,
          );
      }
    }
  }
  if (selection.filters !== undefined) {
    if (!Array.isArray(selection.filters)) fail(`${field}.filters`, 'must be an array of {path, values}');
    target.filters = selection.filters.map((filter: unknown, index: number) => {
      const at = `${field}.filters[${index}]`;
      if (!isPlainObject(filter) || typeof filter.path !== 'string' || !Array.isArray(filter.values))
        fail(at, 'must be {path: string, values: string[]}');
      if (filter.path.length === 0 || filter.path.length > 256) fail(`${at}.path`, '1–256 characters');
      const values = filter.values.map((value: unknown, i: number) => {
        if (typeof value !== 'string' || value.length > 128)
          fail(`${at}.values[${i}]`, 'a string of at most 128 characters');
        return value;
      });
      return { path: filter.path, values };
    });
  }
  if (!target.resourceArns && !target.resourceTags && !target.parameters) {
    fail(
      field,
      `select the ${resourceType} targets: give tags (e.g. ` +
        `{"Environment":"staging"}), resourceArns (at most ${MAX_ARNS}) ` +
        `or target parameters`,
    );
  }
  return target;
}

// ---------------------------------------------------------------- the template

interface ActionRequest {
  action: FisAction;
  name: string;
  parameters: Record<string, string>;
  description?: string;
  startAfter: string[];
  /** What was read differently from what was given (a duration the action has no use for). */
  notes: string[];
}

/** What a recommendation may carry: ours (as fault_recommend_fis_experiments returns it) and fis-recommender's. */
const RECOMMENDATION_KEYS = new Set([
  'action',
  'actionId',
  'fis_action',
  'parameters',
  'duration',
  'description',
  'name',
  'startAfter',
  'failure',
  'why',
  'confidence',
  'score',
  'parametersToSet',
  'targetResourceType',
  'targetKey',
  'stopCondition',
  'localRehearsal',
  'experiment_name',
  'rationale',
]);
const SELECTION_KEYS = [
  'resourceType',
  'selectionMode',
  'tags',
  'resourceTags',
  'resourceArns',
  'parameters',
  'filters',
] as const;
const TARGET_CONFIG_KEYS = new Set<string>([
  ...SELECTION_KEYS,
  'roleArn',
  'stopConditionArn',
  'noStopCondition',
  'targets',
  'description',
  'templateTags',
  'logConfiguration',
  'experimentOptions',
  'clientToken',
]);

function readRecommendation(raw: unknown, field: string): ActionRequest {
  if (!isPlainObject(raw)) fail(field, 'must be an object {action, parameters?, duration?}');
  refuseUnknownKeys(raw, RECOMMENDATION_KEYS, field);
  const id = raw.action ?? raw.actionId ?? raw.fis_action;
  if (typeof id !== 'string')
    fail(`${field}.action`, 'required: an FIS action id such as aws:ecs:task-network-latency');
  const action = findAction(id);
  if (!action) {
    const near = FIS_ACTIONS.filter((a) => a.id.split(':')[1] === id.split(':')[1]).map((a) => a.id);
    fail(
      `${field}.action`,
      `"${id}" is not an FIS action in the catalog${near.length ? `; ${id.split(':')[1]} actions: ${near.join(', ')}` : ''}`,
    );
  }
  const parameters =
    raw.parameters === undefined || raw.parameters === null
      ? {}
      : stringMap(raw.parameters, `${field}.parameters`, { keyMax: 64, valueMax: 1024 });
  const duration = raw.duration;
  const notes: string[] = [];
  if (duration !== undefined && duration !== null && duration !== '') {
    if (typeof duration !== 'string') fail(`${field}.duration`, 'must be an ISO 8601 duration string such as PT5M');
    const spec = durationParameter(action);
    if (!spec) {
      // A recommendation's duration is advice, not a parameter: an action that acts once (a
      // reboot, a failover) has no use for it, and FIS would refuse it as a parameter.
      notes.push(
        `duration ${duration} is left out: ${action.id} acts once and ` +
          `takes no duration (it accepts ` +
          `${action.parameters.map((p) => p.name).join(', ') || 'no parameters'})`,
      );
    } else {
      if (parameters[spec.name] !== undefined && parameters[spec.name] !== duration)
        fail(`${field}.duration`, `differs from parameters.${spec.name}; give one`);
      parameters[spec.name] = duration;
    }
  }
  const name = optionalString(raw, 'name', field) ?? '';
  if (name !== '' && (name.length > 64 || /\s/.test(name)))
    fail(`${field}.name`, 'an action name is 1–64 characters without whitespace');
  const startAfter = raw.startAfter === undefined ? [] : raw.startAfter;
  if (!Array.isArray(startAfter) || startAfter.some((s) => typeof s !== 'string'))
    fail(`${field}.startAfter`, 'must be an array of action names');
  const description = optionalString(raw, 'description', field, 512);
  return {
    action,
    name,
    parameters,
    ...(description !== undefined ? { description } : {}),
    startAfter: startAfter as string[],
    notes,
  };
}

export function buildExperimentTemplate(recommendation: unknown, targetConfig: unknown): BuiltTemplate {
  const list = Array.isArray(recommendation) ? recommendation : [recommendation];
  if (list.length === 0) fail('recommendation', 'give at least one action');
  if (list.length > 20) fail('recommendation', 'at most 20 actions in one template');
  const fieldOf = (index: number): string =>
    Array.isArray(recommendation) ? `recommendation[${index}]` : 'recommendation';
  const requests = list.map((raw, index) => readRecommendation(raw, fieldOf(index)));
  if (!isPlainObject(targetConfig))
    fail('target_config', 'must be an object {roleArn, stopConditionArn, tags | resourceArns, …}');
  refuseUnknownKeys(targetConfig, TARGET_CONFIG_KEYS, 'target_config');
  const warnings: string[] = [];
  const used = nameActions(requests);
  const { actions, targets } = buildActions(requests, fieldOf, targetConfig, used, warnings);
  checkNoCycle(actions);

  const roleArn = optionalString(targetConfig, 'roleArn', 'target_config', 2048);
  if (roleArn === undefined)
    fail('target_config.roleArn', 'required: the IAM role FIS assumes, arn:aws:iam::<account>:role/<name>');
  if (!ROLE_ARN.test(roleArn))
    fail('target_config.roleArn', `"${roleArn}" is not an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)`);
  const stopConditions = readStopConditions(targetConfig, roleArn, warnings);

  const description =
    optionalString(targetConfig, 'description', 'target_config', 512) ??
    `faultline: ${requests.map((r) => r.action.id).join(', ')}`.slice(0, 512);
  const template: ExperimentTemplateInput = {
    clientToken: '',
    description,
    stopConditions,
    ...(Object.keys(targets).length > 0 ? { targets } : {}),
    actions,
    roleArn,
  };
  if (targetConfig.templateTags !== undefined) {
    template.tags = stringMap(targetConfig.templateTags, 'target_config.templateTags', {
      keyMax: 128,
      valueMax: 256,
      entries: 50,
    });
  }
  if (targetConfig.logConfiguration !== undefined)
    template.logConfiguration = readLogConfiguration(targetConfig.logConfiguration);
  if (targetConfig.experimentOptions !== undefined)
    template.experimentOptions = readExperimentOptions(targetConfig.experimentOptions);
  const token = optionalString(targetConfig, 'clientToken', 'target_config', 1024);
  // Derived from the content when not given: the same template gets the same idempotency token.
  template.clientToken =
    token && token.length > 0
      ? token
      : `faultline-${createHash('sha256').update(JSON.stringify(template)).digest('hex').slice(0, 32)}`;
  return { template, warnings };
}

/**
 * Names every action: as given, else its action type (`task-network-latency`), numbered when
 * repeated. Returns the names.
 */
function nameActions(requests: ActionRequest[]): Set<string> {
  const used = new Set<string>();
  for (const request of requests) {
    let name = request.name || request.action.id.split(':')[2]!.slice(0, 60);
    if (used.has(name)) {
      if (request.name) fail('recommendation', `two actions are named "${name}"`);
      let n = 2;
      while (used.has(`${name}-${n}`)) n++;
      name = `${name}-${n}`;
    }
    used.add(name);
    request.name = name;
  }
  return used;
}

/** The template's actions, and the targets they select (actions on the same selection share one). */
function buildActions(
  requests: ActionRequest[],
  fieldOf: (index: number) => string,
  targetConfig: Record<string, unknown>,
  used: Set<string>,
  warnings: string[],
): { actions: Record<string, TemplateAction>; targets: Record<string, TemplateTarget> } {
  const actions: Record<string, TemplateAction> = {};
  const targets: Record<string, TemplateTarget> = {};
  const perAction = targetConfig.targets === undefined ? {} : targetConfig.targets;
  if (!isPlainObject(perAction)) fail('target_config.targets', 'must be an object of action name → target selection');
  for (const key of Object.keys(perAction)) {
    if (!used.has(key))
      fail(`target_config.targets.${key}`, `no action is named "${key}"; actions: ${[...used].join(', ')}`);
  }
  requests.forEach((request, index) => {
    const field = fieldOf(index);
    const { action } = request;
    const entry: TemplateAction = { actionId: action.id };
    if (request.description) entry.description = request.description;
    for (const note of request.notes) warnings.push(`${field}: ${note}`);
    const parameters = buildParameters(action, request.parameters, `${field}.parameters`, warnings);
    if (Object.keys(parameters).length > 0) entry.parameters = parameters;
    if (action.resourceType !== null) {
      const targetName = actionTarget(request, perAction[request.name], targetConfig, targets, warnings);
      entry.targets = { [action.targetKey!]: targetName };
    }
    if (request.startAfter.length > 0) {
      for (const other of request.startAfter) {
        if (other === request.name) fail(`${field}.startAfter`, `an action cannot start after itself ("${other}")`);
        if (!used.has(other))
          fail(`${field}.startAfter`, `"${other}" is not an action of this template; actions: ${[...used].join(', ')}`);
      }
      entry.startAfter = [...request.startAfter];
    }
    actions[request.name] = entry;
  });
  return { actions, targets };
}

/**
 * The name of the target an action selects, added to `targets` unless an equal one is there
 * already. Its own selection (`target_config.targets.<name>`) replaces the shared one.
 */
function actionTarget(
  request: ActionRequest,
  own: unknown,
  targetConfig: Record<string, unknown>,
  targets: Record<string, TemplateTarget>,
  warnings: string[],
): string {
  const { action } = request;
  if (own !== undefined && !isPlainObject(own))
    fail(
      `target_config.targets.${request.name}`,
      'must be an object {resourceType?, selectionMode?, tags | resourceArns | parameters, filters?}',
    );
  if (isPlainObject(own)) refuseUnknownKeys(own, SELECTION_KEYS, `target_config.targets.${request.name}`);
  // An action's own selection replaces the shared one (its tags do not mix with shared ARNs).
  const selection = isPlainObject(own) ? { selectionMode: targetConfig.selectionMode, ...own } : targetConfig;
  const fieldName = isPlainObject(own) ? `target_config.targets.${request.name}` : 'target_config';
  const target = buildTarget(action, selection, fieldName, warnings);
  // Actions on the same selection share one target, as a person would write it.
  const same = Object.entries(targets).find(([, t]) => JSON.stringify(t) === JSON.stringify(target));
  const targetName = same
    ? same[0]
    : `${action.resourceType!.split(':').slice(1).join('-')}-${Object.keys(targets).length + 1}`.slice(0, 64);
  if (!same) targets[targetName] = target;
  if (action.targetKeySource === 'unverified') {
    warnings.push(
      `${request.name}: target key "${action.targetKey}" is not ` +
        `confirmed by our reference; check it with aws fis get-action ` +
        `--id ${action.id}`,
    );
  }
  return targetName;
}

/** The alarm that stops the experiment (in the role's account), or none when waived explicitly. */
function readStopConditions(
  targetConfig: Record<string, unknown>,
  roleArn: string,
  warnings: string[],
): ExperimentTemplateInput['stopConditions'] {
  const alarm = optionalString(targetConfig, 'stopConditionArn', 'target_config');
  const waived = targetConfig.noStopCondition === true;
  if (alarm !== undefined) {
    if (waived) fail('target_config.noStopCondition', 'given together with stopConditionArn; give one');
    if (alarm.length < 20 || alarm.length > 2048)
      fail('target_config.stopConditionArn', 'an alarm ARN is 20–2048 characters');
    const match = ALARM_ARN.exec(alarm);
    if (!match)
      fail(
        'target_config.stopConditionArn',
        `"${alarm}" is not a CloudWatch alarm ARN (arn:aws:cloudwatch:<region>:<account>:alarm:<name>)`,
      );
    const roleAccount = /::(\d{12}):/.exec(roleArn)![1];
    const alarmAccount = /:(\d{12}):alarm:/.exec(alarm)![1];
    if (roleAccount !== alarmAccount)
      fail('target_config.stopConditionArn', `the alarm is in account ${alarmAccount}, the role in ${roleAccount}`);
    return [{ source: 'aws:cloudwatch:alarm', value: alarm }];
  }
  if (waived) {
    warnings.push('no stop condition: the experiment runs its full length even if the service degrades');
    return [{ source: 'none' }];
  }
  fail(
    'target_config.stopConditionArn',
    'required: the CloudWatch alarm that stops the experiment (or noStopCondition: true to waive it explicitly)',
  );
}

function checkNoCycle(actions: Record<string, TemplateAction>): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting')
      fail('recommendation', `startAfter forms a cycle: ${[...path, name].join(' → ')}`);
    state.set(name, 'visiting');
    for (const next of actions[name]?.startAfter ?? []) visit(next, [...path, name]);
    state.set(name, 'done');
  };
  for (const name of Object.keys(actions)) visit(name, []);
}

function readLogConfiguration(raw: unknown): NonNullable<ExperimentTemplateInput['logConfiguration']> {
  const field = 'target_config.logConfiguration';
  if (!isPlainObject(raw))
    fail(
      field,
      'must be an object {logSchemaVersion, ' +
        'cloudWatchLogsConfiguration?: {logGroupArn}, s3Configuration?: ' +
        '{bucketName, prefix?}}',
    );
  const version = raw.logSchemaVersion ?? 2;
  if (!Number.isInteger(version) || (version as number) < 1)
    fail(`${field}.logSchemaVersion`, 'must be a whole number ≥ 1');
  const out: NonNullable<ExperimentTemplateInput['logConfiguration']> = { logSchemaVersion: version as number };
  if (raw.cloudWatchLogsConfiguration !== undefined) {
    const cw = raw.cloudWatchLogsConfiguration;
    if (!isPlainObject(cw) || typeof cw.logGroupArn !== 'string' || !LOG_GROUP_ARN.test(cw.logGroupArn)) {
      fail(
        `${field}.cloudWatchLogsConfiguration.logGroupArn`,
        'must be a log group ARN (arn:aws:logs:<region>:<account>:log-group:<name>)',
      );
    }
    out.cloudWatchLogsConfiguration = { logGroupArn: cw.logGroupArn };
  }
  if (raw.s3Configuration !== undefined) {
    const s3 = raw.s3Configuration;
    if (
      !isPlainObject(s3) ||
      typeof s3.bucketName !== 'string' ||
      !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s3.bucketName)
    ) {
      fail(
        `${field}.s3Configuration.bucketName`,
        'must be an S3 bucket name (3–63 lowercase letters, digits, dots, hyphens)',
      );
    }
    out.s3Configuration = { bucketName: s3.bucketName };
    if (s3.prefix !== undefined) {
      if (typeof s3.prefix !== 'string' || s3.prefix.length > 1024)
        fail(`${field}.s3Configuration.prefix`, 'a string of at most 1024 characters');
      out.s3Configuration.prefix = s3.prefix;
    }
  }
  if (!out.cloudWatchLogsConfiguration && !out.s3Configuration)
    fail(field, 'give cloudWatchLogsConfiguration or s3Configuration (or leave logConfiguration out)');
  return out;
}

function readExperimentOptions(raw: unknown): NonNullable<ExperimentTemplateInput['experimentOptions']> {
  const field = 'target_config.experimentOptions';
  if (!isPlainObject(raw)) fail(field, 'must be an object {accountTargeting?, emptyTargetResolutionMode?}');
  const out: NonNullable<ExperimentTemplateInput['experimentOptions']> = {};
  for (const key of Object.keys(raw)) {
    if (key !== 'accountTargeting' && key !== 'emptyTargetResolutionMode')
      fail(`${field}.${key}`, 'unknown; accepted: accountTargeting, emptyTargetResolutionMode');
  }
  if (raw.accountTargeting !== undefined) {
    if (raw.accountTargeting === 'multi-account')
      fail(
        `${field}.accountTargeting`,
        'multi-account needs target account configurations, which this builder does not write; use single-account',
      );
    if (raw.accountTargeting !== 'single-account')
      fail(`${field}.accountTargeting`, 'must be single-account or multi-account');
    out.accountTargeting = raw.accountTargeting;
  }
  if (raw.emptyTargetResolutionMode !== undefined) {
    if (raw.emptyTargetResolutionMode !== 'fail' && raw.emptyTargetResolutionMode !== 'skip')
      fail(`${field}.emptyTargetResolutionMode`, 'must be fail or skip');
    out.emptyTargetResolutionMode = raw.emptyTargetResolutionMode;
  }
  return out;
}

// ---------------------------------------------------------------- CloudFormation

/** The template as an AWS::FIS::ExperimentTemplate resource (CloudFormation property names). */
export function toCloudFormation(
  template: ExperimentTemplateInput,
  logicalId = 'FaultlineExperimentTemplate',
): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    Description: template.description,
    RoleArn: template.roleArn,
    StopConditions: template.stopConditions.map((s) => ({
      Source: s.source,
      ...(s.value !== undefined ? { Value: s.value } : {}),
    })),
    Targets: Object.fromEntries(
      Object.entries(template.targets ?? {}).map(([name, t]) => [
        name,
        {
          ResourceType: t.resourceType,
          SelectionMode: t.selectionMode,
          ...(t.resourceArns ? { ResourceArns: t.resourceArns } : {}),
          ...(t.resourceTags ? { ResourceTags: t.resourceTags } : {}),
          ...(t.filters ? { Filters: t.filters.map((f) => ({ Path: f.path, Values: f.values })) } : {}),
          ...(t.parameters ? { Parameters: t.parameters } : {}),
        },
      ]),
    ),
    Actions: Object.fromEntries(
      Object.entries(template.actions).map(([name, a]) => [
        name,
        {
          ActionId: a.actionId,
          ...(a.description ? { Description: a.description } : {}),
          ...(a.parameters ? { Parameters: a.parameters } : {}),
          ...(a.targets ? { Targets: a.targets } : {}),
          ...(a.startAfter ? { StartAfter: a.startAfter } : {}),
        },
      ]),
    ),
    // AWS documents Tags as required on this resource type (not in our reference); an empty map is harmless.
    Tags: template.tags ?? {},
  };
  if (template.logConfiguration) {
    const log = template.logConfiguration;
    properties.LogConfiguration = {
      LogSchemaVersion: log.logSchemaVersion,
      ...(log.cloudWatchLogsConfiguration
        ? { CloudWatchLogsConfiguration: { LogGroupArn: log.cloudWatchLogsConfiguration.logGroupArn } }
        : {}),
      ...(log.s3Configuration
        ? {
            S3Configuration: {
              BucketName: log.s3Configuration.bucketName,
              ...(log.s3Configuration.prefix ? { Prefix: log.s3Configuration.prefix } : {}),
            },
          }
        : {}),
    };
  }
  if (template.experimentOptions) {
    properties.ExperimentOptions = {
      ...(template.experimentOptions.accountTargeting
        ? { AccountTargeting: template.experimentOptions.accountTargeting }
        : {}),
      ...(template.experimentOptions.emptyTargetResolutionMode
        ? { EmptyTargetResolutionMode: template.experimentOptions.emptyTargetResolutionMode }
        : {}),
    };
  }
  return {
    AWSTemplateFormatVersion: '2010-09-09',
    Description: template.description,
    Resources: { [logicalId]: { Type: 'AWS::FIS::ExperimentTemplate', Properties: properties } },
  };
}

/** A JSON or YAML rendering of the CloudFormation document. */
export async function renderCloudFormation(
  template: ExperimentTemplateInput,
  syntax: 'json' | 'yaml',
): Promise<string> {
  const document = toCloudFormation(template);
  if (syntax === 'json') return JSON.stringify(document, null, 2);
  const { stringify } = await import('yaml');
  return stringify(document);
}
