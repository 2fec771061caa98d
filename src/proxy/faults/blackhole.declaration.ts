/** blackhole's declaration (see declaration.ts): no fields of its own. */
import type { FaultCounters } from './fault.js';
import type { ResolvedBlackhole } from './blackhole.js';
import type { FaultDeclaration } from './declaration.js';

export const BLACKHOLE = {
  type: 'blackhole',
  plane: 'network',
  help:
    'both ways by default: nothing reaches the remote (a new connection is not dialled) and nothing is answered; ' +
    'a client still waiting when it ends is served then, one that left never is; `direction` ingress or egress ' +
    'holds one half',
  scenario: 'stops the traffic (bytes are held, not dropped) until the fault ends',
  proxyFlag: { name: 'blackhole', help: 'add a blackhole: the stream stops (nothing dropped) until the proxy stops' },
  // Both ways, as tc, FIS and Chaos Mesh drop traffic.
  direction: 'both',
  fields: [],
  counts: 'held connection',
  acted: (counters) => counters.applications > 0,
  describe: (_spec, scope) => `Blackhole: ${scope}`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedBlackhole>;
