/**
 * What each FIS action is evidence for: the failure modes it reproduces (weighted) and the
 * services it acts on. recommend.ts scores a finding against these.
 *
 * - `services`: the action is chosen only when the finding names one of them (or they are among
 *   the plausible platforms of a finding that names none); empty for actions on the network or
 *   the account as a whole (`generic`), which any finding may call for.
 * - `variants`: aws:ssm:send-command runs whichever SSM document fits (CPU, memory, I/O, network
 *   faults on EC2 instances); each variant scores on its own and the best one is recommended.
 * - `default`: the action offered when the finding names the service and no failure of it.
 * - `note`: said with the recommendation, when the action stands in for a fault FIS lacks.
 */
export interface Variant {
  concepts: Readonly<Record<string, number>>;
  /** The SSM document the variant runs (aws:ssm:send-command). */
  document?: string;
}

export interface Profile {
  concepts: Readonly<Record<string, number>>;
  services: readonly string[];
  generic?: boolean;
  duration?: string;
  variants?: readonly Variant[];
  default?: boolean;
  note?: Readonly<Record<string, string>>;
}

/** The workload's own network faults, alike on every compute platform. */
const LATENCY = { latency: 4, slo_latency: 2, timeout: 1, network: 0.5 };
const PACKET_LOSS = { packet_loss: 4.5, network: 0.5 };
const BLACKHOLE = { connectivity: 3, timeout: 1.5, port: 1 };

