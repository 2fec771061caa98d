/**
 * The FIS template builder against the catalog: every action yields a template that passes the
 * validator with the least target config it needs, and the template is structurally what FIS
 * asks (the action's own target key and resource type, only its parameters); wrong inputs are
 * refused naming the field. CloudFormation renders as JSON and YAML that parse back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  buildExperimentTemplate,
  CATALOG_SOURCE,
  FIS_ACTIONS,
  formatIsoDuration,
  parseIsoDuration,
  renderCloudFormation,
  toCloudFormation,
  type FisAction,
  type ParameterSpec,
} from '../src/cloud/index.js';
import { InputError } from '../src/kernel/errors.js';

const ROLE = 'arn:aws:iam::123456789012:role/fis-experiments';
const ALARM = 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:checkout-p99';

/** A valid value for each required parameter, from its spec alone. */
function minimumValue(spec: ParameterSpec): string {
  switch (spec.kind) {
    case 'duration':
      return formatIsoDuration(
        Math.max(
          spec.min ?? 60_000,
          60_000 > (spec.max ?? Infinity) ? spec.min! : Math.min(300_000, spec.max ?? 300_000),
        ),
      );
    case 'integer':
    case 'number':
      return String(spec.min ?? 1);
    case 'percent':
      return String(Math.max(spec.min ?? 1, 50));
    case 'enum':
      return spec.values![0]!;
    case 'boolean':
      return 'true';
    case 'list':
      return spec.values ? spec.values[0]! : 'us-east-1a';
    case 'json':
      return '{}';
    case 'arn':
      return 'arn:aws:ssm:us-east-1::document/AWSFIS-Run-CPU-Stress';
    case 'string':
      return 'value';
  }
}

const EKS_POD_TARGET = {
  clusterIdentifier: 'prod',
  namespace: 'shop',
  selectorType: 'labelSelector',
  selectorValue: 'app=checkout',
};

function minimumRequest(action: FisAction): {
  recommendation: Record<string, unknown>;
  target: Record<string, unknown>;
} {
  const parameters = Object.fromEntries(
    action.parameters.filter((p) => p.required).map((p) => [p.name, minimumValue(p)]),
  );
  const target: Record<string, unknown> = { roleArn: ROLE, stopConditionArn: ALARM };
  if (action.resourceType) {
    const service =
      action.resourceType === 'aws:ec2:autoscaling-group' ? 'autoscaling' : action.resourceType.split(':')[1];
    if (action.resourceType === 'aws:eks:pod') {
      // FIS selects pods by target parameters only.
      target.parameters = EKS_POD_TARGET;
    } else if (action.selection === 'arns-only' || action.selection === 'single-arn') {
      target.resourceArns = [
        service === 'iam'
          ? 'arn:aws:iam::123456789012:role/app'
          : `arn:aws:${service}:us-east-1:123456789012:thing/one`,
      ];
    } else {
      target.tags = { service: 'checkout' };
    }
  }
  return { recommendation: { action: action.id, parameters }, target };
}

describe('the catalog', () => {
  test('notes its source and date, and covers every action of the FIS action reference', () => {
    assert.match(CATALOG_SOURCE.read, /^\d{4}-\d\d-\d\d$/);
    assert.ok(FIS_ACTIONS.length >= 50, `${FIS_ACTIONS.length} actions`);
    const ids = new Set(FIS_ACTIONS.map((a) => a.id));
    assert.equal(ids.size, FIS_ACTIONS.length, 'no duplicate ids');
    for (const id of [
      'aws:ecs:task-network-latency',
      'aws:eks:pod-network-packet-loss',
      'aws:rds:failover-db-cluster',
      'aws:lambda:invocation-http-integration-response',
      'aws:directconnect:virtual-interface-disconnect',
      'aws:ssm:start-automation-execution',
    ]) {
      assert.ok(ids.has(id), id);
    }
    for (const action of FIS_ACTIONS) {
      assert.equal(
        action.resourceType === null,
        action.targetKey === null,
        `${action.id}: a target key exactly when there is a resource type`,
      );
      for (const p of action.parameters)
        if (p.kind === 'enum') assert.ok(p.values && p.values.length > 0, `${action.id}.${p.name}`);
    }
  });
});

