/**
 * Issue 36: every program faultline starts goes through the one consent check (src/consent). This
 * reads src/ for the ways Node starts a process and fails when one appears outside the modules
 * allowed here, so a new spawn cannot be added silently: it must go through startProgram
 * (src/consent/start.ts), or be added below with the reason it needs no consent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './helpers/repo.js';

/** Module → why it may start a process itself. */
const ALLOWED: Record<string, { pattern: RegExp; why: string }> = {
  'src/process-group.ts': {
    pattern: /child_process/,
    why: 'the process-tree primitive (spawnTree); called only by src/consent/start.ts',
  },
  'src/consent/start.ts': { pattern: /spawnTree\(/, why: "startProgram: the consent policy's launch() first" },
};

/** What starts a process: child_process (but a type-only import), and the tree primitive. */
const STARTS = [
  /^\s*import\s+(?!type\b)[^;]*from\s+['"](node:)?child_process['"]/m,
  /require\(\s*['"](node:)?child_process['"]\s*\)/,
  /import\(\s*['"](node:)?child_process['"]\s*\)/,
  /\bspawnTree\s*\(/,
  /\b(execFile|execFileSync|execSync|spawnSync|fork)\s*\(/,
  /process\.binding\(\s*['"]spawn_sync['"]\s*\)/,
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('only the allowed modules start processes; everything else goes through src/consent', () => {
  const offenders: string[] = [];
  const seen = new Set<string>();
  for (const path of sources(join(repoRoot, 'src'))) {
    const name = relative(repoRoot, path);
    const text = readFileSync(path, 'utf8').replace(/^\s*(\/\/|\*|\/\*).*$/gm, '');
    for (const pattern of STARTS) {
      if (!pattern.test(text)) continue;
      if (ALLOWED[name] && ALLOWED[name].pattern.test(text)) seen.add(name);
      else offenders.push(`${name}: ${pattern}`);
    }
  }
  assert.deepEqual(offenders, [], 'a process started outside src/consent/start.ts');
  assert.deepEqual(
    [...seen].sort(),
    Object.keys(ALLOWED).sort(),
    'the allow-list names modules that still start processes',
  );
});

test('every module that starts an MCP server or a command for a request uses startProgram', () => {
  for (const name of ['src/experiment/probes.ts', 'src/probe/peer/stdio.ts', 'src/toolcall/stdio-proxy.ts']) {
    const text = readFileSync(join(repoRoot, name), 'utf8');
    assert.match(text, /startProgram\(/, name);
  }
});
