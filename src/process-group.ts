/**
 * A child process in a process group of its own, so that stopping it also stops what it started:
 * an MCP server launched as `npx …`, `uv run …` or `sh -c …` is often a launcher whose real server
 * is a grandchild, and signalling only the launcher can leave that server running after we return.
 *
 * On POSIX the child is spawned `detached` (it leads a new group) and signals go to the whole
 * group (kill(-pgid)); on Windows there are no groups and only the child is signalled. Whether
 * anything of the group still runs is asked with signal 0 and, on Linux, /proc: a member that
 * exited but that init has not reaped yet (a zombie, which a container's init can keep for a
 * second or more) still answers signal 0, yet runs nothing and holds nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

/** Spawn option: `{ detached: OWN_GROUP }` gives the child a group of its own where groups exist. */
export const OWN_GROUP = process.platform !== 'win32';

/** Whether the child itself has exited (its exit event has fired). */
function childExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Sends `signal` to the child's group (the child and whatever it started): also after the child
 * itself exited, since what it started may live on. Returns false when nothing of the group is
 * left to signal (signal 0 asks just that).
 */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals | 0): boolean {
  const pid = child.pid;
  if (pid === undefined) return false;
  if (OWN_GROUP) {
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      // No such group (all gone), or the child was not spawned detached: fall back to the child.
    }
  }
  if (childExited(child)) return false;
  if (signal !== 0) child.kill(signal);
  return true;
}

/** Whether anything of the child's group still runs (zombies do not count on Linux). */
export async function groupAlive(child: ChildProcess): Promise<boolean> {
  if (!childExited(child)) return true;
  if (!signalGroup(child, 0)) return false;
  return process.platform !== 'linux' || (await livingMembers(child.pid!)) > 0;
}

/** Waits until nothing of the child's group runs, or `ms` passed; true when nothing runs. */
export async function groupGone(child: ChildProcess, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (await groupAlive(child)) {
    if (Date.now() >= end) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(25, Math.max(1, end - Date.now()))));
  }
  return true;
}

/** Linux: how many processes of group `pgid` are not zombies (from /proc/PID/stat). */
export async function livingMembers(pgid: number): Promise<number> {
  let entries: string[];
  try {
    entries = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return 1; // no /proc to ask: assume something still runs
  }
  const stats = await Promise.all(entries.map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')));
  let living = 0;
  for (const stat of stats) {
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so parse after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') living++;
  }
  return living;
}
