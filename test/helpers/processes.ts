/** Whether processes a test started are still there, for the reaping tests. */
import { readFileSync } from 'node:fs';

/** Whether pid exists (a zombie that init has not reaped yet counts). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether pid runs: exists and is not a zombie (Linux: from /proc; elsewhere signal 0). */
export function running(pid: number): boolean {
  if (process.platform !== 'linux') return alive(pid);
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state …; comm may hold spaces and parentheses, so read after the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
