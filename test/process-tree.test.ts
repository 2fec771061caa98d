/**
 * Nothing a spawned MCP server starts outlives the bound: a server that forks a daemon (setsid(),
 * so in neither its process group nor its session; SIGTERM ignored; the server's stdout kept
 * open) is ended with the server — by spawnTree itself, by `faultline probe`, by the
 * fault_probe_mcp_server tool, and by the tool-call plane's scenario and stdio proxy, whether
 * the run ends normally or is cut. Real processes (test/fixtures/probe/setsid-server.mjs); time
 * only as wide inequalities.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { cliPath, fixturePath } from './helpers/repo.js';
import { running } from './helpers/processes.js';
import { commandsAllowed, connectInMemory, textOf } from './helpers/mcp.js';
import { HANG_GUARD_MS } from './helpers/wait.js';
import { spawnTree } from '../src/process-group.js';
import { ProgramPolicy } from '../src/consent/index.js';

const SETSID = fixturePath('probe', 'setsid-server.mjs');
const linux = process.platform === 'linux';

async function withPidFile<T>(work: (pidFile: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'tree-'));
  try {
    return await work(join(dir, 'pids'), dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function pidsIn(file: string, count = 2): Promise<number[]> {
  for (let i = 0; i < 200; i++) {
    const pids = (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
    if (pids.length >= count) return pids;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${file}: the server did not write its pids`);
}

/** The pids still running (zombies do not run) after a short settling time. */
async function survivors(pids: number[]): Promise<number[]> {
  for (let i = 0; i < 40 && pids.some(running); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return pids.filter(running);
}

test('spawnTree finds a setsid() daemon by its mark, and stop() ends it with the server', {
  skip: !linux && 'needs /proc',
  timeout: HANG_GUARD_MS,
}, async () => {
  await withPidFile(async (pidFile) => {
    const tree = spawnTree(process.execPath, [SETSID], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...process.env, PIDS: pidFile },
    });
    const [server, daemon] = await pidsIn(pidFile);
    assert.ok(running(daemon!), 'the daemon runs');
    // Not in the server's group: signalling the group alone would miss it.
    const stat = await readFile(`/proc/${daemon}/stat`, 'utf8');
    assert.notEqual(
      Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]),
      server,
      'the daemon left the process group',
    );
    assert.deepEqual([...tree.members()].sort(), [server, daemon].sort());
    assert.equal(await tree.stop(200), true);
    assert.deepEqual(await survivors([server!, daemon!]), []);
    assert.ok(tree.child.stdout!.destroyed, 'our end of the pipe the daemon held is closed');
  });
});

test('faultline probe: the daemon a server left is ended, and the CLI exits within moments of its report', {
  skip: !linux && 'needs /proc',
  timeout: HANG_GUARD_MS,
}, async () => {
  await withPidFile(async (pidFile, dir) => {
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          cliPath,
          'probe',
          '--quiet',
          '--cases',
          '2',
          '--timeout',
          '20000',
          '--json',
          join(dir, 'r.json'),
          '--',
          process.execPath,
          SETSID,
        ],
        {
          env: { ...process.env, PIDS: pidFile },
          stdio: 'ignore',
        },
      );
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    const wall = Date.now() - started;
    const report = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8')) as { durationMs: number; error?: string };
    assert.equal(report.error, undefined);
    assert.equal(code, 0);
    // Start-up and writing aside, the process ends with its report (it took the daemon's 600 s before). A minute's
    // margin: a loaded machine took 7.5 s to start and write; the daemon's 600 s is ten times that.
    assert.ok(
      wall < report.durationMs + 60_000,
      `exited ${wall - report.durationMs} ms after a report of ${report.durationMs} ms`,
    );
    const pids = await pidsIn(pidFile);
    assert.ok(pids.length >= 2);
    assert.deepEqual(await survivors(pids), [], 'a server or its daemon outlived the probe');
  });
});

