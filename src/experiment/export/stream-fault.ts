/**
 * A request fault on a mapping whose scheme says it carries no HTTP (tcp://: an opaque stream,
 * redis://: RESP commands), as the network fault that keeps its meaning on an engine, or the
 * reason none does. An export never changes the protocol: HTTPChaos acts on HTTP only and FIS
 * has no HTTP action, so neither stands in for a fault on Postgres' or Redis' stream.
 *
 *   latency             → a delay on the dependency's answers (each message or reply waits)
 *   connection_refused  → refused: faultline resets the connection (the client fails at once);
 *                         the engines' partition and blackhole drop packets (the client hangs)
 *   timeout, connection_drop, error → refused: each acts per message or command, in the
 *                         dependency's place; no network fault does that
 */
import { InputError } from '../../kernel/errors.js';
import type { ResolvedHttpFault } from '../../proxy/index.js';
import type { Engine, NetworkFault } from '../../export/network.js';

const UNIT = { tcp: 'message', resp: 'command' } as const;
const WHAT = { tcp: 'a tcp:// mapping (an opaque stream)', resp: 'a Redis mapping (RESP)' } as const;

export function streamFault(
  fault: ResolvedHttpFault,
  protocol: 'tcp' | 'resp',
  to: Engine,
  notes: string[],
): NetworkFault {
  const refuse = (reason: string): never => {
    throw new InputError(`fault: cannot export to ${to}: ${fault.type} on ${WHAT[protocol]} ${reason}`);
  };
  const unit = UNIT[protocol];
  const engine =
    to === 'chaos-mesh'
      ? 'HTTPChaos acts on HTTP only, and no NetworkChaos'
      : 'FIS has no HTTP action, and none of its network actions';
  switch (fault.type) {
    case 'latency':
      if (fault.probability < 1)
        refuse(`has probability ${fault.probability}: a network delay acts on every packet, not on a share`);
      if (fault.methods !== undefined || fault.path !== undefined)
        refuse(`has a ${unit} filter: a network delay acts on every packet, whatever it carries`);
      notes.push(
        `${fault.type} of ${fault.delay} ms on ${WHAT[protocol]} exported as a network delay on the ` +
          `dependency's answers: each ${unit}'s answer waits, as behind faultline; ${unit}s sent ` +
          `together share one wait on the network, one each behind faultline.`,
      );
      return { kind: 'latency', delay: fault.delay, jitter: 0 };
    case 'connection_refused':
      return refuse(
        `resets the connection (RST): the client fails at once. ${engine} ` +
          'resets a connection: a partition or blackhole drops packets, so the client would hang ' +
          'until its timeout instead, another test — export a blackhole step for that',
      );
    case 'timeout':
      return refuse(`holds each ${unit} and closes the connection after its hang; ${engine} does that`);
    case 'connection_drop':
      return refuse(`cuts or withholds each ${unit}'s answer; ${engine} does that`);
    default:
      return refuse(`answers in the dependency's place per ${unit}; ${engine} does that`);
  }
}
