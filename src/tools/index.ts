/**
 * Every tool family, in the order tools/list shows them. A family's module (its zod schemas and
 * handlers) is imported only when needed: on the first call of one of its tools when the server
 * answers tools/list from the list generated at build time (tool-list.ts), or all at once when it
 * builds the list live. Nothing here imports a tool module statically.
 */
import type { ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';

export type RegisterFamily = (tools: ToolRegistry, ctx: ToolContext) => void;

export interface ToolFamily {
  /** The family's name in the generated list: which family to load for a tool call. */
  module: string;
  /** Imports the family's module(s); the function returned registers its tools. */
  load(): Promise<RegisterFamily>;
}

export const TOOL_FAMILIES: readonly ToolFamily[] = [
  { module: 'code', load: async () => (await import('./code.js')).registerCodeTools },
  { module: 'search', load: async () => (await import('./search.js')).registerSearchTools },
  {
    module: 'review',
    load: async () => {
      const [{ registerReviewTools }, { relatedCodeSearch }] = await Promise.all([
        import('./review.js'),
        import('./related-code.js'),
      ]);
      return (tools, ctx) => registerReviewTools(tools, ctx, { searchContext: relatedCodeSearch(ctx) });
    },
  },
  { module: 'scenario', load: async () => (await import('./scenario.js')).registerScenarioTools },
  // family: cloud (fault_recommend_fis_experiments, fault_create_fis_template, fault_export_scenario)
  { module: 'cloud', load: async () => (await import('./cloud.js')).registerCloudTools },
  // toolset family: toolcall
  { module: 'toolcall', load: async () => (await import('./toolcall.js')).registerToolcallTools },
  // family: http (fault_run_http_error_impact_scenario)
  { module: 'http-scenario', load: async () => (await import('./http-scenario.js')).registerHttpScenarioTool },
  // family: proxy (fault_proxy_start, _set_faults, _status, _stop)
  { module: 'proxy', load: async () => (await import('./proxy.js')).registerProxyTools },
  // toolset family: probe
  { module: 'probe', load: async () => (await import('./probe.js')).registerProbeTools },
  // toolset family: experiment (fault_run_experiment, fault_suggest_experiment)
  { module: 'experiment', load: async () => (await import('./experiment.js')).registerExperimentTools },
  // toolset family: fis-recommender (off unless named; recommend_fis_experiments, create_fis_template)
  { module: 'fis-recommender', load: async () => (await import('./fis-recommender.js')).registerFisRecommenderTools },
];

/**
 * Registers every family, in order (imported side by side, registered one after the other so
 * tools/list keeps its order). Calls `registered(module, names)` after each family with the names
 * of the tools it added.
 */
export async function registerAllTools(
  tools: ToolRegistry,
  ctx: ToolContext,
  registered?: (module: string, names: string[]) => void,
): Promise<void> {
  const registers = await Promise.all(TOOL_FAMILIES.map((family) => family.load()));
  TOOL_FAMILIES.forEach((family, index) => {
    const before = tools.names().length;
    registers[index]!(tools, ctx);
    registered?.(family.module, tools.names().slice(before));
  });
}
