/** reset_peer's declaration (see declaration.ts): Toxiproxy's `reset_peer` toxic. */
import type { FaultCounters } from './fault.js';
import type { ResolvedResetPeer } from './reset-peer.js';
import { MILLISECONDS, type FaultDeclaration } from './declaration.js';

export const RESET_PEER = {
  type: 'reset_peer',
  plane: 'network',
  help: 'once data comes, the connection is reset (TCP RST to both ends); that data is lost',
  toxic: { type: 'reset_peer' },
  proxyFlag: { name: 'reset-peer', help: 'add a peer reset: MS after data first comes, the connection is reset (RST)' },
  fields: [
    {
      key: 'afterMs',
      kind: 'number',
      unit: 'ms',
      required: true,
      ...MILLISECONDS,
      help: 'reset this long after the first data reached the link (0: at once)',
      toxic: { attribute: 'timeout' },
      flag: 'reset-peer',
    },
  ],
  counts: 'stream reset',
  acted: (counters) => counters.applications > 0,
  describe: (spec, scope) => `Reset Peer: ${scope}After: ${spec.afterMs} ms`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedResetPeer>;
