/**
 * The AWS Fault Injection Service action catalog, as data. The template builder reads each
 * action's target key, resource type and parameters from here and nowhere else, never from a
 * fixed default.
 *
 * Source: the FIS user guide's actions reference and botocore's fis/2020-12-01 service-2.json
 * (current in late 2026; read for this catalog 2026-11-23), through a summary of them: only its
 * facts are encoded. Where it is silent the data says so instead of guessing:
 * - `requiredSource: 'unmarked'`: the reference lists the parameter without R/O; an unmarked
 *   parameter with no default is taken as required (the reference marks the optional ones O).
 * - `rangeSource: 'general'`: the action's own duration range is not stated; FIS's general rule
 *   ("most actions allow 1 minute–12 hours") is enforced at its top and warned about below.
 * - `targetKeySource: 'unverified'`: the reference names the target keys Instances, SpotInstances,
 *   Subnets, DBInstances, Clusters, Tasks, Pods, Nodegroups, Functions, Volumes, Roles, Tables,
 *   Buckets and AutoScalingGroups; any other key here is our best reading, to be checked with
 *   `aws fis get-action --id <action>` before use (the output says so).
 */

export const CATALOG_SOURCE = {
  document: 'AWS FIS user guide, actions reference; botocore fis/2020-12-01 service-2.json',
  current: 'late 2026',
  read: '2026-11-23',
} as const;

export type ParameterKind =
  | 'duration'
  | 'integer'
  | 'number'
  | 'percent'
  | 'enum'
  | 'boolean'
  | 'string'
  | 'json'
  | 'list'
  | 'arn';

export interface ParameterSpec {
  name: string;
  kind: ParameterKind;
  required: boolean;
  /** How `required` was read: the reference marks it R/O, or it is unmarked (see the header). */
  requiredSource: 'marked' | 'unmarked';
  /** Default value as FIS documents it (strings, as template parameters are). */
  default?: string;
  /** Inclusive bounds: milliseconds for durations, the number itself otherwise. */
  min?: number;
  max?: number;
  rangeSource?: 'action' | 'general' | 'none';
  values?: readonly string[];
  unit?: string;
  note?: string;
}

