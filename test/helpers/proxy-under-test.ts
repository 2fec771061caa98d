/**
 * The fault proxy the proxy tests drive: startProxy on this thread, or, with
 * FAULTLINE_TEST_PROXY=thread (test/proxy-hosted.test.ts runs them so), the same proxy hosted on
 * the proxy thread (src/proxy-host/), as a scenario runs it. Both through the hosted proxy's
 * asynchronous shape, so one test body holds for both: `await proxy.setFaults(…)` (a refusal
 * rejects), `(await proxy.counters())`.
 */
import { startHostedProxy, type HostedProxy } from '../../src/proxy-host/index.js';
import { startProxy as startInProcess, type ProxyOptions } from '../../src/proxy/index.js';

export type TestProxy = Omit<HostedProxy, 'load'>;

/** Whether this process's proxy tests run against the hosted proxy. */
export const HOSTED = process.env.FAULTLINE_TEST_PROXY === 'thread';

export async function startProxy(options: Omit<ProxyOptions, 'lookup'>): Promise<TestProxy> {
  if (HOSTED) return startHostedProxy(options);
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
}
