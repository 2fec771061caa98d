/**
 * The words findings use, grouped: failure modes ("concepts") and AWS services. Each entry is a
 * phrase matched on whole normalised words (finding.ts), with a weight for how strongly it points
 * at its group (a bare "network" or "container" points weakly).
 *
 * A service phrase either names the service ("ECS", "Aurora", "pod") or only hints at it
 * ("database", "function", "cache", "instance"): a platform is chosen only when the finding names
 * it; a hint makes it one of the plausible platforms, never the chosen one.
 */

export interface Phrase {
  text: string;
  weight: number;
  /** Service phrases: the phrase names the service (not only hints at it). */
  names?: boolean;
}

const p = (text: string, weight = 1): Phrase => ({ text, weight });
const phrases = (weight: number, ...texts: string[]): Phrase[] => texts.map((text) => p(text, weight));
const names = (weight: number, ...texts: string[]): Phrase[] => texts.map((text) => ({ text, weight, names: true }));

export const CONCEPTS: Record<string, readonly Phrase[]> = {
  latency: [
    ...phrases(
      1,
      'latency',
      'delay',
      'delayed',
      'laggy',
      'sluggish',
      'round trip time',
      'rtt',
      'jitter',
      'network latency',
    ),
    ...phrases(0.6, 'slow', 'slowness', 'slowdown', 'slowed', 'slower', 'lag'),
  ],
  /** Latency as an SLO reads it: a symptom, weaker evidence of a network delay than the word "latency". */
  slo_latency: [
    ...phrases(1, 'p99 latency', 'p95 latency', 'p50 latency', 'latency slo', 'response time'),
    ...phrases(0.7, 'p99', 'p95'),
  ],
  timeout: [
    ...phrases(1, 'timeout', 'timed out', 'time out', 'deadline exceeded', 'stopped responding'),
    ...phrases(0.8, 'hang', 'hung', 'hanging', 'stall', 'stalled', 'unresponsive', 'not responding'),
  ],
  connectivity: [
    ...phrases(
      1,
      'connectivity',
      'unreachable',
      'partition',
      'disconnect',
      'disconnected',
      'connection refused',
      'connection failure',
      'connection failed',
      'connection error',
    ),
    ...phrases(
      1,
      'connection fail',
      'cannot connect',
      'could not reach',
      'cannot reach',
      'can t reach',
      'unable to reach',
      'not reachable',
      'could not connect',
      'unable to connect',
    ),
    ...phrases(
      1,
      'connection reset',
      'network outage',
      'lost connection',
      'connection lost',
      'connection drop',
      'lost connectivity',
      'connectivity loss',
      'cut traffic',
      'traffic cut',
    ),
    ...phrases(1, 'blackhole', 'black hole', 'network failure', 'no route', 'dependency outage'),
    ...phrases(0.8, 'isolated', 'cut off', 'dependency down', 'network error'),
    // A gateway's 502 says its upstream closed or could not be reached.
    ...phrases(0.6, 'bad gateway', '502'),
  ],
  network: phrases(0.6, 'network', 'networking'),
  packet_loss: [
    ...phrases(1, 'packet loss', 'packet drop', 'dropped packet', 'lossy', 'retransmission', 'retransmit'),
    p('packet', 0.5),
  ],
  cpu: phrases(
    1,
    'cpu',
    'processor',
    'cpu utilization',
    'cpu usage',
    'cpu load',
    'compute saturation',
    'cpu saturation',
    'cpu bound',
    'cpu spike',
    'cpu throttling',
    'cpu throttled',
  ),
  memory: [
    ...phrases(1, 'memory', 'oom', 'out of memory', 'oomkilled', 'oom killed', 'memory leak', 'memory pressure'),
    p('heap', 0.8),
    p('swap', 0.6),
  ],
  io: [...phrases(1, 'io', 'i o', 'iops', 'disk', 'fsync', 'disk io'), p('storage', 0.6)],
  io_latency: phrases(
    1,
    'read latency',
    'write latency',
    'io latency',
    'i o latency',
    'disk latency',
    'volume latency',
    'storage latency',
  ),
  io_pause: phrases(
    1,
    'disk hang',
    'io freeze',
    'io hang',
    'stuck io',
    'io stuck',
    'unresponsive volume',
    'volume unresponsive',
    'io pause',
    'io stall',
    'disk stall',
    'disk stalled',
  ),
  throttle: phrases(
    1,
    'throttle',
    'throttled',
    'throttling',
    'rate limit',
    'rate limited',
    'rate exceeded',
    '429',
    'too many request',
    'throttlingexception',
    'requestlimitexceeded',
    'request limit exceeded',
  ),
  api_error: [
    ...phrases(1, 'internal error', 'internal server error', '5xx', 'api error', 'api failure', 'internalerror'),
    ...phrases(0.8, '500', 'server error'),
  ],
  unavailable: phrases(1, 'unavailable', '503', 'service unavailable', 'serviceunavailable'),
  failover: [
    ...phrases(1, 'failover', 'fail over', 'failed over', 'primary failure', 'writer failure'),
    ...phrases(0.8, 'promotion', 'promoted', 'multi az', 'standby'),
    ...phrases(0.5, 'writer', 'primary'),
  ],
  reboot: [
    ...phrases(1, 'reboot', 'rebooted'),
    ...phrases(0.8, 'restart', 'restarted', 'restarting'),
    p('bounce', 0.6),
  ],
  crash: [
    ...phrases(1, 'crash', 'crashed', 'process died', 'segfault', 'process exit', 'sigkill', 'sigterm'),
    p('killed', 0.8),
    p('exited', 0.6),
  ],
  process: [p('process'), ...phrases(0.8, 'daemon', 'sidecar')],
  terminate: phrases(
    1,
    'terminate',
    'terminated',
    'termination',
    'instance loss',
    'host failure',
    'node failure',
    'node loss',
    'lost node',
    'losing node',
    'instance failure',
    'instance retired',
    'lost instance',
    'loss of instance',
    'losing instance',
  ),
  stop: phrases(0.8, 'stop', 'stopped', 'shutdown', 'shut down', 'stopping'),
  az: [
    ...phrases(1, 'availability zone', 'az', 'zonal', 'zone outage', 'zone failure', 'single zone', 'zonal impairment'),
    p('zone', 0.6),
  ],
  zonal_shift: [
    ...phrases(1, 'zonal shift', 'autoshift', 'zonal autoshift', 'shift traffic away', 'shifted away', 'shift away'),
    p('arc', 0.8),
  ],
  region: [
    ...phrases(
      1,
      'cross region',
      'region outage',
      'regional outage',
      'multi region',
      'another region',
      'secondary region',
      'disaster recovery',
      'inter region',
    ),
    ...phrases(0.6, 'dr', 'region', 'regional'),
  ],
  replication: [
    ...phrases(1, 'replication', 'replica lag', 'replication lag', 'replicate', 'replicated'),
    p('global table', 0.8),
    p('replica', 0.5),
  ],
  capacity: [
    ...phrases(
      1,
      'insufficient capacity',
      'insufficient instance capacity',
      'insufficientinstancecapacity',
      'capacity error',
      'no capacity',
      'capacity shortage',
      'ran out of capacity',
      'out of capacity',
    ),
    ...phrases(1, 'could not launch', 'launch failure', 'failed to launch'),
    p('ice', 0.8),
    p('capacity', 0.5),
  ],
  scaling: [...phrases(1, 'autoscaling', 'auto scaling', 'scale out', 'asg'), ...phrases(0.8, 'scaling', 'scale up')],
  spot: [
    ...phrases(1, 'spot', 'spot interruption', 'interruption notice'),
    ...phrases(0.8, 'reclaimed', 'reclaim'),
    p('interrupted', 0.6),
  ],
  drain: [...phrases(1, 'drain', 'draining', 'drained'), p('container instance', 0.8)],
  pod_loss: [
    ...phrases(
      1,
      'pod eviction',
      'evicted',
      'eviction',
      'pod deleted',
      'pod restart',
      'pod crash',
      'crashloopbackoff',
      'pod killed',
      'pod failure',
      'pod disappear',
      'pod deletion',
    ),
    ...phrases(0.8, 'reschedule', 'rescheduled'),
    p('deleted', 0.6),
  ],
  nodegroup: [...phrases(1, 'nodegroup', 'node group', 'worker node'), p('node', 0.5)],
  invocation_error: [
    ...phrases(
      1,
      'invocation error',
      'function error',
      'lambda error',
      'handler error',
      'invocation fail',
      'failed invocation',
    ),
    p('exception', 0.6),
  ],
  error: [p('error', 0.5), p('failure', 0.4), ...phrases(0.3, 'fail', 'failing', 'failed')],
  cold_start: [
    ...phrases(1, 'cold start', 'init duration', 'startup delay', 'startup latency', 'slow start'),
    ...phrases(0.6, 'initialization', 'startup'),
  ],
  http_status: [
    ...phrases(1, 'status code', '502', 'bad gateway', 'http integration', 'http status'),
    ...phrases(0.8, '504', 'gateway timeout', 'http response'),
    p('api gateway', 0.6),
  ],
  throughput_exceeded: [
    ...phrases(
      1,
      'provisioned throughput',
      'throughput exceeded',
      'provisionedthroughputexceededexception',
      'provisionedthroughputexceeded',
      'shard limit',
      'hot shard',
    ),
    p('write throughput', 0.8),
    p('throughput', 0.5),
  ],
  expired_iterator: [
    ...phrases(1, 'expired iterator', 'expirediteratorexception', 'iterator expired', 'iterator age', 'shard iterator'),
    p('iterator', 0.8),
  ],
  /** Consumers or replicas falling behind the stream they read. */
  backlog: [
    ...phrases(1, 'fall behind', 'fell behind', 'falling behind', 'consumer lag', 'iterator age'),
    ...phrases(0.8, 'backlog'),
    ...phrases(0.6, 'lagging', 'backed up'),
    p('behind', 0.5),
  ],
  vpc_endpoint: [
    ...phrases(1, 'vpc endpoint', 'privatelink', 'private link', 'interface endpoint', 'gateway endpoint'),
    p('endpoint', 0.4),
  ],
  transit_gateway: phrases(1, 'transit gateway', 'tgw'),
  direct_connect: [
    ...phrases(1, 'direct connect', 'directconnect', 'virtual interface'),
    ...phrases(0.8, 'on premise', 'on prem', 'dx'),
    p('hybrid', 0.5),
    p('data center', 0.5),
  ],
  alarm: [
    ...phrases(
      1,
      'did not fire',
      'didn t fire',
      'never fired',
      'not triggered',
      'nobody was paged',
      'not paged',
      'stayed in ok',
      'alarm stayed',
      'missed alarm',
      'no alarm fired',
      'alarm state',
    ),
    ...phrases(0.5, 'alarm', 'alert', 'alerting'),
    p('monitoring', 0.4),
  ],
  ssm: [
    ...phrases(1, 'ssm', 'ssm document', 'run command', 'automation document'),
    p('custom script', 0.8),
    p('runbook', 0.8),
  ],
  automation: [...phrases(1, 'automation', 'automation document'), p('runbook', 0.8)],
  custom_resource: phrases(1, 'chaos mesh', 'litmus', 'custom resource', 'chaosmesh', 'litmuschaos'),
  /** Name resolution: FIS has no DNS action; a Chaos Mesh DNSChaos resource on EKS reproduces it. */
  dns: [
    ...phrases(1, 'dns', 'coredns', 'name resolution', 'dns resolution', 'dns lookup', 'nxdomain'),
    p('resolver', 0.8),
    p('lookup', 0.5),
  ],
  port: [p('port', 0.6)],
};

