/**
 * The words findings use, grouped: failure modes ("concepts") and AWS services. Each entry is a
 * phrase of normalised tokens (see tokenize in recommend.ts), so "packet loss" matches the two
 * words in sequence and never a substring of another word. Weights say how strongly a phrase
 * points at its group (a bare "network" or "container" points weakly).
 */

export type Phrases = ReadonlyArray<readonly [phrase: string, weight: number]>;

export const CONCEPTS: Record<string, Phrases> = {
  latency: [['latency', 1], ['slow', 0.6], ['slowness', 0.6], ['slowdown', 0.6], ['slowed', 0.6], ['delay', 1], ['delayed', 1], ['lag', 1], ['laggy', 1], ['sluggish', 1], ['response time', 1], ['rtt', 1], ['p99', 0.7], ['jitter', 1]],
  timeout: [['timeout', 1], ['timed out', 1], ['time out', 1], ['hang', 0.8], ['hung', 0.8], ['stall', 0.8], ['stalled', 0.8], ['deadline exceeded', 1]],
  connectivity: [
    ['connectivity', 1], ['unreachable', 1], ['partition', 1], ['disconnect', 1], ['disconnected', 1], ['connection refused', 1],
    ['connection failure', 1], ['connection error', 1], ['connection fail', 1], ['cannot connect', 1], ['could not reach', 1], ['cannot reach', 1], ['can t reach', 1], ['unable to reach', 1], ['not reachable', 1], ['could not connect', 1], ['unable to connect', 1],
    ['connection reset', 1], ['network outage', 1], ['isolated', 0.8], ['lost connection', 1], ['connection lost', 1], ['connection drop', 1],
    ['blackhole', 1], ['black hole', 1], ['network failure', 1], ['cut off', 0.8], ['no route', 1], ['dependency down', 0.8], ['dependency outage', 1],
  ],
  network: [['network', 0.6], ['networking', 0.6]],
  packet_loss: [['packet loss', 1], ['packet drop', 1], ['dropped packet', 1], ['lossy', 1], ['retransmission', 1], ['retransmit', 1], ['packet', 0.5]],
  cpu: [['cpu', 1], ['processor', 1], ['cpu utilization', 1], ['compute saturation', 1], ['cpu bound', 1], ['cpu spike', 1]],
  memory: [['memory', 1], ['oom', 1], ['out of memory', 1], ['oomkilled', 1], ['heap', 0.8], ['memory leak', 1], ['memory pressure', 1], ['swap', 0.6]],
  io: [['io', 1], ['i o', 1], ['iops', 1], ['disk', 1], ['storage', 0.6], ['read latency', 1], ['write latency', 1], ['fsync', 1], ['throughput of the disk', 1]],
  io_pause: [['disk hang', 1], ['io freeze', 1], ['io hang', 1], ['stuck io', 1], ['io stuck', 1], ['unresponsive volume', 1], ['volume unresponsive', 1], ['io pause', 1], ['io stall', 1], ['disk stall', 1], ['disk stalled', 1]],
  throttle: [['throttle', 1], ['throttled', 1], ['throttling', 1], ['rate limit', 1], ['rate limited', 1], ['rate exceeded', 1], ['429', 1], ['too many request', 1], ['throttlingexception', 1], ['requestlimitexceeded', 1]],
  api_error: [['internal error', 1], ['internal server error', 1], ['500', 0.8], ['5xx', 1], ['server error', 0.8], ['api error', 1], ['api failure', 1], ['internalerror', 1]],
  unavailable: [['unavailable', 1], ['503', 1], ['service unavailable', 1], ['serviceunavailable', 1]],
  failover: [['failover', 1], ['fail over', 1], ['failed over', 1], ['primary failure', 1], ['writer failure', 1], ['promotion', 0.8], ['promoted', 0.8], ['multi az', 0.8], ['standby', 0.8], ['writer', 0.5], ['primary', 0.5]],
  reboot: [['reboot', 1], ['rebooted', 1], ['restart', 0.8], ['restarted', 0.8], ['restarting', 0.8], ['bounce', 0.6]],
  crash: [['crash', 1], ['crashed', 1], ['killed', 0.8], ['process died', 1], ['segfault', 1], ['process exit', 1], ['sigkill', 1], ['sigterm', 1], ['exited', 0.6]],
  process: [['process', 1], ['daemon', 0.8], ['sidecar', 0.8], ['agent process', 1]],
  terminate: [['terminate', 1], ['terminated', 1], ['termination', 1], ['instance loss', 1], ['host failure', 1], ['node failure', 1], ['node loss', 1], ['lost node', 1], ['instance failure', 1], ['instance retired', 1], ['lost instance', 1], ['loss of instance', 1]],
  stop: [['stop', 0.8], ['stopped', 0.8], ['shutdown', 0.8], ['shut down', 0.8], ['stopping', 0.8]],
  az: [['availability zone', 1], ['az', 1], ['zonal', 1], ['zone outage', 1], ['zone failure', 1], ['single zone', 1], ['zone', 0.6]],
  zonal_shift: [['zonal shift', 1], ['autoshift', 1], ['arc', 0.8], ['shift traffic away', 1]],
  region: [['cross region', 1], ['region outage', 1], ['regional outage', 1], ['multi region', 1], ['another region', 1], ['secondary region', 1], ['disaster recovery', 1], ['dr', 0.6], ['region', 0.6], ['inter region', 1]],
  replication: [['replication', 1], ['replica lag', 1], ['replication lag', 1], ['replicate', 1], ['replicated', 1], ['global table', 0.8], ['replica', 0.5]],
  capacity: [['insufficient capacity', 1], ['insufficient instance capacity', 1], ['insufficientinstancecapacity', 1], ['ice', 0.8], ['capacity error', 1], ['no capacity', 1], ['capacity shortage', 1], ['capacity', 0.5], ['could not launch', 1], ['launch failure', 1], ['failed to launch', 1]],
  scaling: [['autoscaling', 1], ['auto scaling', 1], ['scale out', 1], ['scaling', 0.8], ['asg', 1], ['scale up', 0.8]],
  spot: [['spot', 1], ['spot interruption', 1], ['reclaimed', 0.8], ['interruption notice', 1], ['interrupted', 0.6]],
  drain: [['drain', 1], ['draining', 1], ['drained', 1], ['container instance', 0.8]],
  pod_loss: [['pod eviction', 1], ['evicted', 1], ['eviction', 1], ['pod deleted', 1], ['pod restart', 1], ['pod crash', 1], ['crashloopbackoff', 1], ['pod killed', 1], ['reschedule', 0.8], ['rescheduled', 0.8], ['pod failure', 1], ['pod disappear', 1], ['pod deletion', 1]],
  nodegroup: [['nodegroup', 1], ['node group', 1], ['worker node', 1], ['node', 0.5]],
  invocation_error: [['invocation error', 1], ['function error', 1], ['lambda error', 1], ['handler error', 1], ['invocation fail', 1], ['failed invocation', 1], ['exception', 0.6]],
  error: [['error', 0.5], ['failure', 0.4], ['fail', 0.3], ['failing', 0.3], ['failed', 0.3]],
  cold_start: [['cold start', 1], ['init duration', 1], ['startup delay', 1], ['startup latency', 1], ['slow start', 1], ['initialization', 0.6], ['startup', 0.6]],
  http_status: [['status code', 1], ['api gateway', 1], ['502', 1], ['504', 0.8], ['bad gateway', 1], ['gateway timeout', 0.8], ['alb', 0.8], ['load balancer', 0.6], ['http integration', 1], ['http response', 0.8]],
  throughput_exceeded: [['provisioned throughput', 1], ['throughput exceeded', 1], ['provisionedthroughputexceededexception', 1], ['shard limit', 1], ['hot shard', 1], ['write throughput', 0.8], ['throughput', 0.5]],
  expired_iterator: [['expired iterator', 1], ['expirediteratorexception', 1], ['iterator expired', 1], ['iterator age', 1], ['shard iterator', 1], ['iterator', 0.8]],
  vpc_endpoint: [['vpc endpoint', 1], ['privatelink', 1], ['private link', 1], ['interface endpoint', 1], ['gateway endpoint', 1], ['endpoint', 0.4]],
  transit_gateway: [['transit gateway', 1], ['tgw', 1]],
  direct_connect: [['direct connect', 1], ['directconnect', 1], ['virtual interface', 1], ['on premise', 0.8], ['on prem', 0.8], ['hybrid', 0.5], ['dx', 0.8]],
  alarm: [['alarm', 0.7], ['alert', 0.6], ['alerting', 0.6], ['did not fire', 1], ['didn t fire', 1], ['never fired', 1], ['not triggered', 1], ['monitoring', 0.5], ['alarm state', 1]],
  ssm: [['ssm', 1], ['ssm document', 1], ['run command', 1], ['custom script', 0.8], ['automation document', 1], ['runbook', 0.8]],
  automation: [['automation', 1], ['automation document', 1], ['runbook', 0.8]],
  custom_resource: [['chaos mesh', 1], ['litmus', 1], ['custom resource', 1], ['chaosmesh', 1], ['litmuschaos', 1]],
  port: [['port', 0.6]],
};

