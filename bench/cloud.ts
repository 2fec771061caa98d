/**
 * FIS recommendations benchmark: on the judged findings of test/fixtures/cloud/findings.ts, side
 * by side in one run,
 * - faultline's recommender (tokenized phrases, service detection, ranking);
 * - fis-recommender-mcp's matching at HEAD 9c6dceb: every one of its five keywords that is a
 *   substring of the lower-cased JSON dump of the finding, in table order, no ranking —
 *   re-expressed here from that behaviour.
 * For each: top-1 and top-3 accuracy, duplicates per finding, and the share of recommended
 * actions whose template passes the catalog validator (fis-recommender's templates always use
 * target key Instances, resource type aws:ec2:instance and a `duration` parameter;
 * ours use the action's own). Also the mean time per recommendation.
 *
 * Run: npx tsc -p . && node dist/bench/cloud.js
 */
import { buildExperimentTemplate, recommendExperiments } from '../src/cloud/index.js';
import { JUDGED_FINDINGS } from '../test/fixtures/cloud/findings.js';
import { withOpenParametersSet } from '../test/fixtures/cloud/fis-sets.js';

const TARGET = {
  roleArn: 'arn:aws:iam::123456789012:role/fis',
  stopConditionArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:slo',
  tags: { app: 'x' },
};

/** fis-recommender's HEAD table (keyword, action, duration). */
const SUBSTRING_TABLE: Array<[string, string, string]> = [
  ['network', 'aws:network:disrupt-connectivity', 'PT5M'],
  ['latency', 'aws:network:disrupt-connectivity', 'PT10M'],
  ['database', 'aws:rds:reboot-db-instances', 'PT2M'],
  ['cpu', 'aws:ec2:stop-instances', 'PT3M'],
  ['lambda', 'aws:lambda:invocation-error', 'PT5M'],
];

function substringRecommend(finding: string): Array<{ action: string; duration: string }> {
  const dumped = JSON.stringify({ summary: finding }).toLowerCase();
  return SUBSTRING_TABLE.filter(([keyword]) => dumped.includes(keyword)).map(([, action, duration]) => ({
    action,
    duration,
  }));
}

function templateValid(build: () => unknown): boolean {
  try {
    build();
    return true;
  } catch {
    return false;
  }
}

interface Figures {
  top1: number;
  top3: number;
  duplicates: number;
  valid: number;
  total: number;
}

function score(lists: string[][], validity: boolean[]): Figures {
  let top1 = 0;
  let top3 = 0;
  let duplicates = 0;
  lists.forEach((ids, index) => {
    const expect = JUDGED_FINDINGS[index]!.expect;
    if (expect.includes(ids[0] ?? '')) top1++;
    if (ids.slice(0, 3).some((id) => expect.includes(id))) top3++;
    duplicates += ids.length - new Set(ids).size;
  });
  return { top1, top3, duplicates, valid: validity.filter(Boolean).length, total: validity.length };
}

const n = JUDGED_FINDINGS.length;
// Warm both (JIT, the phrase cache), then time a pass each.
for (const j of JUDGED_FINDINGS) {
  recommendExperiments(j.finding, { resources: j.resources ?? [] });
  substringRecommend(j.finding);
}
let started = performance.now();
const ours = JUDGED_FINDINGS.map(
  (j) => recommendExperiments(j.finding, { resources: j.resources ?? [] }).recommendations,
);
const oursMs = (performance.now() - started) / n;
function selectionFor(resourceType: string | null): Record<string, unknown> {
  if (resourceType === 'aws:iam:role') return { tags: undefined, resourceArns: ['arn:aws:iam::123456789012:role/app'] };
  if (resourceType === 'aws:eks:cluster')
    return { tags: undefined, resourceArns: ['arn:aws:eks:us-east-1:123456789012:cluster/c'] };
  // FIS selects pods by target parameters only.
  if (resourceType === 'aws:eks:pod')
    return {
      tags: undefined,
      parameters: {
        clusterIdentifier: 'prod',
        namespace: 'shop',
        selectorType: 'labelSelector',
        selectorValue: 'app=checkout',
      },
    };
  return {};
}
const oursValidity = ours
  .flat()
  .map(
    (r) =>
      r.parametersToSet.length === 0 &&
      templateValid(() => buildExperimentTemplate(r, { ...TARGET, ...selectionFor(r.targetResourceType) })),
  );
