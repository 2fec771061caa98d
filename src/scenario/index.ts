/**
 * Impact scenarios (docs/design.md, "5. Load, scenarios and verdicts"): validated arguments → a proxy and the load
 * generator on a
 * timeline → results with SLO verdicts. The report is rendered from the results (src/report).
 *
 *   const spec = await scenarioFromArguments('latency', { url, latency: 200, duration: '10s' }, limits);
 *   const result = await runScenario(spec, { signal, onProgress });
 */
export {
  scenarioFromArguments,
  SCENARIO_DEFAULTS,
  type ScenarioArguments,
  type ScenarioSpec,
  type Strategy,
} from './input.js';
export { runScenario, type RunOptions, type ScenarioProgress } from './run.js';
export { parseSlo, evaluateSlos, DEFAULT_SLOS, SLO_FORMS, type Slo, type SloResult } from './slo.js';
export { checkLoadTarget, isLocalAddress } from './target.js';
export type { ScenarioResult, PhaseResult, LoadFigures, ImpactRow, PercentileRow, TimelineSecond } from './result.js';
export { decideVerdict, type Verdict, type VerdictWithReasons } from './verdict.js';
export {
  httpScenarioFromArguments,
  describeHttpFault,
  HTTP_SCENARIO_DEFAULTS,
  HTTP_FAULT_ARGUMENTS,
  type HttpScenarioArguments,
} from './http-fault.js';
