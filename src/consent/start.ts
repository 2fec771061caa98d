/**
 * The only place faultline starts a program for a request: the policy's launch() decides (and
 * refuses, naming the argument), then the process tree starts (process-group.ts). test/consent-static
 * checks that no other module spawns.
 */
import type { SpawnOptions } from 'node:child_process';
import { spawnTree, type ProcessTree } from '../process-group.js';
import type { ProgramPolicy, ProgramRequest } from './policy.js';

export function startProgram(
  policy: ProgramPolicy,
  request: ProgramRequest,
  options: Omit<SpawnOptions, 'cwd' | 'env'> = {},
): ProcessTree {
  const launch = policy.launch(request);
  return spawnTree(launch.file, launch.args, { ...options, cwd: launch.cwd, env: launch.env });
}