describe('every catalog action yields a valid template with the minimum target config', () => {
  for (const action of FIS_ACTIONS) {
    test(action.id, async () => {
      const { recommendation, target } = minimumRequest(action);
      const { template } = buildExperimentTemplate(recommendation, target);
      const [name, entry] = Object.entries(template.actions)[0]!;
      assert.equal(entry.actionId, action.id);
      assert.ok(name.length <= 64 && !/\s/.test(name));
      // Only parameters the action accepts, and every required one.
      const accepted = new Set(action.parameters.map((p) => p.name));
      for (const key of Object.keys(entry.parameters ?? {}))
        assert.ok(accepted.has(key), `${key} is not a parameter of ${action.id}`);
      for (const p of action.parameters.filter((p) => p.required))
        assert.ok(entry.parameters?.[p.name] !== undefined, `${p.name} missing`);
      if (action.resourceType) {
        assert.deepEqual(Object.keys(entry.targets!), [action.targetKey], "the action's own target key");
        const targetName = entry.targets![action.targetKey!]!;
        assert.equal(template.targets![targetName]!.resourceType, action.resourceType);
        assert.equal(template.targets![targetName]!.selectionMode, 'ALL');
      } else {
        assert.equal(entry.targets, undefined);
        assert.equal(template.targets, undefined);
      }
      assert.deepEqual(template.stopConditions, [{ source: 'aws:cloudwatch:alarm', value: ALARM }]);
      assert.equal(template.roleArn, ROLE);
      assert.ok(template.clientToken.length >= 1 && template.clientToken.length <= 1024);
      assert.ok(template.description.length <= 512);
      // The same input builds the same template, token included (idempotent).
      assert.deepEqual(buildExperimentTemplate(recommendation, target).template, template);
      const cfn = toCloudFormation(template);
      const resource = (parseYaml(await renderCloudFormation(template, 'yaml')) as typeof cfn).Resources as Record<
        string,
        { Type: string; Properties: Record<string, unknown> }
      >;
      assert.deepEqual(JSON.parse(await renderCloudFormation(template, 'json')), cfn);
      const only = Object.values(resource)[0]!;
      assert.equal(only.Type, 'AWS::FIS::ExperimentTemplate');
      assert.equal((only.Properties.Actions as Record<string, { ActionId: string }>)[name]!.ActionId, action.id);
    });
  }
});

function refused(recommendation: unknown, target: unknown, field: RegExp): void {
  assert.throws(
    () => buildExperimentTemplate(recommendation, target),
    (error: unknown) => {
      assert.ok(error instanceof InputError, String(error));
      assert.match(error.message, field);
      return true;
    },
  );
}

