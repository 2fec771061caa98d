/**
 * PromQL checks in an export: no engine faultline writes for can ask Prometheus the way an
 * experiment does, so each is refused with the engine's own reason (and left out with --partial),
 * never turned into something that means less.
 */
import type { Experiment } from '../model.js';
import type { Refusal } from './index.js';

const REASONS = {
  k6: 'k6 judges its own requests (thresholds on its metrics); it cannot query Prometheus and judge the answer',
  'chaos-mesh':
    "a Chaos Mesh Workflow's StatusCheck only checks an HTTP " +
    "endpoint's status code; it cannot judge a PromQL query's value",
  fis:
    'FIS stops on a CloudWatch alarm, not on a PromQL query; alarm on ' +
    'the metric in CloudWatch and give its ARN as stopConditionArn',
} as const;

export function promqlRefusals(experiment: Experiment, engine: keyof typeof REASONS): Refusal[] {
  const refusals: Refusal[] = [];
  for (const expectation of experiment.expectations)
    if (expectation.kind === 'promql')
      refusals.push({ part: `${expectation.id} (${expectation.title})`, reason: REASONS[engine] });
  for (const [index, rule] of experiment.abort.entries())
    if (rule.kind === 'promql')
      refusals.push({
        part: `abort_when${experiment.abort.length > 1 ? `[${index}]` : ''} (${rule.text})`,
        reason: REASONS[engine],
      });
  return refusals;
}
