/** The probe module's interface: run probes against an MCP server, load the taxonomy, compute coverage. */
export {
  runProbe,
  probeVerdict,
  PROBE_DEFAULTS,
  PROBE_LIMITS,
  type ProbeOptions,
  type ProbeReport,
  type ProbeVerdict,
  type Finding,
  type LeafResult,
  type Severity,
} from './runner.js';
export { verdictOfProbe } from './report.js';
export { loadTaxonomy, checkTaxonomy, familyOf, FAMILY_IDS, type Taxonomy, type FamilyId } from './taxonomy.js';
export { renderProbeText } from './render.js';
export type { Target } from './peer/index.js';
export {
  RUN_RECORD_FORMAT,
  RUN_RECORD_VERSION,
  recordProblems,
  type RunRecord,
  type LeafStatus,
} from '../kernel/run-record.js';
export {
  loadSuite,
  computeCoverage,
  scoreProbes,
  renderCoverage,
  renderTaxonomy,
  thresholdMet,
  COVERAGE_FORMATS,
  type CoverageReport,
  type CoverageFormat,
  type Suite,
} from './coverage.js';
