/**
 * The generator thread's side (see generator-thread.ts): runs each open-loop run it is sent on
 * this thread, tells the caller's thread when its clock starts and each second as it closes, and
 * sends the result back with the samples' memory moved, not copied (a long run's samples are
 * hundreds of MB). Several runs may be in progress at once, as on any thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { useSharedClock } from '../clock/index.js';
import { errorToWire } from '../kernel/errors.js';
import type { FromGenerator, RunRequest, ToGenerator } from './generator-thread.js';
import { LiveCounters } from './live-counters.js';
import { runOnThisThread, ScheduleEnd } from './open-loop.js';

const port = parentPort!;
useSharedClock((workerData as { clock?: unknown } | null)?.clock);
const runs = new Map<number, { controller: AbortController; scheduleEnd: ScheduleEnd }>();
/** Runs waiting at a schedule edge for the caller's thread to answer. */
const atEdge = new Map<number, () => void>();

port.on('message', (message: ToGenerator) => {
  switch (message.type) {
    case 'run':
      void run(message);
      return;
    case 'abort':
      runs.get(message.id)?.controller.abort();
      return;
    case 'endAt':
      runs.get(message.id)?.scheduleEnd.end(message.atMs);
      return;
    case 'edgePassed':
      atEdge.get(message.id)?.();
      atEdge.delete(message.id);
      return;
    case 'resources':
      send({ type: 'resources', id: message.id, resources: process.getActiveResourcesInfo() });
      return;
  }
});

function send(message: FromGenerator, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

async function run({ id, plan, target, live, watched }: RunRequest): Promise<void> {
  const controller = new AbortController();
  const scheduleEnd = new ScheduleEnd();
  runs.set(id, { controller, scheduleEnd });
  try {
    const ca = target.tls?.ca;
    const result = await runOnThisThread(
      plan,
      {
        ...target,
        // A Buffer arrives as a plain Uint8Array.
        ...(ca instanceof Uint8Array ? { tls: { ...target.tls, ca: Buffer.from(ca) } } : {}),
        // Only used to describe the run; the plan carries what is run.
        ratePerSecond: plan.ratePerSecond,
        connections: plan.connections,
        durationMs: plan.durationMs,
        timeoutMs: plan.timeoutMs,
        thread: 'caller',
        signal: controller.signal,
        scheduleEnd,
        live: new LiveCounters(live),
        onStart: (startedAt) => send({ type: 'start', id, startedAt }),
        onSecond: (bucket) => send({ type: 'second', id, bucket }),
        onEdge: (index) =>
          new Promise<void>((resolve) => {
            atEdge.set(id, resolve);
            send({ type: 'edge', id, index });
          }),
      },
      watched,
    );
    const { samples } = result;
    const buffers = [
      samples.intendedStartMs,
      samples.latencyMs,
      samples.serviceMs,
      samples.ttfbMs,
      samples.status,
      samples.errorClass,
    ].map((array) => array.buffer as ArrayBuffer);
    send({ type: 'done', id, result }, buffers);
  } catch (error) {
    send({ type: 'failed', id, error: errorToWire(error) });
  } finally {
    runs.delete(id);
    atEdge.delete(id);
  }
}