/** Services (resource families) a finding mentions. */
export const SERVICES: Record<string, Phrases> = {
  rds: [['rds', 1], ['aurora', 1], ['postgres', 1], ['postgresql', 1], ['mysql', 1], ['mariadb', 1], ['sql server', 1], ['database', 0.8], ['db', 0.8], ['db instance', 1], ['db cluster', 1], ['read replica', 0.8]],
  dsql: [['dsql', 1.5], ['aurora dsql', 1.5]],
  dynamodb: [['dynamodb', 1.5], ['dynamo', 1.5], ['ddb', 1.5]],
  eks: [['eks', 1.5], ['kubernetes', 1.2], ['k8s', 1.2], ['pod', 1], ['kubelet', 1], ['nodegroup', 1], ['node group', 1], ['helm', 0.8], ['container', 0.4]],
  ecs: [['ecs', 1.5], ['fargate', 1.2], ['task', 0.8], ['container', 0.4], ['container instance', 1], ['ecs service', 1.5]],
  lambda: [['lambda', 1.5], ['function', 0.6], ['serverless', 1], ['cold start', 0.8]],
  ec2: [['ec2', 1.5], ['instance', 0.7], ['vm', 1], ['virtual machine', 1], ['host', 0.5], ['spot', 1], ['asg', 1], ['auto scaling group', 1], ['autoscaling group', 1], ['autoscaling', 0.6], ['auto scaling', 0.6], ['ami', 0.8], ['server', 0.3]],
  ebs: [['ebs', 1.5], ['volume', 0.8], ['disk', 0.8], ['iops', 0.8], ['gp3', 1], ['gp2', 1], ['io2', 1], ['block storage', 1]],
  s3: [['s3', 1.5], ['bucket', 1], ['object storage', 1]],
  kinesis: [['kinesis', 1.5], ['stream', 0.6], ['shard', 0.8], ['data stream', 0.8]],
  elasticache: [['elasticache', 1.5], ['redis', 1], ['memcached', 1], ['valkey', 1], ['cache', 0.7]],
  memorydb: [['memorydb', 1.5], ['memory db', 1.5]],
  network: [['subnet', 1], ['vpc', 0.8], ['nat gateway', 1], ['route table', 1]],
  awsapi: [['aws api', 1.2], ['api call', 0.8], ['sdk', 0.8], ['ec2 api', 1.5], ['kinesis api', 1.5], ['boto', 0.8], ['boto3', 0.8], ['control plane', 0.6], ['describeinstances', 1.5], ['runinstances', 1.5]],
};
