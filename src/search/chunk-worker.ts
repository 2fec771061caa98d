/**
 * A chunk-pool thread (chunk-pool.ts): prepares each file it is sent (prepare-file.ts) and answers
 * with the chunks packed (packChunks), or with the error, under the job's id. Jobs run one at a time, in order.
 */
import { parentPort } from 'node:worker_threads';
import { packChunks, prepareFile, type FileJob } from './prepare-file.js';

const port = parentPort;
if (!port) throw new Error('chunk-worker.ts runs as a worker thread of chunk-pool.ts');

let queue: Promise<void> = Promise.resolve();
port.on('message', ({ id, job }: { id: number; job: FileJob }) => {
  queue = queue.then(async () => {
    try {
      // Packed: one string and one transferred buffer, not an object graph to clone (prepare-file.ts).
      const chunks = packChunks(await prepareFile(job));
      port.postMessage({ id, chunks }, [chunks.numbers.buffer as ArrayBuffer]);
    } catch (error) {
      const { message, stack } = error instanceof Error ? error : new Error(String(error));
      port.postMessage({ id, error: { message, stack } });
    }
  });
});
