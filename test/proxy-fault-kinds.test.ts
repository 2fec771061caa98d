/**
 * Which request faults a mapping accepts follows what its connections carried: a fault is refused
 * only when no kind of traffic the mapping carried can express it. A mapping that carried HTTP and
 * once an opaque stream (a client that sent nothing within the sniffing window) still takes an
 * HTTP fault; one that carried only an opaque stream does not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMapping } from '../src/proxy/mapping.js';
import { RequestFaultList, type TrafficKind } from '../src/proxy/requests/fault-list.js';

function listCarrying(kinds: TrafficKind[]): RequestFaultList {
  return new RequestFaultList({
    mappings: [parseMapping('0=127.0.0.1:7001#weather')],
    seed: 1,
    ports: () => [40000],
    kindsOf: () => new Set(kinds),
  });
}

test(
  'an HTTP fault is taken by a mapping that carried HTTP and an ' +
    'opaque stream, refused by one that carried only the stream',
  () => {
    const fault = [{ type: 'error', target: 'weather', statusCode: 503 }];
    assert.doesNotThrow(() => listCarrying(['http', 'tcp']).set(fault));
    assert.doesNotThrow(() => listCarrying([]).set(fault), 'unknown traffic: taken, its counters say whether it acts');
    assert.throws(
      () => listCarrying(['tcp']).set(fault),
      /cannot act on its mapping: mapping "0=127\.0\.0\.1:7001#weather" carries an opaque TCP stream: error has no meaning/,
    );
  },
);