test('fault_probe_mcp_server: no daemon of the probed server is left once the tool answered', {
  skip: !linux && 'needs /proc',
  timeout: HANG_GUARD_MS,
}, async () => {
  await withPidFile(async (pidFile) => {
    const { client, close } = await connectInMemory(commandsAllowed());
    try {
      // The server's environment is not passed on to what a tool starts (src/consent): env(1) sets PIDS.
      const result = await client.callTool({
        name: 'fault_probe_mcp_server',
        arguments: {
          command: '/usr/bin/env',
          args: [`PIDS=${pidFile}`, process.execPath, SETSID],
          cases: 1,
          families: ['PROTO', 'TOOL'],
        },
      });
      assert.match(textOf(result), /probe of/);
      assert.deepEqual(await survivors(await pidsIn(pidFile)), []);
    } finally {
      await close();
    }
  });
});

for (const end of ['normal', 'cut'] as const) {
  test(`tool-call scenario (${end} end): the server's daemon is ended before the scenario answers`, {
    skip: !linux && 'needs /proc',
    timeout: HANG_GUARD_MS,
  }, async () => {
    const { runToolCallScenario } = await import('../src/toolcall/scenario.js');
    const { validatePlan } = await import('../src/toolcall/plan.js');
    await withPidFile(async (pidFile) => {
      const previous = process.env.PIDS;
      process.env.PIDS = pidFile;
      if (end === 'cut') process.env.HANG_CALLS = '1';
      const cut = new AbortController();
      const cutAfterMs = 1500;
      const started = Date.now();
      try {
        const run = runToolCallScenario({
          programs: ProgramPolicy.owner(),
          target: { command: process.execPath, args: [SETSID] },
          plan: validatePlan({ faults: [] }),
          calls: [{ tool: 'echo', arguments: { text: 'x' } }],
          tasks: end === 'normal' ? 2 : 1,
          resilience: false,
          callTimeoutMs: 60_000,
          signal: cut.signal,
        });
        if (end === 'cut') {
          // The calls hang (HANG_CALLS): only the cut ends the run.
          setTimeout(() => cut.abort(), cutAfterMs);
          await assert.rejects(run);
          assert.ok(
            Date.now() - started < cutAfterMs + 4000,
            `answered ${Date.now() - started - cutAfterMs} ms after the cut`,
          );
        } else assert.equal((await run).slis.calls, 2);
      } finally {
        delete process.env.HANG_CALLS;
        if (previous === undefined) delete process.env.PIDS;
        else process.env.PIDS = previous;
      }
      assert.deepEqual(await survivors(await pidsIn(pidFile)), []);
    });
  });
}

test('tool-call stdio proxy: when the client leaves, the server and its daemon are ended and the proxy returns', {
  skip: !linux && 'needs /proc',
  timeout: HANG_GUARD_MS,
}, async () => {
  const { runStdioProxy } = await import('../src/toolcall/stdio-proxy.js');
  const { ToolPlane } = await import('../src/toolcall/session.js');
  const { validatePlan } = await import('../src/toolcall/plan.js');
  await withPidFile(async (pidFile) => {
    const input = new PassThrough();
    const output = new PassThrough();
    output.resume();
    const proxy = runStdioProxy({
      programs: ProgramPolicy.owner(),
      command: process.execPath,
      args: [SETSID],
      plane: new ToolPlane(validatePlan({ faults: [] })),
      input,
      output,
      stderr: 'ignore',
      env: { ...process.env, PIDS: pidFile },
      graceMs: 300,
    });
    const pids = await pidsIn(pidFile);
    input.end(); // the client left
    const started = Date.now();
    await proxy;
    // A hang guard: without the ending, the proxy waits on the daemon, which lives 600 s; 5 s was
    // a figure a starved machine can miss (the grace, the kills and the reaping are several turns).
    assert.ok(Date.now() - started < 30_000, `the proxy took ${Date.now() - started} ms to return`);
    assert.deepEqual(await survivors(pids), []);
  });
});
