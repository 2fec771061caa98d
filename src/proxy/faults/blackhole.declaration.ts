/** blackhole's declaration (see declaration.ts): no fields of its own. */
import type { FaultCounters } from './fault.js';
import type { ResolvedBlackhole } from './blackhole.js';
import type { FaultDeclaration } from './declaration.js';

export const BLACKHOLE = {
  type: 'blackhole',
  plane: 'network',
  help:
    'both ways by default: requests do not reach the remote and nothing is answered; bytes are held, not lost, until ' +
    'the fault ends; `direction` ingress or egress holds one half',
  proxyFlag: { name: 'blackhole', help: 'add a blackhole: the stream stops (nothing dropped) until the proxy stops' },
  // Both ways, as tc, FIS and Chaos Mesh drop traffic.
  direction: 'both',
  fields: [],
  acted: (counters) => counters.applications > 0,
  describe: (_spec, scope) => `Blackhole: ${scope}`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedBlackhole>;