export interface FisAction {
  id: string;
  /** The failure the action reproduces, in a line. */
  failure: string;
  /** null: the action takes no target. */
  resourceType: string | null;
  targetKey: string | null;
  targetKeySource: 'reference' | 'unverified' | 'none';
  /** How targets may be selected, when the reference restricts it. */
  selection?: 'arns-only' | 'tags-only' | 'single-arn';
  parameters: readonly ParameterSpec[];
  notes?: readonly string[];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** FIS's general rule for durations, where an action's own range is not known. */
const GENERAL_DURATION = { min: MINUTE, max: 12 * HOUR, rangeSource: 'general' as const };

// Small builders keep the table below readable; each returns plain data.
function duration(name = 'duration', options: Partial<ParameterSpec> = {}): ParameterSpec {
  return {
    name,
    kind: 'duration',
    required: true,
    requiredSource: 'unmarked',
    unit: 'ISO 8601 duration',
    ...GENERAL_DURATION,
    ...options,
  };
}
function required(name: string, kind: ParameterKind, options: Partial<ParameterSpec> = {}): ParameterSpec {
  return { name, kind, required: true, requiredSource: 'unmarked', rangeSource: 'none', ...options };
}
function optional(name: string, kind: ParameterKind, options: Partial<ParameterSpec> = {}): ParameterSpec {
  return { name, kind, required: false, requiredSource: 'marked', rangeSource: 'none', ...options };
}
const percent1to100 = { min: 1, max: 100, rangeSource: 'action' as const, unit: '%' };
const anyPercent = { min: 0, max: 100, unit: '%', note: 'a percentage; the reference states no narrower range' };

const apiFault = (kind: string, failure: string): FisAction => ({
  id: `aws:fis:inject-api-${kind}`,
  failure,
  resourceType: 'aws:iam:role',
  targetKey: 'Roles',
  targetKeySource: 'reference',
  parameters: [
    // "The duration, from one minute to 12 hours" (FIS actions reference, aws:fis:inject-api-*).
    duration('duration', { requiredSource: 'marked', rangeSource: 'action' }),
    required('service', 'enum', { requiredSource: 'marked', values: ['ec2', 'kinesis'] }),
    required('percentage', 'integer', { requiredSource: 'marked', ...percent1to100 }),
    required('operations', 'list', {
      requiredSource: 'marked',
      note: 'comma-separated API operation names, e.g. DescribeInstances',
    }),
  ],
  notes: ['Affects the AWS API calls made with the targeted IAM role (the role your application runs as).'],
});

const fisPodParameters: ParameterSpec[] = [
  required('kubernetesServiceAccount', 'string', { note: 'the Kubernetes service account FIS runs its pod as' }),
  optional('fisPodContainerImage', 'string'),
  optional('maxErrorsPercent', 'percent', anyPercent),
  optional('fisPodLabels', 'json'),
  optional('fisPodAnnotations', 'json'),
  optional('fisPodSecurityPolicy', 'string'),
];

const ecsNetworkCommon: ParameterSpec[] = [
  optional('installDependencies', 'boolean'),
  optional('useEcsFaultInjectionEndpoints', 'boolean'),
];

export const FIS_ACTIONS: readonly FisAction[] = [
  apiFault('internal-error', 'AWS API calls fail with an internal error (HTTP 500)'),
  apiFault('throttle-error', 'AWS API calls are throttled (throttling errors)'),
  apiFault('unavailable-error', 'AWS API calls fail with service unavailable (HTTP 503)'),
  {
    id: 'aws:fis:wait',
    failure: 'no failure: waits, to sequence other actions',
    resourceType: null,
    targetKey: null,
    targetKeySource: 'none',
    parameters: [duration('duration', { requiredSource: 'marked' })],
  },
  {
    id: 'aws:arc:start-zonal-autoshift',
    failure: 'an Availability Zone is shifted away from (zonal autoshift of managed resources)',
    resourceType: 'aws:arc:zonal-shift-managed-resource',
    targetKey: 'ManagedResources',
    targetKeySource: 'unverified',
    parameters: [
      duration('duration', { requiredSource: 'marked' }),
      required('availabilityZoneIdentifier', 'string', { requiredSource: 'marked' }),
      required('managedResourceTypes', 'list', {
        values: ['ASG', 'ALB', 'NLB', 'EKS'],
        note: 'reference lists the values without R/O',
      }),
      optional('zonalAutoshiftStatus', 'enum', { values: ['ENABLED', 'DISABLED', 'ANY'], default: 'ENABLED' }),
    ],
  },
  {
    id: 'aws:cloudwatch:assert-alarm-state',
    failure: 'no failure: checks that CloudWatch alarms are in the expected state',
    resourceType: null,
    targetKey: null,
    targetKeySource: 'none',
    parameters: [
      required('alarmArns', 'list', {
        requiredSource: 'marked',
        max: 5,
        note: 'at most 5 alarm ARNs, comma-separated',
      }),
      required('alarmStates', 'list', { requiredSource: 'marked', values: ['OK', 'ALARM', 'INSUFFICIENT_DATA'] }),
    ],
  },
  {
    id: 'aws:dynamodb:global-table-pause-replication',
    failure: 'DynamoDB global table replication to other Regions pauses',
    resourceType: 'aws:dynamodb:global-table',
    targetKey: 'Tables',
    targetKeySource: 'reference',
    parameters: [duration('duration', { requiredSource: 'marked' })],
    notes: ['Multi-Region strongly consistent tables are capped at 5,040 impaired minutes per 7 days.'],
  },
  {
    id: 'aws:dsql:cluster-connection-failure',
    failure: 'connections to an Aurora DSQL cluster fail',
    resourceType: 'aws:dsql:cluster',
    targetKey: 'Clusters',
    targetKeySource: 'unverified',
    parameters: [duration('duration', { requiredSource: 'marked' }), required('percentage', 'integer', percent1to100)],
  },
  {
    id: 'aws:ebs:pause-volume-io',
    failure: 'I/O to an EBS volume stops (the disk hangs)',
    resourceType: 'aws:ec2:ebs-volume',
    targetKey: 'Volumes',
    targetKeySource: 'reference',
    parameters: [duration('duration', { requiredSource: 'marked', min: 1000, max: 12 * HOUR, rangeSource: 'action' })],
  },
  {
    id: 'aws:ebs:volume-io-latency',
    failure: 'EBS volume reads and writes become slow (added I/O latency)',
    resourceType: 'aws:ec2:ebs-volume',
    targetKey: 'Volumes',
    targetKeySource: 'reference',
    parameters: [
      optional('readIOPercentage', 'percent', { ...anyPercent, default: '100' }),
      optional('readIOLatencyMilliseconds', 'integer', { default: '100', unit: 'ms', min: 0 }),
      optional('writeIOPercentage', 'percent', { ...anyPercent, default: '100' }),
      optional('writeIOLatencyMilliseconds', 'integer', { default: '100', unit: 'ms', min: 0 }),
      duration('duration', { min: 1000, max: 12 * HOUR, rangeSource: 'action' }),
    ],
  },
  {
    id: 'aws:ec2:api-insufficient-instance-capacity-error',
    failure: 'EC2 launches fail with InsufficientInstanceCapacity',
    resourceType: 'aws:iam:role',
    targetKey: 'Roles',
    targetKeySource: 'reference',
    selection: 'arns-only',
    parameters: [
      duration(),
      required('availabilityZoneIdentifiers', 'list'),
      required('percentage', 'integer', percent1to100),
    ],
  },
  {
    id: 'aws:ec2:asg-insufficient-instance-capacity-error',
    failure: 'an Auto Scaling group cannot launch instances (insufficient capacity)',
    resourceType: 'aws:ec2:autoscaling-group',
    targetKey: 'AutoScalingGroups',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      required('availabilityZoneIdentifiers', 'list'),
      optional('percentage', 'integer', { ...percent1to100, default: '100' }),
    ],
  },
  {
    id: 'aws:ec2:reboot-instances',
    failure: 'EC2 instances reboot',
    resourceType: 'aws:ec2:instance',
    targetKey: 'Instances',
    targetKeySource: 'reference',
    parameters: [],
  },
  {
    id: 'aws:ec2:send-spot-instance-interruptions',
    failure: 'Spot Instances receive an interruption notice and are interrupted',
    resourceType: 'aws:ec2:spot-instance',
    targetKey: 'SpotInstances',
    targetKeySource: 'reference',
    parameters: [duration('durationBeforeInterruption', { min: 2 * MINUTE, max: 15 * MINUTE, rangeSource: 'action' })],
  },
  {
    id: 'aws:ec2:stop-instances',
    failure: 'EC2 instances stop (and optionally start again after a while)',
    resourceType: 'aws:ec2:instance',
    targetKey: 'Instances',
    targetKeySource: 'reference',
    parameters: [
      duration('startInstancesAfterDuration', {
        required: false,
        requiredSource: 'marked',
        min: MINUTE,
        max: 12 * HOUR,
        rangeSource: 'action',
      }),
      optional('completeIfInstancesTerminated', 'boolean'),
    ],
  },
  {
    id: 'aws:ec2:terminate-instances',
    failure: 'EC2 instances are terminated',
    resourceType: 'aws:ec2:instance',
    targetKey: 'Instances',
    targetKeySource: 'reference',
    parameters: [],
  },
  {
    id: 'aws:ecs:drain-container-instances',
    failure: 'ECS container instances are drained (tasks are moved off them)',
    resourceType: 'aws:ecs:cluster',
    targetKey: 'Clusters',
    targetKeySource: 'reference',
    parameters: [required('drainagePercentage', 'integer', percent1to100), duration()],
  },
  {
    id: 'aws:ecs:stop-task',
    failure: 'ECS tasks are stopped',
    resourceType: 'aws:ecs:task',
    targetKey: 'Tasks',
    targetKeySource: 'reference',
    parameters: [],
  },
  {
    id: 'aws:ecs:task-cpu-stress',
    failure: 'CPU saturation inside ECS tasks',
    resourceType: 'aws:ecs:task',
    targetKey: 'Tasks',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('percent', 'percent', { ...anyPercent, default: '100' }),
      optional('workers', 'integer', { default: '0', min: 0 }),
      optional('installDependencies', 'boolean'),
    ],
  },
  {
    id: 'aws:ecs:task-io-stress',
    failure: 'I/O (disk) stress inside ECS tasks',
    resourceType: 'aws:ecs:task',
    targetKey: 'Tasks',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('percent', 'percent', { ...anyPercent, default: '80' }),
      optional('workers', 'integer', { default: '1', min: 0 }),
      optional('installDependencies', 'boolean'),
    ],
  },
  {
    id: 'aws:ecs:task-kill-process',
    failure: 'a process inside ECS tasks is killed',
    resourceType: 'aws:ecs:task',
    targetKey: 'Tasks',
    targetKeySource: 'reference',
    parameters: [
      required('processName', 'string'),
      optional('signal', 'enum', { values: ['SIGTERM', 'SIGKILL'] }),
      optional('installDependencies', 'boolean'),
    ],
  },
  {
    id: 'aws:ecs:task-network-blackhole-port',
    failure: 'traffic to or from a port of ECS tasks is dropped (connections hang)',
    resourceType: 'aws:ecs:task',
    targetKey: 'Tasks',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      required('port', 'integer', { min: 0, max: 65535, note: 'a TCP/UDP port number' }),
      required('trafficType', 'enum', { values: ['ingress', 'egress'] }),
      optional('protocol', 'enum', { values: ['tcp', 'udp'] }),
      ...ecsNetworkCommon,
    ],
  },
  {
    id: 'aws:ecs:task-network-latency',
    failure: 'network latency on ECS tasks',
    resourceType: 'aws:ecs:task',
    targetKey: 'Tasks',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('delayMilliseconds', 'integer', { default: '200', unit: 'ms', min: 0 }),
      optional('jitterMilliseconds', 'integer', { default: '10', unit: 'ms', min: 0 }),
      optional('flowsPercent', 'percent', anyPercent),
      optional('sources', 'list', { note: 'IPs, CIDRs or domains the fault is limited to' }),
      ...ecsNetworkCommon,
    ],
  },
  {
    id: 'aws:ecs:task-network-packet-loss',
    failure: 'packet loss on ECS tasks',
    resourceType: 'aws:ecs:task',
    targetKey: 'Tasks',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('lossPercent', 'percent', { ...anyPercent, default: '7' }),
      optional('flowsPercent', 'percent', anyPercent),
      optional('sources', 'list'),
      ...ecsNetworkCommon,
    ],
  },
  {
    id: 'aws:eks:inject-kubernetes-custom-resource',
    failure: 'whatever a Chaos Mesh or Litmus custom resource injects in an EKS cluster',
    resourceType: 'aws:eks:cluster',
    targetKey: 'Cluster',
    targetKeySource: 'unverified',
    selection: 'single-arn',
    parameters: [
      required('kubernetesApiVersion', 'enum', { values: ['chaos-mesh.org/v1alpha1', 'litmuschaos.io/v1alpha1'] }),
      required('kubernetesKind', 'string'),
      required('kubernetesNamespace', 'string'),
      required('kubernetesSpec', 'json'),
      duration('maxDuration'),
    ],
  },
  {
    id: 'aws:eks:pod-cpu-stress',
    failure: 'CPU saturation in EKS pods',
    resourceType: 'aws:eks:pod',
    targetKey: 'Pods',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('percent', 'percent', anyPercent),
      optional('workers', 'integer', { min: 0 }),
      ...fisPodParameters,
    ],
  },
  {
    id: 'aws:eks:pod-delete',
    failure: 'EKS pods are deleted',
    resourceType: 'aws:eks:pod',
    targetKey: 'Pods',
    targetKeySource: 'reference',
    parameters: [optional('gracePeriodSeconds', 'integer', { min: 0, unit: 's' }), ...fisPodParameters],
  },
  {
    id: 'aws:eks:pod-io-stress',
    failure: 'I/O (disk) stress in EKS pods',
    resourceType: 'aws:eks:pod',
    targetKey: 'Pods',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('workers', 'integer', { min: 0 }),
      optional('percent', 'percent', anyPercent),
      ...fisPodParameters,
    ],
  },
  {
    id: 'aws:eks:pod-memory-stress',
    failure: 'memory pressure in EKS pods',
    resourceType: 'aws:eks:pod',
    targetKey: 'Pods',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('workers', 'integer', { min: 0 }),
      optional('percent', 'percent', { ...anyPercent, default: '80' }),
      ...fisPodParameters,
    ],
  },
  {
    id: 'aws:eks:pod-network-blackhole-port',
    failure: 'traffic to or from a port of EKS pods is dropped (connections hang)',
    resourceType: 'aws:eks:pod',
    targetKey: 'Pods',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      required('protocol', 'enum', { values: ['tcp', 'udp'] }),
      required('trafficType', 'enum', { values: ['ingress', 'egress'] }),
      required('port', 'integer', { min: 0, max: 65535 }),
      ...fisPodParameters,
    ],
  },
  {
    id: 'aws:eks:pod-network-latency',
    failure: 'network latency on EKS pods',
    resourceType: 'aws:eks:pod',
    targetKey: 'Pods',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('interface', 'string'),
      optional('delayMilliseconds', 'integer', { unit: 'ms', min: 0, note: 'the reference gives no default' }),
      optional('jitterMilliseconds', 'integer', { unit: 'ms', min: 0, note: 'the reference gives no default' }),
      optional('flowsPercent', 'percent', anyPercent),
      optional('sources', 'list'),
      ...fisPodParameters,
    ],
  },
  {
    id: 'aws:eks:pod-network-packet-loss',
    failure: 'packet loss on EKS pods',
    resourceType: 'aws:eks:pod',
    targetKey: 'Pods',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('interface', 'string'),
      optional('lossPercent', 'percent', { ...anyPercent, note: 'the reference gives no default' }),
      optional('flowsPercent', 'percent', anyPercent),
      optional('sources', 'list'),
      ...fisPodParameters,
    ],
  },
  {
    id: 'aws:eks:terminate-nodegroup-instances',
    failure: 'a share of an EKS node group’s instances is terminated',
    resourceType: 'aws:eks:nodegroup',
    targetKey: 'Nodegroups',
    targetKeySource: 'reference',
    parameters: [required('instanceTerminationPercentage', 'integer', percent1to100)],
  },
  {
    id: 'aws:elasticache:replicationgroup-interrupt-az-power',
    failure: 'power is cut to ElastiCache nodes in one Availability Zone',
    resourceType: 'aws:elasticache:replicationgroup',
    targetKey: 'ReplicationGroups',
    targetKeySource: 'unverified',
    parameters: [duration()],
    notes: ['Older id: aws:elasticache:interrupt-cluster-az-power.'],
  },
  {
    id: 'aws:kinesis:stream-provisioned-throughput-exception',
    failure: 'Kinesis calls fail with ProvisionedThroughputExceededException',
    resourceType: 'aws:kinesis:stream',
    targetKey: 'KinesisStreams',
    targetKeySource: 'unverified',
    parameters: [duration(), required('percentage', 'percent', anyPercent)],
  },
  {
    id: 'aws:kinesis:stream-expired-iterator-exception',
    failure: 'Kinesis GetRecords calls fail with ExpiredIteratorException',
    resourceType: 'aws:kinesis:stream',
    targetKey: 'KinesisStreams',
    targetKeySource: 'unverified',
    parameters: [duration(), required('percentage', 'percent', anyPercent)],
  },
  {
    id: 'aws:lambda:invocation-add-delay',
    failure: 'Lambda invocations start late (added start-up delay)',
    resourceType: 'aws:lambda:function',
    targetKey: 'Functions',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('invocationPercentage', 'percent', { ...anyPercent, default: '100' }),
      optional('startupDelayMilliseconds', 'integer', {
        min: 0,
        max: 900_000,
        rangeSource: 'action',
        default: '1000',
        unit: 'ms',
      }),
    ],
  },
  {
    id: 'aws:lambda:invocation-error',
    failure: 'Lambda invocations fail with an error',
    resourceType: 'aws:lambda:function',
    targetKey: 'Functions',
    targetKeySource: 'reference',
    parameters: [
      duration(),
      optional('invocationPercentage', 'percent', anyPercent),
      required('preventExecution', 'boolean'),
    ],
  },
  {
    id: 'aws:lambda:invocation-http-integration-response',
    failure: 'Lambda functions behind an HTTP integration answer with a chosen status code',
    resourceType: 'aws:lambda:function',
    targetKey: 'Functions',
    targetKeySource: 'reference',
    parameters: [
      required('contentTypeHeader', 'string'),
      duration(),
      optional('invocationPercentage', 'percent', anyPercent),
      required('preventExecution', 'boolean'),
      required('statusCode', 'integer', { min: 0, max: 999, rangeSource: 'action', note: '000–999' }),
    ],
  },
  {
    id: 'aws:memorydb:multi-region-cluster-pause-replication',
    failure: 'MemoryDB multi-Region cluster replication pauses',
    resourceType: 'aws:memorydb:multi-region-cluster',
    targetKey: 'MultiRegionClusters',
    targetKeySource: 'unverified',
    parameters: [duration()],
  },
  {
    id: 'aws:network:disrupt-connectivity',
    failure: 'subnets lose network connectivity (all traffic, an AZ, or an AWS service such as S3 or DynamoDB)',
    resourceType: 'aws:ec2:subnet',
    targetKey: 'Subnets',
    targetKeySource: 'reference',
    parameters: [
      required('scope', 'enum', {
        values: ['all', 'availability-zone', 'dynamodb', 'prefix-list', 's3', 's3express', 'vpc'],
      }),
      duration(),
      optional('prefixListIdentifier', 'string', { note: 'required when scope is prefix-list' }),
    ],
  },
  {
    id: 'aws:network:route-table-disrupt-cross-region-connectivity',
    failure: 'subnets lose connectivity to another Region (route tables)',
    resourceType: 'aws:ec2:subnet',
    targetKey: 'Subnets',
    targetKeySource: 'reference',
    parameters: [required('region', 'string'), duration()],
  },
  {
    id: 'aws:network:transit-gateway-disrupt-cross-region-connectivity',
    failure: 'a transit gateway stops carrying traffic to another Region',
    resourceType: 'aws:ec2:transit-gateway',
    targetKey: 'TransitGateways',
    targetKeySource: 'unverified',
    parameters: [required('region', 'string'), duration()],
  },
  {
    id: 'aws:network:disrupt-vpc-endpoint',
    failure: 'a VPC (PrivateLink) endpoint stops carrying traffic',
    resourceType: 'aws:ec2:vpc-endpoint',
    targetKey: 'VPCEndpoints',
    targetKeySource: 'unverified',
    parameters: [duration()],
  },
  {
    id: 'aws:rds:failover-db-cluster',
    failure: 'an Aurora/RDS cluster fails over to a replica',
    resourceType: 'aws:rds:cluster',
    targetKey: 'Clusters',
    targetKeySource: 'reference',
    parameters: [],
  },
  {
    id: 'aws:rds:reboot-db-instances',
    failure: 'RDS DB instances reboot (optionally forcing a Multi-AZ failover)',
    resourceType: 'aws:rds:db',
    targetKey: 'DBInstances',
    targetKeySource: 'reference',
    parameters: [optional('forceFailover', 'boolean')],
  },
  {
    id: 'aws:s3:bucket-pause-replication',
    failure: 'S3 replication from a bucket pauses',
    resourceType: 'aws:s3:bucket',
    targetKey: 'Buckets',
    targetKeySource: 'reference',
    selection: 'tags-only',
    parameters: [
      duration(),
      required('region', 'string'),
      optional('destinationBuckets', 'list'),
      optional('prefixes', 'list'),
    ],
  },
  {
    id: 'aws:ssm:send-command',
    failure:
      'whatever an SSM document runs on EC2 instances (e.g. ' +
      'AWSFIS-Run-CPU-Stress, -IO-Stress, -Kill-Process, network ' +
      'faults)',
    resourceType: 'aws:ec2:instance',
    targetKey: 'Instances',
    targetKeySource: 'reference',
    parameters: [
      required('documentArn', 'arn'),
      optional('documentVersion', 'string'),
      optional('documentParameters', 'json', { note: 'conditional: required by some documents' }),
      duration(),
    ],
  },
  {
    id: 'aws:ssm:start-automation-execution',
    failure: 'whatever an SSM Automation document does',
    resourceType: null,
    targetKey: null,
    targetKeySource: 'none',
    parameters: [
      required('documentArn', 'arn'),
      optional('documentVersion', 'string'),
      required('documentParameters', 'json'),
      duration('maxDuration'),
    ],
  },
  {
    id: 'aws:directconnect:virtual-interface-disconnect',
    failure: 'a Direct Connect virtual interface disconnects',
    resourceType: 'aws:directconnect:virtual-interface',
    targetKey: 'DXVirtualInterfaces',
    targetKeySource: 'unverified',
    parameters: [duration('duration', { min: 10 * MINUTE, max: 12 * HOUR, rangeSource: 'action' })],
  },
];

