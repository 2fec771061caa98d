/**
 * The fault proxy: an in-process TCP proxy that injects latency, jitter, packet loss, bandwidth
 * limits and blackholes. Everything the rest of faultline uses comes from this file.
 *
 *   const proxy = await startProxy({
 *     mappings: ['0=127.0.0.1:8080'],                       // or parsed Mapping objects
 *     faults: [{ type: 'latency', latencyMs: 200 }],        // validated; see the specs below
 *     seed: 42,                                             // same seed, same fault decisions
 *     tls: { rejectUnauthorized: true, ca: pem },           // for https:// / tls:// / :443 targets
 *     onEvent: (e) => …,                                    // open / connect_failed / close
 *   });
 *   proxy.ports[0];                                         // the bound port of each mapping
 *   proxy.setFaults([{ type: 'blackhole' }]);               // live: no byte lost or reordered
 *   proxy.addFault({ type: 'latency', latencyMs: 5, name: 'l' });   // onto the end; removeFaults(['l'])
 *   proxy.counters();                                       // per mapping and per fault
 *   await proxy.stop();                                     // every socket closed, no timer left
 *
 * - parseMapping(text): the one mapping parser (`PORT=host:port`, `ADDR:PORT=…`, `0=…`,
 *   `[::1]:PORT=…`, `https://` / `tls://` remotes and bare `host:443` ⇒ TLS with SNI, `tcp://`
 *   forces plain). A bad mapping throws an InputError quoting it and listing the forms.
 * - Fault specs are plain objects, all with optional `name` (counter key, default the type),
 *   `side` ('server' | 'client', default 'server') and `direction` ('ingress' | 'egress' | 'both',
 *   default 'ingress'); server+ingress = responses (see linksOf):
 *     { type: 'latency', latencyMs, deviationMs?, distribution?, perOp? }
 *     { type: 'jitter', amplitudeMs, frequencyHz }
 * { type: 'packet_loss', lossRate?, model?: 'bernoulli' | 'gilbert_elliott', p?, r?, lossInBad?, lossInGood?, rttMs? }
 *     { type: 'bandwidth', bytesPerSecond, scope?: 'connection' | 'shared' }   // parseBandwidth(rate, unit)
 *     { type: 'blackhole' }
 *   validateFault / validateFaults check them and throw an InputError naming the field;
 *   startProxy and setFaults validate too; addFault / addHttpFault validate only the fault added.
 * - Protocol-aware proxies (`http: true`, see http/stage.ts): each connection is read as HTTP/1.1,
 *   Redis (RESP) or an opaque stream, and `httpFaults` / setHttpFaults apply the eight request
 *   faults (latency, error, rate_limit, timeout, malformed, schema_mismatch, connection_refused,
 *   connection_drop) to its requests, commands or messages, each with probability, method, path
 *   glob and target; a fault a targeted mapping cannot express is refused (requests/fault-list.ts).
 *   Any fault (network or request) may carry `target`: a mapping's port or its `#name`.
 * - Errors from startProxy: a bad mapping or fault, or a port that cannot be bound (the message
 *   names the mapping). Connection-level failures never reject: they are counted and reported
 *   through onEvent.
 */
export { formatAddress, parseMapping, mappingInFrontOf, type Mapping } from './mapping.js';
export {
  startProxy,
  type ProxyOptions,
  type ProxyEvent,
  type RunningProxy,
  type ProxyCounters,
  type MappingCounters,
} from './proxy.js';
export { validateFault, validateFaults, type FaultSpec, type ResolvedFault, type FaultType } from './faults/index.js';
export { linksOf, type FaultCounters, type Side, type Direction } from './faults/fault.js';
export { parseBandwidth } from './faults/bandwidth.js';
export { createRandom } from '../kernel/random.js';
export { validateHttpFault, type HttpFaultSpec, type ResolvedHttpFault, type HttpFaultCounters } from './http/index.js';
export { inexpressible } from './requests/fault-list.js';
