/**
 * A lock file shared by processes (and by concurrent calls in one process): `<path>` holds the
 * pid of its owner. It is created complete in one step (a hard link of a file already holding the
 * pid), so a waiter never reads a half-written one. A lock whose owner no longer runs (killed
 * mid-write) is taken over. Two waiters that both find it abandoned may both remove it; the
 * window is a few microseconds after a crash, and costs at worst one lost update of the index.
 */
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessRunning, removeAbandonedTemporaries } from './atomic-file.js';
import { IndexError } from './errors.js';

const POLL_MS = 25;
/** Owners hold the lock only while they write one index file: seconds at most. */
const WAIT_LIMIT_MS = 120_000;

export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  await acquire(path);
  try {
    return await work();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}

async function acquire(path: string): Promise<void> {
  // Named as atomic-file.ts names its temporaries, so that one left by a killed process is removed.
  await removeAbandonedTemporaries(path);
  const claim = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(claim, String(process.pid));
  try {
    const deadline = Date.now() + WAIT_LIMIT_MS;
    for (;;) {
      try {
        await link(claim, path);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const owner = Number(await readFile(path, 'utf8').catch(() => ''));
      if (Number.isInteger(owner) && owner > 0 && !isProcessRunning(owner)) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) {
        throw new IndexError(`${path} has been locked by process ${owner} for ${WAIT_LIMIT_MS / 1000} s; if no faultline is running, delete it`);
      }
      await sleep(POLL_MS);
    }
  } finally {
    await unlink(claim).catch(() => undefined);
  }
}
