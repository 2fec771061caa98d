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
export { EXPERIMENT_SCHEMA } from './schema.js';
export { parseExperimentText } from './shape.js';
export { readExperiment } from './read.js';
export { runExperiment } from './runner.js';
export type { ExperimentResult } from './result.js';
export { renderMarkdown } from './report/markdown.js';
export { renderJunit } from './report/junit.js';
export { renderHtml } from './report/html.js';
export { experimentRunRecord } from './report/run-record.js';
export { exportExperiment, type ExperimentExportOptions, type ExperimentExportTarget } from './export/index.js';