export const PROFILES: Readonly<Record<string, Profile>> = {
  'aws:fis:inject-api-internal-error': { concepts: { api_error: 3, error: 0.5 }, services: ['awsapi'], default: true },
  'aws:fis:inject-api-throttle-error': { concepts: { throttle: 3.5 }, services: ['awsapi'] },
  'aws:fis:inject-api-unavailable-error': { concepts: { unavailable: 3.5 }, services: ['awsapi'] },
  'aws:arc:start-zonal-autoshift': {
    concepts: { zonal_shift: 4, az: 2 },
    services: [],
    generic: true,
    duration: 'PT30M',
  },
  'aws:cloudwatch:assert-alarm-state': { concepts: { alarm: 5 }, services: [], generic: true },
  'aws:dynamodb:global-table-pause-replication': {
    concepts: { replication: 3, region: 1.5 },
    services: ['dynamodb'],
    duration: 'PT10M',
    default: true,
  },
  'aws:dsql:cluster-connection-failure': {
    concepts: { connectivity: 3, timeout: 1 },
    services: ['dsql'],
    default: true,
  },
  'aws:ebs:pause-volume-io': {
    concepts: { io_pause: 4, io: 1, timeout: 1 },
    services: ['ebs'],
    duration: 'PT2M',
    default: true,
  },
  'aws:ebs:volume-io-latency': {
    concepts: { io_latency: 4, io: 1.5, latency: 1.5, slo_latency: 1 },
    services: ['ebs'],
  },
  'aws:ec2:api-insufficient-instance-capacity-error': {
    concepts: { capacity: 3.5 },
    services: ['ec2', 'awsapi'],
    duration: 'PT10M',
  },
  'aws:ec2:asg-insufficient-instance-capacity-error': {
    concepts: { capacity: 3, scaling: 2 },
    services: ['ec2'],
    duration: 'PT10M',
  },
  'aws:ec2:reboot-instances': { concepts: { reboot: 3 }, services: ['ec2'] },
  'aws:ec2:send-spot-instance-interruptions': { concepts: { spot: 4 }, services: ['ec2'] },
  'aws:ec2:stop-instances': { concepts: { stop: 3, terminate: 1, az: 0.5 }, services: ['ec2'], default: true },
  'aws:ec2:terminate-instances': { concepts: { terminate: 3.5 }, services: ['ec2'] },
  'aws:ecs:drain-container-instances': { concepts: { drain: 4 }, services: ['ecs'] },
  'aws:ecs:stop-task': {
    concepts: { crash: 1.5, terminate: 2, stop: 2, reboot: 1.5, memory: 1.5 },
    services: ['ecs'],
    default: true,
    note: { memory: 'FIS has no memory stress for ECS tasks: an OOM kill ends the task, which stop-task reproduces' },
  },
  'aws:ecs:task-cpu-stress': { concepts: { cpu: 4 }, services: ['ecs'] },
  'aws:ecs:task-io-stress': { concepts: { io: 3 }, services: ['ecs'] },
  'aws:ecs:task-kill-process': {
    concepts: { crash: 2.5, process: 2, memory: 1 },
    services: ['ecs'],
    note: {
      memory:
        'FIS has no memory stress for ECS tasks: the OOM killer kills a process, which task-kill-process reproduces',
    },
  },
  'aws:ecs:task-network-blackhole-port': { concepts: BLACKHOLE, services: ['ecs'] },
  'aws:ecs:task-network-latency': { concepts: LATENCY, services: ['ecs'] },
  'aws:ecs:task-network-packet-loss': { concepts: PACKET_LOSS, services: ['ecs'] },
  'aws:eks:inject-kubernetes-custom-resource': {
    concepts: { custom_resource: 5, dns: 4 },
    services: ['eks'],
    note: { dns: 'FIS has no DNS action: a Chaos Mesh DNSChaos resource, injected by FIS, makes lookups fail' },
  },
  'aws:eks:pod-cpu-stress': { concepts: { cpu: 4 }, services: ['eks'] },
  'aws:eks:pod-delete': {
    concepts: { pod_loss: 4, crash: 1.5, terminate: 1, reboot: 1 },
    services: ['eks'],
    default: true,
  },
  'aws:eks:pod-io-stress': { concepts: { io: 3 }, services: ['eks'] },
  'aws:eks:pod-memory-stress': { concepts: { memory: 4 }, services: ['eks'] },
  'aws:eks:pod-network-blackhole-port': { concepts: BLACKHOLE, services: ['eks'] },
  'aws:eks:pod-network-latency': { concepts: LATENCY, services: ['eks'] },
  'aws:eks:pod-network-packet-loss': { concepts: PACKET_LOSS, services: ['eks'] },
  'aws:eks:terminate-nodegroup-instances': { concepts: { nodegroup: 3, terminate: 3 }, services: ['eks'] },
  'aws:elasticache:replicationgroup-interrupt-az-power': {
    concepts: { az: 3, failover: 2, connectivity: 1.5, terminate: 1 },
    services: ['elasticache'],
    default: true,
  },
  'aws:kinesis:stream-provisioned-throughput-exception': {
    concepts: { throughput_exceeded: 4, throttle: 3, backlog: 2.5 },
    services: ['kinesis'],
    default: true,
  },
  'aws:kinesis:stream-expired-iterator-exception': {
    concepts: { expired_iterator: 5, backlog: 2 },
    services: ['kinesis'],
  },
  'aws:lambda:invocation-add-delay': {
    concepts: { cold_start: 4, latency: 3, slo_latency: 1.5, timeout: 1 },
    services: ['lambda'],
  },
  'aws:lambda:invocation-error': {
    concepts: { invocation_error: 4, error: 1.5, api_error: 1, crash: 1 },
    services: ['lambda'],
    default: true,
  },
  'aws:lambda:invocation-http-integration-response': {
    concepts: { http_status: 4, api_error: 1 },
    services: ['lambda'],
  },
  'aws:memorydb:multi-region-cluster-pause-replication': {
    concepts: { replication: 3, region: 1.5 },
    services: ['memorydb'],
    duration: 'PT10M',
    default: true,
  },
  'aws:network:disrupt-connectivity': {
    concepts: { connectivity: 3, az: 1.5, network: 1, timeout: 0.5 },
    services: ['network', 's3', 'dynamodb'],
    generic: true,
  },
  'aws:network:route-table-disrupt-cross-region-connectivity': {
    concepts: { region: 3.5, connectivity: 1.5 },
    services: ['network'],
    generic: true,
  },
  'aws:network:transit-gateway-disrupt-cross-region-connectivity': {
    concepts: { transit_gateway: 5, region: 1.5, connectivity: 1 },
    services: ['network'],
    generic: true,
  },
  'aws:network:disrupt-vpc-endpoint': {
    concepts: { vpc_endpoint: 5, connectivity: 1.5 },
    services: ['network'],
    generic: true,
  },
  'aws:rds:failover-db-cluster': {
    concepts: { failover: 4, connectivity: 1.5, az: 1, reboot: 0.5 },
    services: ['rds'],
  },
  'aws:rds:reboot-db-instances': {
    concepts: { reboot: 3.5, failover: 2, connectivity: 1.6, replication: 1 },
    services: ['rds'],
    default: true,
  },
  'aws:s3:bucket-pause-replication': {
    concepts: { replication: 3.5, region: 1 },
    services: ['s3'],
    duration: 'PT10M',
    default: true,
  },
  'aws:ssm:send-command': {
    concepts: {},
    services: ['ec2'],
    variants: [
      { concepts: { ssm: 4 } },
      { concepts: { cpu: 4 }, document: 'AWSFIS-Run-CPU-Stress' },
      { concepts: { memory: 4 }, document: 'AWSFIS-Run-Memory-Stress' },
      { concepts: { io: 3 }, document: 'AWSFIS-Run-IO-Stress' },
      { concepts: LATENCY, document: 'AWSFIS-Run-Network-Latency' },
      { concepts: PACKET_LOSS, document: 'AWSFIS-Run-Network-Packet-Loss' },
      { concepts: BLACKHOLE, document: 'AWSFIS-Run-Network-Blackhole-Port' },
      { concepts: { crash: 2.5, process: 2 }, document: 'AWSFIS-Run-Kill-Process' },
    ],
  },
  'aws:ssm:start-automation-execution': { concepts: { automation: 3 }, services: [], generic: true },
  'aws:directconnect:virtual-interface-disconnect': {
    concepts: { direct_connect: 5, connectivity: 1 },
    services: ['network'],
    generic: true,
    duration: 'PT10M',
  },
};