/** A failure mode that two others together describe: a disk (I/O) that hangs is paused I/O. */
export const DERIVED_CONCEPTS: ReadonlyArray<{ from: readonly string[]; to: string }> = [
  { from: ['io', 'timeout'], to: 'io_pause' },
];

/** Services (resource families) a finding names or hints at. */
export const SERVICES: Record<string, readonly Phrase[]> = {
  rds: [
    ...names(1, 'rds', 'aurora', 'amazon rds', 'rds proxy', 'db instance', 'db cluster'),
    ...phrases(1, 'postgres', 'postgresql', 'mysql', 'mariadb', 'sql server'),
    ...phrases(0.8, 'database', 'db', 'read replica'),
  ],
  dsql: names(1, 'dsql', 'aurora dsql'),
  dynamodb: [...names(1, 'dynamodb', 'dynamo', 'ddb'), p('global table', 0.8)],
  eks: [
    ...names(
      1,
      'eks',
      'kubernetes',
      'k8s',
      'pod',
      'kubelet',
      'nodegroup',
      'node group',
      'hpa',
      'coredns',
      'daemonset',
      'statefulset',
    ),
    p('helm', 0.8),
    p('namespace', 0.5),
    p('container', 0.4),
  ],
  ecs: [
    ...names(1, 'ecs', 'fargate', 'ecs service', 'ecs task', 'container instance', 'task definition'),
    p('task', 0.8),
    p('container', 0.4),
  ],
  lambda: [
    ...names(1, 'lambda', 'serverless'),
    ...phrases(0.8, 'invocation', 'cold start'),
    p('function', 0.6),
    p('handler', 0.5),
  ],
  ec2: [
    ...names(
      1,
      'ec2',
      'spot',
      'spot instance',
      'spot fleet',
      'auto scaling group',
      'autoscaling group',
      'asg',
      'ami',
      'ec2 instance',
    ),
    ...phrases(1, 'vm', 'virtual machine'),
    p('instance', 0.7),
    ...phrases(0.6, 'autoscaling', 'auto scaling'),
    ...phrases(0.5, 'host', 'fleet'),
    p('server', 0.3),
  ],
  ebs: [
    ...names(1, 'ebs', 'gp2', 'gp3', 'io1', 'io2', 'st1', 'ebs volume'),
    ...phrases(0.8, 'volume', 'disk', 'iops'),
    p('block storage'),
  ],
  s3: [...names(1, 's3', 'amazon s3'), p('bucket', 0.8), p('object storage')],
  kinesis: [...names(1, 'kinesis', 'kinesis data stream'), ...phrases(0.8, 'shard', 'data stream'), p('stream', 0.6)],
  elasticache: [
    ...names(1, 'elasticache'),
    ...phrases(1, 'redis', 'memcached', 'valkey'),
    p('replication group', 0.8),
    p('cache', 0.6),
  ],
  memorydb: names(1, 'memorydb', 'memory db'),
  network: names(
    1,
    'subnet',
    'vpc',
    'nat gateway',
    'route table',
    'transit gateway',
    'tgw',
    'vpc endpoint',
    'privatelink',
    'private link',
    'direct connect',
    'directconnect',
    'network acl',
    'nacl',
    'security group',
  ),
  awsapi: [
    ...names(
      1,
      'aws api',
      'ec2 api',
      'kinesis api',
      'aws sdk',
      'describeinstances',
      'runinstances',
      'describe instances',
      'run instances',
    ),
    ...phrases(0.8, 'api call', 'sdk', 'boto', 'boto3'),
    p('control plane', 0.6),
  ],
};

/** The compute platforms a failure of the workload itself (latency, CPU, memory, a crash) may be on. */
export const COMPUTE_PLATFORMS = ['ec2', 'ecs', 'eks'] as const;

/** How a platform is called in notes. */
export const PLATFORM_NAMES: Record<string, string> = {
  ec2: 'EC2 instances',
  ecs: 'ECS tasks',
  eks: 'EKS pods',
  lambda: 'Lambda functions',
  rds: 'RDS/Aurora',
  dsql: 'Aurora DSQL',
  dynamodb: 'DynamoDB',
  ebs: 'EBS volumes',
  s3: 'S3',
  kinesis: 'Kinesis',
  elasticache: 'ElastiCache',
  memorydb: 'MemoryDB',
  network: 'the VPC network',
  awsapi: 'AWS API calls',
};
