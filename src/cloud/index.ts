/**
 * Cloud experiments: the AWS FIS action catalog as data, finding → ranked FIS experiments,
 * validated CreateExperimentTemplate inputs (and CloudFormation), fis-recommender-mcp's two tools'
 * shapes on them, and exports of a faultline scenario to FIS, Chaos Mesh and k6. Offline: nothing
 * here calls a cloud API.
 *
 *   recommendExperiments('p99 latency between ECS services', { resources }) → {recommendations, …}
 *   buildExperimentTemplate({action, parameters, duration}, {roleArn, stopConditionArn, tags}) → {template, warnings}
 *   exportScenario(spec, 'chaos-mesh', {selector: ['app=checkout']}) → {document, notes}
 */
export {
  FIS_ACTIONS,
  CATALOG_SOURCE,
  findAction,
  durationParameter,
  type FisAction,
  type ParameterSpec,
  type ParameterKind,
} from './catalog.js';
export { parseIsoDuration, formatIsoDuration } from './iso-duration.js';
export {
  recommendExperiments,
  readFinding,
  tokenize,
  MAX_FINDING_BYTES,
  type Recommendation,
  type RecommendationSet,
  type LocalRehearsal,
} from './recommend.js';
export {
  buildExperimentTemplate,
  checkSelectionMode,
  toCloudFormation,
  renderCloudFormation,
  type ExperimentTemplateInput,
  type BuiltTemplate,
} from './template.js';
export {
  exportScenario,
  checkFaultArguments,
  EXPORT_TARGETS,
  EXPORT_LIMITS,
  FIS_PLATFORMS,
  MAX_K6_VUS,
  type ExportTarget,
  type ExportOptions,
  type ExportResult,
  type FisPlatform,
} from './export/index.js';
export { jsonArgument } from './json-argument.js';
export {
  recommendForSeed,
  templateForSeed,
  type SeedRecommendation,
  type SeedRecommendations,
} from './fis-recommender.js';
