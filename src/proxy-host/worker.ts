/**
 * The proxy thread's side (see thread.ts): runs each proxy it is asked to start with startProxy,
 * on this thread's event loop, and answers for it — faults set live (a list, or one by one through a
 * FaultRegistry of its own, as the admin API keeps them), counters, stop — until it is stopped. It
 * samples this thread's load while it hosts a proxy, into the gauge every start answers with, so a
 * load generator can tell a saturated proxy from a slow target.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { useSharedClock } from '../clock/index.js';
import { errorToWire } from '../kernel/errors.js';
// Only what this thread runs: the gauge, not the load generator behind load/index.js. Each module here is
// loaded and compiled again in this thread's isolate, and every run waits for this thread to start.
import { watchThisThread } from '../load/thread-load.js';
import { startProxy, type RunningProxy } from '../proxy/proxy.js';
import { FaultRegistry, typeIds } from '../proxy/control/registry.js';
import { targetLookup } from '../target-policy.js';
import type { FromProxyThread, ReplyValue, StartOptions, Started, ToProxyThread } from './messages.js';

const port = parentPort!;
useSharedClock((workerData as { clock?: unknown } | null)?.clock);

interface Hosted {
  proxy: RunningProxy;
  stopWatching: () => void;
  /** Made by the first inject: from then on it owns the proxy's fault lists. */
  registry?: FaultRegistry;
}
const hosted = new Map<number, Hosted>();

port.on('message', (message: ToProxyThread) => {
  void answer(message);
});

function send(message: FromProxyThread): void {
  port.postMessage(message);
}

async function answer(message: ToProxyThread): Promise<void> {
  try {
    send({ type: 'reply', id: message.id, value: await handle(message) });
  } catch (error) {
    send({ type: 'reply', id: message.id, error: errorToWire(error) });
  }
}

async function handle(message: ToProxyThread): Promise<ReplyValue> {
  switch (message.type) {
    case 'start':
      return start(message.id, message.options);
    case 'resources':
      return process.getActiveResourcesInfo();
    case 'setFaults':
      proxyOf(message.proxy).setFaults(message.faults);
      return undefined;
    case 'setHttpFaults':
      proxyOf(message.proxy).setHttpFaults(message.faults);
      return undefined;
    case 'counters':
      return proxyOf(message.proxy).counters();
    case 'inject': {
      const entry = entryOf(message.proxy);
      const registry = (entry.registry ??= new FaultRegistry(entry.proxy, undefined, undefined, typeIds()));
      const id = registry.inject(message.target, message.config);
      return { id, counters: entry.proxy.counters() };
    }
    case 'clear':
      return entryOf(message.proxy).registry?.clear(message.fault) ?? false;
    case 'clearAll':
      entryOf(message.proxy).registry?.clearAll();
      return undefined;
    case 'stop': {
      const entry = hosted.get(message.proxy);
      if (entry === undefined) return undefined; // stopped already
      hosted.delete(message.proxy);
      entry.stopWatching();
      entry.registry?.dispose();
      await entry.proxy.stop();
      return undefined;
    }
  }
}

function entryOf(id: number): Hosted {
  const entry = hosted.get(id);
  if (entry === undefined) throw new Error('this proxy has been stopped');
  return entry;
}

function proxyOf(id: number): RunningProxy {
  return entryOf(id).proxy;
}

async function start(id: number, options: StartOptions): Promise<Started> {
  const { events, targets, ...proxyOptions } = options;
  const ca = proxyOptions.tls?.ca;
  const proxy = await startProxy({
    ...proxyOptions,
    // A Buffer arrives as a plain Uint8Array.
    ...(ca !== undefined
      ? { tls: { ...proxyOptions.tls, ca: Array.isArray(ca) ? ca.map(asBufferOrText) : asBufferOrText(ca) } }
      : {}),
    ...(targets !== undefined ? { lookup: targetLookup(targets) } : {}),
    ...(events ? { onEvent: (event) => send({ type: 'event', proxy: id, event }) } : {}),
  });
  const watch = watchThisThread();
  hosted.set(id, { proxy, stopWatching: watch.stop });
  return {
    mappings: [...proxy.mappings],
    ports: [...proxy.ports],
    seed: proxy.seed,
    http: proxy.http,
    load: watch.gauge,
  };
}

function asBufferOrText(value: string | Uint8Array): string | Buffer {
  return typeof value === 'string' ? value : Buffer.from(value);
}