describe('wrong inputs are refused naming the field', () => {
  const latency = (duration: string) => ({ action: 'aws:ecs:task-network-latency', duration });
  const target = { roleArn: ROLE, stopConditionArn: ALARM, tags: { service: 'checkout' } };

  test('durations: PT0M refused, PT30S on a 1 s–12 h action and PT1H30M accepted, over 12 h refused', () => {
    refused(latency('PT0M'), target, /^recommendation\.parameters\.duration: "PT0M" is zero/);
    refused(latency('5m'), target, /^recommendation\.parameters\.duration: "5m" is not an ISO 8601 duration/);
    refused(latency('PT13H'), target, /^recommendation\.parameters\.duration: PT13H is above PT12H/);
    assert.equal(
      buildExperimentTemplate(latency('PT1H30M'), target).template.actions['task-network-latency']!.parameters!
        .duration,
      'PT1H30M',
    );
    const ebs = buildExperimentTemplate({ action: 'aws:ebs:pause-volume-io', duration: 'PT30S' }, target);
    assert.equal(ebs.template.actions['pause-volume-io']!.parameters!.duration, 'PT30S');
    refused(
      { action: 'aws:ec2:send-spot-instance-interruptions', parameters: { durationBeforeInterruption: 'PT1M' } },
      target,
      /durationBeforeInterruption: PT1M is below PT2M/,
    );
    refused(
      { action: 'aws:directconnect:virtual-interface-disconnect', duration: 'PT5M' },
      target,
      /duration: PT5M is below PT10M/,
    );
    refused(
      {
        action: 'aws:fis:inject-api-throttle-error',
        duration: 'PT30S',
        parameters: { service: 'ec2', percentage: '10', operations: 'DescribeInstances' },
      },
      target,
      /duration: PT30S is below PT1M, the least aws:fis:inject-api-throttle-error accepts/,
    );
  });

  test(
    'below the general 1-minute rule on an action whose own minimum ' +
      'is unknown: kept, with a warning naming the field',
    () => {
      const short = buildExperimentTemplate(latency('PT10S'), target);
      assert.equal(short.template.actions['task-network-latency']!.parameters!.duration, 'PT10S');
      assert.ok(
        short.warnings.some((w) =>
          /^recommendation\.parameters\.duration: PT10S is below PT1M, the minimum of most FIS actions; aws:ecs:task-network-latency's own minimum is not in our reference/.test(
            w,
          ),
        ),
        short.warnings.join('\n'),
      );
      assert.ok(
        !buildExperimentTemplate(latency('PT5M'), target).warnings.some((w) => /minimum/.test(w)),
        'no warning within the rule',
      );
    },
  );

  test(
    'a duration on an action that acts once is left out with a ' +
      'warning; stop-instances takes it as its stop length',
    () => {
      const reboot = buildExperimentTemplate({ action: 'aws:ec2:reboot-instances', duration: 'PT2M' }, target);
      assert.equal(reboot.template.actions['reboot-instances']!.parameters, undefined);
      assert.ok(
        reboot.warnings.some((w) =>
          /^recommendation: duration PT2M is left out: aws:ec2:reboot-instances acts once and takes no duration/.test(
            w,
          ),
        ),
        reboot.warnings.join('\n'),
      );
      const stop = buildExperimentTemplate({ action: 'aws:ec2:stop-instances', duration: 'PT3M' }, target);
      assert.deepEqual(stop.template.actions['stop-instances']!.parameters, { startInstancesAfterDuration: 'PT3M' });
    },
  );

  test('selectionMode: ALL, COUNT(n≥1), PERCENT(1–100)', () => {
    refused(
      latency('PT5M'),
      { ...target, selectionMode: 'PERCENT(0)' },
      /^target_config\.selectionMode: PERCENT\(0\): PERCENT needs 1–100/,
    );
    refused(latency('PT5M'), { ...target, selectionMode: 'PERCENT(101)' }, /^target_config\.selectionMode/);
    refused(
      latency('PT5M'),
      { ...target, selectionMode: 'COUNT(0)' },
      /^target_config\.selectionMode: COUNT\(0\): COUNT needs n ≥ 1/,
    );
    refused(
      latency('PT5M'),
      { ...target, selectionMode: 'SOME' },
      /^target_config\.selectionMode: "SOME" is not ALL, COUNT\(n\) or PERCENT\(n\)/,
    );
    for (const mode of ['ALL', 'COUNT(1)', 'PERCENT(100)', 'percent(25)']) {
      const built = buildExperimentTemplate(latency('PT5M'), { ...target, selectionMode: mode });
      assert.equal(Object.values(built.template.targets!)[0]!.selectionMode, mode.toUpperCase());
    }
  });

  test(
    'a stop condition is required unless waived explicitly, and must ' + "be a CloudWatch alarm of the role's account",
    () => {
      const { stopConditionArn: _, ...noAlarm } = target;
      refused(latency('PT5M'), noAlarm, /^target_config\.stopConditionArn: required/);
      refused(
        latency('PT5M'),
        { ...target, stopConditionArn: 'arn:aws:sns:us-east-1:123456789012:topic' },
        /^target_config\.stopConditionArn: .* is not a CloudWatch alarm ARN/,
      );
      refused(
        latency('PT5M'),
        { ...target, stopConditionArn: 'arn:aws:cloudwatch:us-east-1:999999999999:alarm:x' },
        /^target_config\.stopConditionArn: the alarm is in account 999999999999/,
      );
      const waived = buildExperimentTemplate(latency('PT5M'), { ...noAlarm, noStopCondition: true });
      assert.deepEqual(waived.template.stopConditions, [{ source: 'none' }]);
      assert.ok(waived.warnings.some((w) => /no stop condition/.test(w)));
    },
  );

  test("an action's resource type is its own: RDS reboot with aws:ec2:instance is refused", () => {
    refused(
      { action: 'aws:rds:reboot-db-instances' },
      { ...target, resourceType: 'aws:ec2:instance' },
      /^target_config\.resourceType: aws:rds:reboot-db-instances targets aws:rds:db, not aws:ec2:instance/,
    );
    refused(
      { action: 'aws:rds:reboot-db-instances' },
      { ...target, tags: undefined, resourceArns: ['arn:aws:ec2:us-east-1:123456789012:instance/i-1'] },
      /^target_config\.resourceArns\[0\]: .* is an ec2 ARN; aws:rds:db needs an arn:aws:rds:… ARN/,
    );
    const rds = buildExperimentTemplate(
      { action: 'aws:rds:reboot-db-instances' },
      { ...target, tags: undefined, resourceArns: ['arn:aws:rds:us-east-1:123456789012:db:orders'] },
    );
    assert.deepEqual(rds.template.actions['reboot-db-instances']!.targets, { DBInstances: 'rds-db-1' });
  });

  test('unknown and missing parameters', () => {
    refused(
      { action: 'aws:ecs:task-network-latency', duration: 'PT5M', parameters: { latencyMs: '100' } },
      target,
      /^recommendation\.parameters\.latencyMs: aws:ecs:task-network-latency has no parameter "latencyMs"; it accepts duration, delayMilliseconds/,
    );
    refused(
      { action: 'aws:ssm:send-command', duration: 'PT5M' },
      target,
      /^recommendation\.parameters\.documentArn: aws:ssm:send-command requires documentArn/,
    );
    refused(
      { action: 'aws:eks:pod-delete' },
      target,
      /^recommendation\.parameters\.kubernetesServiceAccount: aws:eks:pod-delete requires kubernetesServiceAccount/,
    );
    refused(
      { action: 'aws:network:disrupt-connectivity', duration: 'PT5M' },
      target,
      /^recommendation\.parameters\.scope: aws:network:disrupt-connectivity requires scope/,
    );
    refused(
      { action: 'aws:network:disrupt-connectivity', duration: 'PT5M', parameters: { scope: 'prefix-list' } },
      target,
      /prefixListIdentifier: required when scope is prefix-list/,
    );
    refused(
      { action: 'aws:ecs:task-network-packet-loss', duration: 'PT5M', parameters: { lossPercent: '140' } },
      target,
      /lossPercent: .*140/,
    );
    refused(
      { action: 'aws:lambda:invocation-error', duration: 'PT5M', parameters: { preventExecution: 'yes' } },
      target,
      /preventExecution: "yes" is not true or false/,
    );
    refused(
      {
        action: 'aws:fis:inject-api-throttle-error',
        duration: 'PT5M',
        parameters: { service: 's3', percentage: '10', operations: 'PutObject' },
      },
      target,
      /service: "s3" is not one of ec2, kinesis/,
    );
    refused(
      { action: 'aws:ec2:explode' },
      target,
      /^recommendation\.action: "aws:ec2:explode" is not an FIS action in the catalog; ec2 actions: /,
    );
  });

  test('targets: tags or at most 5 ARNs, not both; ARN-only and tag-only resource types; role ARN format', () => {
    const arns = Array.from({ length: 6 }, (_, i) => `arn:aws:ecs:us-east-1:123456789012:task/c/${i}`);
    refused(
      latency('PT5M'),
      { ...target, tags: undefined, resourceArns: arns },
      /^target_config\.resourceArns: at most 5 ARNs/,
    );
    refused(
      latency('PT5M'),
      { ...target, resourceArns: arns.slice(0, 1) },
      /^target_config: give tags or resourceArns, not both/,
    );
    refused(
      latency('PT5M'),
      { roleArn: ROLE, stopConditionArn: ALARM },
      /^target_config: select the aws:ecs:task targets/,
    );
    refused(
      { action: 'aws:s3:bucket-pause-replication', duration: 'PT5M', parameters: { region: 'us-west-2' } },
      { ...target, tags: undefined, resourceArns: ['arn:aws:s3:::bucket'] },
      /by tags only/,
    );
    refused(
      {
        action: 'aws:ec2:api-insufficient-instance-capacity-error',
        duration: 'PT5M',
        parameters: { availabilityZoneIdentifiers: 'use1-az1', percentage: '50' },
      },
      target,
      /^target_config\.tags: .* by ARN only/,
    );
    refused(
      latency('PT5M'),
      { ...target, roleArn: 'arn:aws:iam::123:role/x' },
      /^target_config\.roleArn: .* is not an IAM role ARN/,
    );
    refused(
      latency('PT5M'),
      { ...target, tags: { ['k'.repeat(129)]: 'v' } },
      /^target_config\.tags\.k+: names are 1–128 characters/,
    );
  });

  test(
    'several actions: startAfter checked, cycles refused, shared ' + 'targets; logConfiguration and experimentOptions',
    () => {
      const built = buildExperimentTemplate(
        [
          { action: 'aws:fis:wait', name: 'warm-up', duration: 'PT2M' },
          { action: 'aws:ecs:task-network-latency', name: 'slow', duration: 'PT5M', startAfter: ['warm-up'] },
          { action: 'aws:ecs:task-network-packet-loss', name: 'lossy', duration: 'PT5M', startAfter: ['slow'] },
        ],
        {
          ...target,
          logConfiguration: {
            logSchemaVersion: 2,
            cloudWatchLogsConfiguration: {
              logGroupArn: 'arn:aws:logs:us-east-1:123456789012:log-group:/fis/experiments',
            },
          },
          experimentOptions: { emptyTargetResolutionMode: 'skip', accountTargeting: 'single-account' },
          templateTags: { team: 'payments' },
        },
      );
      assert.deepEqual(built.template.actions.slow!.startAfter, ['warm-up']);
      assert.equal(Object.keys(built.template.targets!).length, 1, 'both ECS actions share one target');
      assert.equal(built.template.logConfiguration!.logSchemaVersion, 2);
      assert.deepEqual(built.template.experimentOptions, {
        emptyTargetResolutionMode: 'skip',
        accountTargeting: 'single-account',
      });
      assert.deepEqual(built.template.tags, { team: 'payments' });
      refused(
        [{ action: 'aws:fis:wait', name: 'a', duration: 'PT1M', startAfter: ['nope'] }],
        target,
        /startAfter: "nope" is not an action of this template/,
      );
      refused(
        [
          { action: 'aws:fis:wait', name: 'a', duration: 'PT1M', startAfter: ['b'] },
          { action: 'aws:fis:wait', name: 'b', duration: 'PT1M', startAfter: ['a'] },
        ],
        target,
        /startAfter forms a cycle/,
      );
      refused(
        latency('PT5M'),
        { ...target, experimentOptions: { emptyTargetResolutionMode: 'ignore' } },
        /^target_config\.experimentOptions\.emptyTargetResolutionMode: must be fail or skip/,
      );
      refused(
        latency('PT5M'),
        { ...target, logConfiguration: { logSchemaVersion: 2, cloudWatchLogsConfiguration: { logGroupArn: 'group' } } },
        /logGroupArn: must be a log group ARN/,
      );
    },
  );

  test(
    'misspelt fields are refused by name instead of falling back to a ' +
      'default; per-action selections replace the shared one',
    () => {
      refused(
        latency('PT5M'),
        { ...target, selectonMode: 'COUNT(1)' },
        /^target_config: unknown field "selectonMode" \(accepted: .*selectionMode/,
      );
      refused({ ...latency('PT5M'), paramaters: {} }, target, /^recommendation: unknown field "paramaters"/);
      refused(
        latency('PT5M'),
        { ...target, targets: { 'task-network-latency': { tag: { a: 'b' } } } },
        /^target_config\.targets\.task-network-latency: unknown field "tag"/,
      );
      const built = buildExperimentTemplate(
        [
          { action: 'aws:ecs:task-network-latency', name: 'slow', duration: 'PT5M' },
          { action: 'aws:rds:reboot-db-instances', name: 'db' },
        ],
        {
          ...target,
          selectionMode: 'COUNT(2)',
          targets: { db: { resourceArns: ['arn:aws:rds:us-east-1:123456789012:db:orders'] } },
        },
      );
      const targets = Object.values(built.template.targets!);
      assert.equal(targets.length, 2);
      const db = targets.find((t) => t.resourceType === 'aws:rds:db')!;
      assert.deepEqual(db.resourceArns, ['arn:aws:rds:us-east-1:123456789012:db:orders']);
      assert.equal(db.resourceTags, undefined, "the shared tags do not leak into an action's own selection");
      assert.equal(db.selectionMode, 'COUNT(2)');
      refused(
        latency('PT5M'),
        { ...target, targets: { nope: {} } },
        /^target_config\.targets\.nope: no action is named "nope"/,
      );
    },
  );

  test('ISO 8601 durations parse and format', () => {
    assert.equal(parseIsoDuration('PT30S'), 30_000);
    assert.equal(parseIsoDuration('PT1H30M'), 5_400_000);
    assert.equal(parseIsoDuration('P1D'), 86_400_000);
    assert.equal(parseIsoDuration('PT0M'), 0);
    for (const bad of ['P', 'PT', '5m', 'PT-1M', 'P1W', '']) assert.equal(parseIsoDuration(bad), undefined, bad);
    assert.equal(formatIsoDuration(5_400_000), 'PT1H30M');
    assert.equal(formatIsoDuration(1_500), 'PT1.5S');
  });
});

