/**
 * The fault proxy the proxy tests drive, in both placements a run uses: startProxy on the caller's
 * thread (as `faultline proxy` and the held proxies run it) and the same proxy hosted on the proxy's
 * own thread (src/proxy-host/, as scenarios and experiments run it). Both through the hosted proxy's asynchronous
 * shape, so one test body holds for both: `await proxy.setFaults(…)` (a refusal rejects),
 * `(await proxy.counters())`.
 *
 *   forEachPlacement((startProxy) => {
 *     it('…', async () => { const proxy = await startProxy({ … }); … });
 *   });
 *
 * declares the tests once per placement, each set in a describe named for it: the proxy's tests
 * run once in one process per file, not again in a child (test/proxy-hosted.test.ts did so).
 */
import { describe } from 'node:test';
import { startHostedProxy, type HostedProxy } from '../../src/proxy-host/index.js';
import { startProxy as startInProcess, type ProxyOptions } from '../../src/proxy/index.js';

/** The hosted proxy's shape but its load gauge and its registry (tested through the experiment runner). */
export type TestProxy = Omit<HostedProxy, 'load' | 'inject' | 'clear' | 'clearAll'>;
export type StartTestProxy = (options: Omit<ProxyOptions, 'lookup'>) => Promise<TestProxy>;

export const PLACEMENTS = {
  "on the caller's thread": async (options) => {
    const proxy = await startInProcess(options);
    return {
      mappings: proxy.mappings,
      ports: proxy.ports,
      seed: proxy.seed,
      http: proxy.http,
      setFaults: async (faults) => proxy.setFaults(faults),
      setHttpFaults: async (faults) => proxy.setHttpFaults(faults),
      counters: async () => proxy.counters(),
      stop: () => proxy.stop(),
    };
  },
  "on the proxy's own thread": (options) => startHostedProxy(options),
} satisfies Record<string, StartTestProxy>;

/** Declares `tests` once for each placement, in a describe named for it. */
export function forEachPlacement(tests: (startProxy: StartTestProxy) => void): void {
  for (const [placement, startProxy] of Object.entries(PLACEMENTS)) describe(placement, () => tests(startProxy));
}
