/**
 * Child processes that end when we end them, with everything they started.
 *
 * An MCP server launched as `npx …`, `uv run …` or `sh -c …` is often a launcher whose real server
 * is a grandchild, and a server may itself fork helpers. Signalling only the child leaves those
 * running; signalling its process group (the child is spawned `detached`, so it leads a group of
 * its own) misses a descendant that called setsid() and so left the group and the session; and
 * once its parent exits, such a daemon is re-parented to init and no longer looks like ours.
 *
 * So a spawned tree (spawnTree) is tracked three ways on Linux, through /proc:
 * - the child's process group (kill(-pgid), as before);
 * - its descendants, by walking parent links from the child;
 * - a mark in the environment (FAULTLINE_PROCESS_TREE=<id>) that every descendant inherits unless
 *   it replaces its whole environment: found in /proc/PID/environ after setsid() and re-parenting.
 * Ending a tree signals all three, twice over (SIGTERM, then SIGKILL after a grace), and finally
 * closes our ends of the child's pipes, so a descendant that kept the child's stdout open cannot
 * hold our event loop either. Elsewhere (no /proc) the group alone is signalled; on Windows, the
 * child alone.
 *
 * A member that exited but that init has not reaped yet (a zombie, which a container's init can
 * keep for a second or more) runs nothing and holds nothing: it is not counted.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

/** Spawn option: `{ detached: OWN_GROUP }` gives the child a group of its own where groups exist. */
export const OWN_GROUP = process.platform !== 'win32';
/** Whether descendants can be found through /proc (parent links, environment marks). */
const PROC = process.platform === 'linux';

/** The environment variable that marks every process of one spawned tree. */
export const TREE_MARK_VARIABLE = 'FAULTLINE_PROCESS_TREE';

/** How often an ending tree is looked at again while it is given time to go. */
const POLL_MS = 25;
/** How long SIGKILL is given to take effect before stop() gives up saying so. */
const KILL_WAIT_MS = 2000;
/** How long the pipes of an ended tree may take to deliver what is left in them. */
const DRAIN_MS = 500;

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

/** Resolves once the child's stdout and stderr pipes (those it has) have closed. */
function pipesClosed(child: ChildProcess): Promise<void> {
  const open = [child.stdout, child.stderr].filter((stream) => stream !== null && !stream.closed);
  return Promise.all(open.map((stream) => new Promise((resolve) => stream!.once('close', resolve)))).then(
    () => undefined,
  );
}

/** One process as /proc/PID/stat shows it. */
interface ProcEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Start time in clock ticks since boot: with the pid, it names one process even if the pid is reused. */
  start: string;
  running: boolean;
}

function readStat(pid: number): ProcEntry | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // pid (comm) state ppid pgrp session … starttime is field 22; comm may hold spaces and
  // parentheses, so fields are counted after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  return {
    pid,
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    start: fields[19] ?? '',
    running: state !== 'Z' && state !== 'X',
  };
}

function allPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

/** Whether the process's environment marks it as a member of tree `id` (the mark lists every enclosing tree). */
function carriesMark(pid: number, id: string): boolean {
  let environ: string;
  try {
    // NUL-separated KEY=VALUE entries, as the process was exec'd (inherited by fork).
    environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return false; // gone, or not ours to read (another user's process is not one of ours)
  }
  const prefix = `${TREE_MARK_VARIABLE}=`;
  const entry = environ.split('\0').find((e) => e.startsWith(prefix));
  return entry !== undefined && entry.slice(prefix.length).split(',').includes(id);
}

/**
 * Linux: every running process of the tree rooted at `root` — in its group, below it by parent
 * links, or marked with tree `id` in its environment. Synchronous on purpose: it also runs from a
 * process 'exit' handler, where nothing asynchronous happens.
 */
function scanTree(root: number, id: string, rootStart: number): ProcEntry[] {
  const entries = allPids()
    .map(readStat)
    .filter((entry): entry is ProcEntry => entry !== undefined);
  const children = new Map<number, ProcEntry[]>();
  for (const entry of entries) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  const found = new Map<number, ProcEntry>();
  const below = (pid: number): void => {
    for (const child of children.get(pid) ?? []) {
      if (found.has(child.pid)) continue;
      found.set(child.pid, child);
      below(child.pid);
    }
  };
  for (const entry of entries) {
    if (entry.pid === process.pid) continue;
    // Only a process started since the root can carry its mark (a mark is inherited, never given), and reading
    // every other process's environment was most of a scan's time where many processes run.
    const markable = Number(entry.start) >= rootStart;
    if (entry.pid === root || entry.pgrp === root || (markable && carriesMark(entry.pid, id))) {
      found.set(entry.pid, entry);
      below(entry.pid);
    }
  }
  return [...found.values()].filter((entry) => entry.running && entry.pid !== process.pid);
}

