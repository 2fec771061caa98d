/**
 * A chunk-pool thread (chunk-pool.ts): prepares each file it is sent (prepare-file.ts) and answers
 * with the chunks, or with the error, under the job's id, on the answers port it was given; then
 * it sends the id on its parent port, so the pool knows the answer is there to read when the
 * indexer stores the file. Jobs run one at a time, in order; a job the caller's thread took first
 * (its cell of the shared claims array) is skipped, and its id sent all the same; one without a cell
 * (NO_CELL) is this thread's alone.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { CLAIM, NO_CELL } from './chunk-pool.js';
import { prepareFile, type FileJob } from './prepare-file.js';

const port = parentPort;
const { answers, claims } = (workerData ?? {}) as { answers?: MessagePort; claims?: Int32Array };
if (!port || !answers || !claims) throw new Error('chunk-worker.ts runs as a worker thread of chunk-pool.ts');

let queue: Promise<void> = Promise.resolve();
port.on('message', ({ id, cell, job }: { id: number; cell: number; job: FileJob }) => {
  queue = queue.then(async () => {
    if (cell === NO_CELL || Atomics.compareExchange(claims, cell, CLAIM.queued, CLAIM.thread) === CLAIM.queued) {
      try {
        answers.postMessage({ id, chunks: await prepareFile(job) });
      } catch (error) {
        const { message, stack } = error instanceof Error ? error : new Error(String(error));
        answers.postMessage({ id, error: { message, stack } });
      }
    }
    port.postMessage(id);
  });
});
