/** blackhole's declaration (see declaration.ts): no fields of its own. */
import type { FaultCounters } from './fault.js';
import type { ResolvedBlackhole } from './blackhole.js';
import type { FaultDeclaration } from './declaration.js';

export const BLACKHOLE = {
  type: 'blackhole',
  plane: 'network',
  help: 'the link moves no byte (held, not dropped) until the fault ends',
  proxyFlag: { name: 'blackhole', help: 'add a blackhole: the stream stops (nothing dropped) until the proxy stops' },
  fields: [],
  acted: (counters) => counters.applications > 0,
  describe: (_spec, scope) => `Blackhole: ${scope}`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedBlackhole>;
