/**
 * Crash-safe file replacement: the new content goes to a temporary file beside the target, is
 * flushed to disk (fsync), and is renamed over the target, then the directory entry is flushed.
 * A reader sees the old file or the new one, never a mix; a crash leaves at most a temporary file,
 * which a later write removes once its writer is gone.
 */
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export async function writeFileAtomically(path: string, parts: readonly Uint8Array[]): Promise<void> {
  await removeAbandonedTemporaries(path);
  const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    try {
      for (const part of parts) await handle.write(part);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(path));
}

/** Temporaries of `path` whose writing process no longer runs (it crashed or was killed). */
export async function removeAbandonedTemporaries(path: string): Promise<void> {
  const prefix = `${basename(path)}.tmp-`;
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && isProcessRunning(pid)) continue;
    await unlink(join(dirname(path), name)).catch(() => undefined);
  }
}

export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function syncDirectory(dir: string): Promise<void> {
  // Makes the rename itself durable; some platforms cannot open a directory, which is harmless.
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort: the data itself is already synced.
  }
}
