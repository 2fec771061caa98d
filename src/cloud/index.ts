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
export { FIS_ACTIONS, CATALOG_SOURCE, findAction, type FisAction, type ParameterSpec } from './catalog.js';
export { parseIsoDuration, formatIsoDuration } from './iso-duration.js';
export { recommendExperiments, tokenize } from './recommend.js';
export { buildExperimentTemplate, toCloudFormation, renderCloudFormation } from './template.js';
export {
  exportScenario,
  checkFaultArguments,
  EXPORT_LIMITS,
  type ExportTarget,
  type ExportOptions,
} from './export/index.js';
export { jsonArgument } from './json-argument.js';
export { recommendForSeed, templateForSeed } from './fis-recommender.js';
