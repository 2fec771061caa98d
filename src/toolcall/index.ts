/** The MCP tool-call plane: plan, faults, mutations, SLIs, the two proxies and the simulator. */
export {
  FAULT_TYPES,
  EMPTY_PLAN,
  PLAN_LIMITS,
  parsePlanText,
  validatePlan,
  matchesTools,
  type Plan,
  type PlanFault,
  type FaultType,
} from './plan.js';
export { FaultEngine, type Decision } from './faults.js';
export { applyMutations } from './mutate.js';
export { computeSlis, renderReport, type CallRecord, type Slis, type Verdict } from './metrics.js';
export { ToolPlane, PlaneSession, TASK_META_KEYS, type JsonRpcMessage, type PlaneOptions } from './session.js';
export { runStdioProxy, type StdioProxyOptions } from './stdio-proxy.js';
export { startHttpProxy, type HttpProxy, type HttpProxyOptions } from './http-proxy.js';
export { runDemo, renderDemo, DEMO_LIMITS, FAKE_TOOLS, type DemoResult } from './simulator.js';