// The rest name what they still need (a service account, an SSM document, API operations): with
// those given (any well-formed value), every one must pass.
const FILL: Record<string, string> = {
  kubernetesServiceAccount: 'fis-sa',
  documentArn: 'arn:aws:ssm:us-east-1::document/AWSFIS-Run-CPU-Stress',
  operations: 'DescribeInstances',
  availabilityZoneIdentifiers: 'use1-az1',
  region: 'us-west-2',
  processName: 'app',
  managedResourceTypes: 'ASG',
  availabilityZoneIdentifier: 'use1-az1',
  alarmArns: TARGET.stopConditionArn,
  alarmStates: 'ALARM',
  kubernetesApiVersion: 'chaos-mesh.org/v1alpha1',
  kubernetesKind: 'NetworkChaos',
  kubernetesNamespace: 'default',
  kubernetesSpec: '{}',
  documentParameters: '{}',
  port: '8080',
  trafficType: 'ingress',
  protocol: 'tcp',
  'documentParameters.Port': '8080',
  'documentParameters.ProcessName': 'app',
};
const oursFilled = ours
  .flat()
  .map((r) =>
    templateValid(() =>
      buildExperimentTemplate(
        { ...r, parameters: withOpenParametersSet(r.parameters, r.parametersToSet, (p) => FILL[p] ?? 'x') },
        { ...TARGET, ...selectionFor(r.targetResourceType) },
      ),
    ),
  );
started = performance.now();
const theirs = JUDGED_FINDINGS.map((j) => substringRecommend(j.finding));
const theirsMs = (performance.now() - started) / n;
// Their template: target key Instances on aws:ec2:instance, parameters {duration}. Our validator
// refuses the resource type for every action but ec2's; we keep their key and see if it passes.
const theirsValidity = theirs
  .flat()
  .map((r) =>
    templateValid(() =>
      buildExperimentTemplate(
        { action: r.action, parameters: { duration: r.duration } },
        { ...TARGET, resourceType: 'aws:ec2:instance' },
      ),
    ),
  );

const a = score(
  ours.map((list) => list.map((r) => r.action)),
  oursValidity,
);
const b = score(
  theirs.map((list) => list.map((r) => r.action)),
  theirsValidity,
);
const pct = (x: number, of: number) => (of === 0 ? '-' : `${((100 * x) / of).toFixed(1)}%`);
console.log(`FIS recommendations on ${n} judged findings`);
console.log('| | faultline | substring table (fis-recommender HEAD) | ratio |');
console.log('|---|---|---|---|');
console.log(
  `| top-1 accuracy | ${pct(a.top1, n)} | ${pct(b.top1, n)} | ${b.top1 ? (a.top1 / b.top1).toFixed(1) : '∞'}× |`,
);
console.log(
  `| top-3 accuracy | ${pct(a.top3, n)} | ${pct(b.top3, n)} | ${b.top3 ? (a.top3 / b.top3).toFixed(1) : '∞'}× |`,
);
console.log(
  `| findings with no recommendation | ${ours.filter((l) => l.length === 0).length} ` +
    `| ${theirs.filter((l) => l.length === 0).length} | |`,
);
console.log(`| duplicate actions (total) | ${a.duplicates} | ${b.duplicates} | |`);
console.log(
  `| templates valid as recommended (no open parameter) | ${pct(a.valid, a.total)} ` +
    `of ${a.total} | ${pct(b.valid, b.total)} of ${b.total} | |`,
);
console.log(
  `| … valid once the named open parameters are given | ${pct(oursFilled.filter(Boolean).length, oursFilled.length)} ` +
    `| ${pct(b.valid, b.total)} (none named) | |`,
);
console.log(
  `| mean time per finding | ${oursMs.toFixed(3)} ms | ${theirsMs.toFixed(3)} ` +
    `ms | ${(oursMs / Math.max(theirsMs, 1e-6)).toFixed(0)}× |`,
);
