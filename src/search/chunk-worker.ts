/**
 * A chunk-pool thread (chunk-pool.ts): prepares each file it is sent (prepare-file.ts) and answers
 * with the chunks, or with the error, under the job's id. Jobs run one at a time, in order.
 */
import { parentPort } from 'node:worker_threads';
import { prepareFile, type FileJob } from './prepare-file.js';

const port = parentPort;
if (!port) throw new Error('chunk-worker.ts runs as a worker thread of chunk-pool.ts');

let queue: Promise<void> = Promise.resolve();
port.on('message', ({ id, job }: { id: number; job: FileJob }) => {
  queue = queue.then(async () => {
    try {
      port.postMessage({ id, chunks: await prepareFile(job) });
    } catch (error) {
      const { message, stack } = error instanceof Error ? error : new Error(String(error));
      port.postMessage({ id, error: { message, stack } });
    }
  });
});