/** A spawned child and everything it starts, which stop() ends together. */
export interface ProcessTree {
  readonly child: ChildProcess;
  /** The pids of the tree that still run (the child's group, its descendants, its marked processes). */
  members(): number[];
  /** Whether anything of the tree still runs. */
  alive(): boolean;
  /** Waits until nothing of the tree runs, or `ms` passed; true when nothing runs. */
  gone(ms: number): Promise<boolean>;
  /**
   * Ends the whole tree: SIGTERM to every member, SIGKILL after `graceMs` to what is left (and to
   * anything started meanwhile), then closes our ends of the child's pipes. True when nothing of it
   * runs any more (false only if SIGKILL itself did not take within a few seconds).
   */
  stop(graceMs: number): Promise<boolean>;
  /** SIGKILL to every member, synchronously: for process 'exit', where nothing can be awaited. */
  killNow(): void;
  /**
   * The tree is done with (nothing of it runs, or the caller gives up on it): our ends of the
   * child's pipes are closed and the caller's exit no longer kills it. stop() does this itself.
   */
  dispose(): void;
}

/**
 * Spawns `command` as the root of a tracked tree: a group of its own (where groups exist) and a
 * mark in its environment, so that stop() finds and ends what it starts, setsid() daemons included.
 * The caller's process exiting kills the tree too.
 */
export function spawnTree(command: string, args: readonly string[], options: SpawnOptions = {}): ProcessTree {
  const id = `${process.pid}-${randomBytes(8).toString('hex')}`;
  const env = options.env ?? process.env;
  // A tree spawned inside another (faultline probing faultline) keeps the outer marks too.
  const marks = env[TREE_MARK_VARIABLE] ? `${env[TREE_MARK_VARIABLE]},${id}` : id;
  const child = spawn(command, args, { ...options, env: { ...env, [TREE_MARK_VARIABLE]: marks }, detached: OWN_GROUP });
  return trackTree(child, id);
}

/** The trees still running: one 'exit' listener kills them all (one per tree would pass Node's listener warning). */
const liveTrees = new Set<() => void>();
const killAllOnExit = (): void => {
  for (const kill of liveTrees) kill();
};

function killedOnExit(kill: () => void, live: boolean): void {
  if (live) {
    if (liveTrees.size === 0) process.on('exit', killAllOnExit);
    liveTrees.add(kill);
  } else if (liveTrees.delete(kill) && liveTrees.size === 0) process.off('exit', killAllOnExit);
}

function trackTree(child: ChildProcess, id: string): ProcessTree {
  /** The child's start (clock ticks since boot), read now while it surely runs; 0 (every process) if unreadable. */
  const rootStart = PROC && child.pid !== undefined ? Number(readStat(child.pid)?.start ?? 0) || 0 : 0;
  /** Every member seen so far, kept by pid and start time: a member found once is ended even after it left the tree's
   * view. */
  const known = new Map<number, string>();
  const remember = (entries: ProcEntry[]): void => {
    for (const entry of entries) known.set(entry.pid, entry.start);
  };
  const stillKnown = (): number[] =>
    [...known]
      .filter(([pid, start]) => {
        const now = readStat(pid);
        return now !== undefined && now.running && now.start === start;
      })
      .map(([pid]) => pid);

  const members = (): number[] => {
    if (child.pid === undefined) return [];
    if (!PROC) return signalGroup(child, 0) ? [child.pid] : [];
    remember(scanTree(child.pid, id, rootStart));
    return stillKnown();
  };
  const signalAll = (signal: NodeJS.Signals): void => {
    signalGroup(child, signal);
    for (const pid of members()) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone meanwhile
      }
    }
  };
  /** Alive, cheaply: the child, or any member already known (no new /proc scan). */
  const knownAlive = (): boolean => {
    if (child.pid !== undefined && !childExited(child)) return true;
    if (!PROC) return signalGroup(child, 0);
    return stillKnown().length > 0;
  };
  const waitGone = async (ms: number): Promise<boolean> => {
    const end = Date.now() + ms;
    while (knownAlive()) {
      if (Date.now() >= end) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(1, end - Date.now()))));
    }
    return members().length === 0;
  };
  const killNow = (): void => signalAll('SIGKILL');
  killedOnExit(killNow, true);
  const dispose = (): void => {
    // Nothing of ours may keep the loop alive now: a descendant that escaped even SIGKILL (or,
    // without /proc, one we could not see) may still hold the other end of these pipes.
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
    killedOnExit(killNow, false);
  };
  let stopping: Promise<boolean> | undefined;
  return {
    child,
    members,
    alive: () => members().length > 0,
    async gone(ms) {
      members(); // learn the current members before waiting on them
      return waitGone(ms);
    },
    stop(graceMs) {
      stopping ??= (async () => {
        if (child.pid === undefined) return true;
        signalAll('SIGTERM');
        let gone = await waitGone(graceMs);
        if (!gone) {
          signalAll('SIGKILL');
          gone = await waitGone(KILL_WAIT_MS);
        }
        // What the tree wrote last may still be in the pipes: a moment to drain them, unless
        // something we could not end (or see) holds them open.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([pipesClosed(child), new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
        clearTimeout(timer);
        dispose();
        return gone;
      })();
      return stopping;
    },
    killNow,
    dispose,
  };
}
