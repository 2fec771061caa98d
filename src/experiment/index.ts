/**
 * Experiments as code: one file states a hypothesis, breaks any plane on a timeline, checks
 * executable expectations and gives a verdict a CI job can gate on. Knows nothing of MCP.
 *
 *   const raw = await parseExperimentText(text);            // YAML or JSON (mcp-chaos-monkey's too)
 *   const experiment = await readExperiment(raw, { limits, policy });
 *   const result = await runExperiment(experiment, { policy, signal, onProgress });
 *   renderMarkdown(result), renderJunit(result), renderHtml(result), experimentRunRecord(result)
 *   exportExperiment(experiment, 'chaos-mesh' | 'k6' | 'fis', options)
 *   suggestExperiment(files) — a starter experiment from the code's outbound dependencies
 */
export { EXPERIMENT_SCHEMA, EXPERIMENT_SCHEMA_ID } from './schema.js';
export { parseExperimentText, checkShape, MAX_EXPERIMENT_CHARS } from './shape.js';
export { readExperiment, EXPERIMENT_LIMITS, type ReadOptions } from './read.js';
export { runExperiment, type RunOptions } from './runner.js';
export type { Experiment, Step } from './model.js';
export type { ExperimentResult, ExpectationVerdict, Verdict } from './result.js';
export type { SafetyPolicy } from './adapters/policy.js';
export { renderMarkdown } from './report/markdown.js';
export { renderJunit } from './report/junit.js';
export { renderHtml } from './report/html.js';
export { experimentRunRecord, type ExperimentRunRecord } from './report/run-record.js';
export {
  exportExperiment,
  EXPERIMENT_EXPORT_TARGETS,
  type ExperimentExport,
  type ExperimentExportOptions,
  type ExperimentExportTarget,
} from './export/index.js';