/**
 * Resource types FIS selects by target parameters only. Source: the FIS user guide's page on the
 * aws:eks:pod actions ("You cannot use resource ARNs or resource tags to identify targets of type
 * aws:eks:pod in experiment templates. You must use the required resource parameters") and its
 * targets page (the parameter names); read 2026-11-23. The catalog's summary only says such types exist.
 */
export interface TargetTypeSpec {
  resourceType: string;
  required: readonly string[];
  optional: readonly string[];
  /** Values the documentation lists for a parameter (others are warned about, not refused). */
  values: Readonly<Record<string, readonly string[]>>;
  source: string;
}

export const PARAMETER_SELECTED_TYPES: Readonly<Record<string, TargetTypeSpec>> = {
  'aws:eks:pod': {
    resourceType: 'aws:eks:pod',
    required: ['clusterIdentifier', 'namespace', 'selectorType', 'selectorValue'],
    optional: ['targetContainerName', 'availabilityZoneIdentifier'],
    values: { selectorType: ['labelSelector', 'deploymentName', 'podName'] },
    source: 'FIS user guide, eks-pod-actions and targets pages (read 2026-11-23)',
  },
};

const BY_ID = new Map(FIS_ACTIONS.map((action) => [action.id, action]));

export function findAction(id: string): FisAction | undefined {
  return BY_ID.get(id.trim());
}

/**
 * The parameter that carries how long an action's fault lasts, which a recommendation's
 * `duration` sets: `duration`, else `maxDuration`, else (aws:ec2:stop-instances)
 * `startInstancesAfterDuration`, how long the instances stay stopped. None for an action that
 * acts once (a reboot, a termination, a failover).
 */
export function durationParameter(action: FisAction): ParameterSpec | undefined {
  return LENGTH_PARAMETERS.map((name) => action.parameters.find((p) => p.name === name)).find((p) => p !== undefined);
}

const LENGTH_PARAMETERS = ['duration', 'maxDuration', 'startInstancesAfterDuration'] as const;
