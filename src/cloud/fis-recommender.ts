/**
 * fis-recommender-mcp's two tools as its users call them, on faultline's recommender and template
 * builder (nothing calls AWS):
 *
 *   recommendForSeed({id, summary, type, description})
 *     → {recommendations: [{action, duration, description, targets, stopConditions, …}], finding_id, count}
 * templateForSeed({action, duration, description, …}, {roleArn, resourceType, selectionMode, tags, stopConditionArn,
 * …})
 *     → {template, warnings}
 *
 * Its shapes, with what faultline adds after its fields (parameters, parametersToSet, confidence,
 * notes), and its defaults where they differ from fault_create_fis_template's: selectionMode
 * COUNT(1), and a template is built without stopConditionArn (its README's own example has none),
 * the alarm then a placeholder, named in the warnings, to replace before the template is created.
 */
import { InputError } from '../kernel/errors.js';
import { isPlainObject } from '../config-reader.js';
import { recommendExperiments } from './recommend.js';
import { buildExperimentTemplate, type BuiltTemplate } from './template.js';

export interface SeedRecommendation {
  action: string;
  /** ISO 8601; null for an action that acts once (a reboot, a failover). */
  duration: string | null;
  description: string;
  /** The resource types the action targets. */
  targets: string[];
  /** The CloudWatch alarm that should stop the experiment. */
  stopConditions: string[];
  /** Suggested parameters (the duration excepted): create_fis_template takes them as they are. */
  parameters: Record<string, string>;
  /** Required parameters to set before the template can be built. */
  parametersToSet: string[];
  confidence: number;
}

export interface SeedRecommendations {
  recommendations: SeedRecommendation[];
  finding_id: string | null;
  count: number;
  /** What the list as a whole needs said (the finding names no platform, nothing matched). */
  notes: string[];
}

/** fis-recommender's description field allows 500 characters. */
const MAX_DESCRIPTION = 500;

function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function recommendForSeed(finding: unknown): SeedRecommendations {
  if (isPlainObject(finding) && finding.summary !== undefined && typeof finding.summary !== 'string') {
    throw new InputError('finding.summary: must be a string');
  }
  const set = recommendExperiments(finding);
  return {
    recommendations: set.recommendations.map((r) => ({
      action: r.action,
      duration: r.duration,
      description: `${sentence(r.failure)}. Why: ${r.why.join('; ')}.`.slice(0, MAX_DESCRIPTION),
      targets: r.targetResourceType === null ? [] : [r.targetResourceType],
      stopConditions: [sentence(r.stopCondition.suggestion)],
      parameters: r.parameters,
      parametersToSet: r.parametersToSet,
      confidence: r.confidence,
    })),
    finding_id: set.finding_id,
    count: set.count,
    notes: set.notes,
  };
}

/** Fields of our own recommendation output that describe it and are not template input. */
const DESCRIPTIVE = ['targets', 'stopConditions', 'parametersToSet', 'confidence'];

function withoutDescriptive(recommendation: unknown): unknown {
  if (Array.isArray(recommendation)) return recommendation.map(withoutDescriptive);
  if (!isPlainObject(recommendation)) return recommendation;
  return Object.fromEntries(Object.entries(recommendation).filter(([key]) => !DESCRIPTIVE.includes(key)));
}

const PLACEHOLDER_ALARM = 'REPLACE_WITH_STOP_ALARM';

export function templateForSeed(recommendation: unknown, targetConfig: unknown): BuiltTemplate {
  if (!isPlainObject(targetConfig))
    throw new InputError(
      'target_config: must be an object {roleArn, tags, resourceType?, selectionMode?, stopConditionArn?}',
    );
  const config: Record<string, unknown> = { selectionMode: 'COUNT(1)', ...targetConfig };
  const alarmGiven = config.stopConditionArn !== undefined || config.noStopCondition !== undefined;
  if (!alarmGiven) {
    const account =
      typeof config.roleArn === 'string' ? /^arn:aws[\w-]*:iam::(\d{12}):role\//.exec(config.roleArn)?.[1] : undefined;
    config.stopConditionArn = `arn:aws:cloudwatch:us-east-1:${account ?? '000000000000'}:alarm:${PLACEHOLDER_ALARM}`;
  }
  const built = buildExperimentTemplate(withoutDescriptive(recommendation), config);
  if (!alarmGiven) {
    built.warnings.unshift(
      `target_config.stopConditionArn was not given: the stop condition ` +
        `is the placeholder alarm ${PLACEHOLDER_ALARM}; replace it with ` +
        `the CloudWatch alarm that must stop the experiment before ` +
        `creating the template`,
    );
  }
  return built;
}