describe('aws:eks:pod targets', () => {
  const recommendation = { action: 'aws:eks:pod-delete', parameters: { kubernetesServiceAccount: 'fis-sa' } };
  test(
    'are selected by target parameters only, as FIS requires: tags ' +
      'and ARNs are refused, the four parameters required',
    () => {
      assert.throws(
        () =>
          buildExperimentTemplate(recommendation, {
            roleArn: ROLE,
            stopConditionArn: ALARM,
            tags: { app: 'checkout' },
          }),
        /target_config\.tags: aws:eks:pod targets are selected by target parameters only \(clusterIdentifier, namespace, selectorType, selectorValue\), never by ARN or tag/,
      );
      assert.throws(
        () =>
          buildExperimentTemplate(recommendation, {
            roleArn: ROLE,
            stopConditionArn: ALARM,
            resourceArns: ['arn:aws:eks:us-east-1:123456789012:pod/x'],
          }),
        /target_config\.resourceArns: aws:eks:pod targets are selected by target parameters only/,
      );
      assert.throws(
        () =>
          buildExperimentTemplate(recommendation, {
            roleArn: ROLE,
            stopConditionArn: ALARM,
            parameters: { clusterIdentifier: 'prod' },
          }),
        /target_config\.parameters: aws:eks:pod targets need namespace, selectorType, selectorValue \(given: clusterIdentifier\)/,
      );
      const { template, warnings } = buildExperimentTemplate(recommendation, {
        roleArn: ROLE,
        stopConditionArn: ALARM,
        parameters: { ...EKS_POD_TARGET, selectorType: 'label' },
      });
      assert.deepEqual(Object.values(template.targets!)[0]!.parameters, { ...EKS_POD_TARGET, selectorType: 'label' });
      assert.ok(
        warnings.some((w) => /selectorType: "label" is not one of labelSelector, deploymentName, podName/.test(w)),
        warnings.join('\n'),
      );
    },
  );
});
