/**
 * The probes against a deliberately faulty MCP server (test/fixtures/probe/faulty-server.mjs, its
 * faults chosen by FAULTS): each fault is found under its leaf, and the well-behaved server passes.
 * Over stdio and over HTTP (a server with no token, Origin, Host or session checks).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixturePath } from './helpers/repo.js';
import { startFixtureServer } from './helpers/fixture-server.js';
import {
  computeCoverage,
  loadTaxonomy,
  runProbe,
  type FamilyId,
  type ProbeReport,
  type Target,
} from '../src/probe/index.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostileCases, slowArguments, validArguments } from '../src/probe/args.js';
import { checkTaxonomy } from '../src/probe/taxonomy.js';
import { ProgramPolicy } from '../src/consent/index.js';

const SERVER = fixturePath('probe', 'faulty-server.mjs');

async function probe(faults: string, families: FamilyId[] = [], target?: Target): Promise<ProbeReport> {
  const taxonomy = await loadTaxonomy();
  return runProbe(
    target ?? { kind: 'stdio', command: process.execPath, args: [SERVER], env: { FAULTS: faults } },
    taxonomy,
    {
      programs: ProgramPolicy.owner(),
      cases: 12,
      seed: 1,
      families,
      allowWrites: false,
      callTimeoutMs: 1500,
      overallTimeoutMs: 60_000,
    },
  );
}

const reports = new Map<string, Promise<ProbeReport>>();
/**
 * probe() of the fixture server, run once for the tests that read the same faults and families: the
 * probe is seeded, so a second run would repeat the first, and each costs its server's processes.
 */
function probeShared(faults: string, families: FamilyId[]): Promise<ProbeReport> {
  const key = `${faults} ${families.join(',')}`;
  let report = reports.get(key);
  if (!report) reports.set(key, (report = probe(faults, families)));
  return report;
}

const failed = (report: ProbeReport): string[] =>
  report.leaves
    .filter((l) => l.status === 'failed')
    .map((l) => l.id)
    .sort();

test('a well-behaved server passes every leaf that applies; cancellation is checked on its slow tool', async () => {
  const report = await probe('slow');
  assert.equal(report.error, undefined);
  assert.deepEqual(
    failed(report),
    [],
    JSON.stringify(
      report.leaves.flatMap((l) => l.findings),
      null,
      1,
    ),
  );
  const status = Object.fromEntries(report.leaves.map((l) => [l.id, l.status]));
  assert.equal(status['FAULT-TIMEOUT-CANCEL-IGNORED'], 'passed');
  assert.equal(status['FAULT-TOOL-CRASH'], 'passed');
  assert.equal(status['FAULT-SCHEMA-OUTPUT-MISMATCH'], 'passed');
  // stdio: the HTTP-only leaves did not apply, and say so rather than "passed".
  assert.equal(status['FAULT-SECURITY-HTTP-ORIGIN'], 'n/a');
  assert.equal(status['FAULT-STATE-STALE-SESSION'], 'n/a');
  // Safe by default: the tool not annotated read-only was never called.
  assert.ok(report.tools.skipped.includes('delete_everything'));
  assert.ok(!report.tools.called.includes('delete_everything'));
});

const CASES: Array<{ faults: string; families: FamilyId[]; leaf: string; status?: 'warning' }> = [
  // Serving a request sent before initialize breaks no MUST (clients are asked not to send one).
  { faults: 'pre-init', families: ['PROTO'], leaf: 'FAULT-PROTO-PRE-INIT', status: 'warning' },
  { faults: 'echo-version', families: ['PROTO'], leaf: 'FAULT-PROTO-VERSION-NEGOTIATION' },
  { faults: 'bad-ping', families: ['PROTO'], leaf: 'FAULT-PROTO-PING' },
  { faults: 'die-on-garbage', families: ['PROTO'], leaf: 'FAULT-PROTO-MALFORMED-JSON' },
  { faults: 'crash', families: ['TOOL'], leaf: 'FAULT-TOOL-CRASH' },
  { faults: 'protocol-error', families: ['TOOL'], leaf: 'FAULT-TOOL-PROTOCOL-ERROR', status: 'warning' },
  { faults: 'pollute', families: ['TOOL'], leaf: 'FAULT-TOOL-STDOUT-POLLUTION' },
  { faults: 'bad-structured', families: ['SCHEMA'], leaf: 'FAULT-SCHEMA-OUTPUT-MISMATCH' },
  { faults: 'no-structured', families: ['SCHEMA'], leaf: 'FAULT-SCHEMA-MISSING-STRUCTURED' },
  { faults: 'mutate', families: ['STATE'], leaf: 'FAULT-STATE-SURFACE-DRIFT', status: 'warning' },
  { faults: 'union', families: ['PROVIDER'], leaf: 'FAULT-PROVIDER-UNION-SCHEMA', status: 'warning' },
  { faults: 'traversal', families: ['SECURITY'], leaf: 'FAULT-SECURITY-PATH-TRAVERSAL' },
  { faults: 'injection', families: ['SECURITY'], leaf: 'FAULT-SECURITY-DESCRIPTION-INJECTION' },
  { faults: 'ignore-cancel', families: ['TIMEOUT'], leaf: 'FAULT-TIMEOUT-CANCEL-IGNORED', status: 'warning' },
  { faults: 'fake-resources', families: ['CONFIG'], leaf: 'FAULT-CONFIG-CAPABILITY-UNIMPLEMENTED' },
  { faults: 'mutate', families: ['CONFIG'], leaf: 'FAULT-CONFIG-ANNOTATION-CONTRADICTED' },
];

for (const c of CASES) {
  test(
    `${c.faults}: found under ${c.leaf} as a ` +
      `${c.status ?? 'failure'}, and only the selected family is ` +
      `reported`,
    async () => {
      const report = await probeShared(c.faults, c.families);
      const leaf = report.leaves.find((l) => l.id === c.leaf)!;
      assert.equal(leaf.status, c.status ?? 'failed', JSON.stringify(report.leaves.map((l) => [l.id, l.status])));
      assert.ok(report.leaves.every((l) => c.families.includes(l.family)));
      const finding = leaf.findings[0]!;
      assert.equal(finding.severity, c.status === 'warning' ? 'warning' : 'failure');
      assert.ok(finding.message.length > 0);
      if (!['FAULT-CONFIG-ANNOTATION-CONTRADICTED', 'FAULT-TOOL-STDOUT-POLLUTION'].includes(c.leaf)) {
        assert.ok(finding.exchange.length > 0, 'a finding quotes its exchange');
      }
    },
  );
}

test('a crash is shown by the exact request that caused it and the exit', async () => {
  const report = await probeShared('crash', ['TOOL']);
  const finding = report.leaves.find((l) => l.id === 'FAULT-TOOL-CRASH')!.findings[0]!;
  assert.match(finding.exchange.map((x) => x.text).join('\n'), /"name":"read_thing"[\s\S]*process exited \(code 3/);
  assert.match(finding.message, /count: \w+ instead of number/);
});

test('listChanged advertised but never seen is inconclusive, not passed and not failed', async () => {
  const report = await probe('list-changed', ['CONFIG']);
  assert.equal(report.leaves.find((l) => l.id === 'FAULT-CONFIG-LIST-CHANGED')!.status, 'inconclusive');
});

test('a server that cannot be initialized is an error, and nothing passes', async () => {
  const report = await probe('', [], {
    kind: 'stdio',
    command: process.execPath,
    args: ['-e', 'process.stdin.resume(); setTimeout(() => {}, 60000)'],
  });
  assert.match(report.error ?? '', /could not initialize/);
  assert.equal(report.summary.passed, 0);
});

test(
  'a server that exits before initialize is an error with no ' + 'finding: the early request is not blamed for it',
  async () => {
    const report = await probe('', [], { kind: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'] });
    assert.match(report.error ?? '', /could not initialize the server: it exited/);
    assert.equal(report.startError, undefined);
    assert.deepEqual(failed(report), []);
    assert.equal(report.summary.findings, 0);
    // Every leaf applies but none was exercised: untested, saying why (coverage keeps them all), and
    // no note about how the server answered a version it never saw.
    assert.equal(report.summary.untested, report.leaves.length);
    assert.ok(
      report.leaves.every((leaf) => leaf.note === 'the server could not be initialized, so nothing was probed'),
    );
  },
);

test(
  'a server whose tools may not be called: what needs calls is ' + 'untested, with why, and no annotation check passes',
  async () => {
    const report = await probe('no-read-only', ['TOOL', 'SCHEMA', 'CONFIG', 'TIMEOUT']);
    assert.equal(report.tools.called.length, 0);
    const status = (id: string) => report.leaves.find((leaf) => leaf.id === id)!;
    for (const id of [
      'FAULT-TOOL-CRASH',
      'FAULT-TOOL-HANG',
      'FAULT-SCHEMA-OUTPUT-MISMATCH',
      'FAULT-TIMEOUT-CANCEL-IGNORED',
      'FAULT-CONFIG-ANNOTATION-CONTRADICTED',
    ]) {
      assert.equal(status(id).status, 'untested', id);
      assert.match(status(id).note ?? '', /none of the \d+ tools is annotated readOnlyHint/, id);
    }
    // Checks that need no call still ran.
    assert.equal(status('FAULT-SCHEMA-INVALID-INPUT-SCHEMA').status, 'passed');
    assert.equal(report.summary.untested, report.leaves.filter((leaf) => leaf.status === 'untested').length);
    assert.ok(report.summary.untested >= 5);
  },
);

test('coverage: an untested leaf stays in the denominator, not exercised; an n/a one leaves it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-untested-'));
  try {
    const taxonomy = await loadTaxonomy();
    const leaves = [
      { id: 'FAULT-PROTO-PING', status: 'passed' },
      { id: 'FAULT-TOOL-CRASH', status: 'untested' },
      { id: 'FAULT-SECURITY-HTTP-TOKEN', status: 'n/a' },
    ];
    await writeFile(
      join(dir, 'run.json'),
      JSON.stringify({
        format: 'faultline-run-record',
        version: 1,
        kind: 'probe',
        name: 'run',
        startedAt: new Date().toISOString(),
        leaves,
      }),
    );
    const report = await computeCoverage(
      { version: 1, agents: false, runs: [{ name: 'run', kind: 'probe', record: 'run.json' }], baseDir: dir },
      taxonomy,
    );
    const leaf = (id: string) => report.leaves.find((entry) => entry.id === id)!;
    assert.deepEqual([leaf('FAULT-PROTO-PING').exercised, leaf('FAULT-PROTO-PING').applicable], [true, true]);
    assert.deepEqual([leaf('FAULT-TOOL-CRASH').exercised, leaf('FAULT-TOOL-CRASH').applicable], [false, true]);
    assert.equal(leaf('FAULT-SECURITY-HTTP-TOKEN').applicable, false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a traversal call that gets no answer (the server died) is untested, not passed', async () => {
  const report = await probe('', ['SECURITY'], {
    kind: 'stdio',
    command: process.execPath,
    args: [fixturePath('probe', 'crash-on-call.mjs')],
  });
  const traversal = report.leaves.find((leaf) => leaf.id === 'FAULT-SECURITY-PATH-TRAVERSAL')!;
  assert.equal(traversal.status, 'untested');
  assert.equal(traversal.note, 'read_file.path got no answer');
});

test(
  'a server that exits on every call leaves what only an answered ' + 'call shows untested, with why, not n/a',
  async () => {
    const report = await probe('', ['SCHEMA', 'STATE', 'CONFIG'], {
      kind: 'stdio',
      command: process.execPath,
      args: [fixturePath('probe', 'crash-on-call.mjs')],
    });
    const leaf = (id: string) => report.leaves.find((entry) => entry.id === id)!;
    for (const id of ['FAULT-SCHEMA-MISSING-STRUCTURED', 'FAULT-SCHEMA-OUTPUT-MISMATCH']) {
      assert.equal(leaf(id).status, 'untested', id);
      assert.match(leaf(id).note ?? '', /no successful result to schema-valid arguments from read_file/);
    }
    for (const id of [
      'FAULT-STATE-SURFACE-DRIFT',
      'FAULT-CONFIG-LIST-CHANGED',
      'FAULT-CONFIG-ANNOTATION-CONTRADICTED',
    ]) {
      assert.equal(leaf(id).status, 'untested', id);
      assert.match(leaf(id).note ?? '', /first session ended/);
    }
    // The input schema was seen and compiled: that leaf is passed, whatever the calls did.
    assert.equal(leaf('FAULT-SCHEMA-INVALID-INPUT-SCHEMA').status, 'passed');
  },
);

test('hostile cases are seeded: same seed, same cases; another seed, other cases', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] };
  assert.deepEqual(hostileCases(schema, 10, 7), hostileCases(schema, 10, 7));
  assert.notDeepEqual(JSON.stringify(hostileCases(schema, 10, 7)), JSON.stringify(hostileCases(schema, 10, 8)));
  assert.deepEqual(validArguments(schema), { a: 'a' });
});

test(
  'the cancellation probe asks a delay-like argument for a call ' +
    'that outlasts the cancel, within the schema bounds',
  () => {
    const sleep = {
      type: 'object',
      properties: { ms: { type: 'number' }, label: { type: 'string' } },
      required: ['ms'],
    };
    assert.deepEqual(slowArguments(sleep, 1650), { ms: 1650 });
    assert.deepEqual(
      slowArguments({ type: 'object', properties: { delay_seconds: { type: 'integer', maximum: 1 } } }, 1650),
      { delay_seconds: 1 },
    );
    assert.deepEqual(slowArguments({ type: 'object', properties: { sleepMs: { type: 'integer' } } }, 1650), {
      sleepMs: 1650,
    });
    assert.equal(
      slowArguments({ type: 'object', properties: { count: { type: 'number' }, messages: { type: 'number' } } }, 1650),
      undefined,
    );
    // No unit in the name, no guess: 1,650 seconds would hold the server's work for half an hour.
    assert.equal(
      slowArguments({ type: 'object', properties: { delay: { type: 'number' }, timeout: { type: 'number' } } }, 1650),
      undefined,
    );
  },
);

/** The faulty server over HTTP with these faults; resolves with its URL and the child to kill. */
const httpFaultyServer = (faults: string): ReturnType<typeof startFixtureServer> =>
  startFixtureServer(SERVER, { FAULTS: faults });

test('over HTTP, a server without token, Origin, Host or session checks fails those leaves', async () => {
  const { url, child } = await httpFaultyServer('');
  try {
    const report = await probe('', ['SECURITY', 'STATE'], { kind: 'http', url, token: 'secret-token' });
    const f = failed(report);
    for (const leaf of [
      'FAULT-SECURITY-HTTP-TOKEN',
      'FAULT-SECURITY-HTTP-ORIGIN',
      'FAULT-SECURITY-HTTP-HOST',
      'FAULT-STATE-STALE-SESSION',
    ]) {
      assert.ok(f.includes(leaf), `${leaf} not failed: ${f.join(', ')}`);
    }
  } finally {
    child.kill('SIGKILL');
  }
});

test(
  'an HTTP server that dies on malformed JSON fails that leaf ' + 'alone: what comes after is untested, not failed',
  async () => {
    const { url, child } = await httpFaultyServer('die-on-garbage');
    try {
      const report = await probe('', [], { kind: 'http', url });
      const status = Object.fromEntries(report.leaves.map((l) => [l.id, l.status]));
      assert.deepEqual(failed(report), ['FAULT-PROTO-MALFORMED-JSON']);
      // Before the server died: decided. After: untested with why, never failed by a dead server.
      assert.equal(status['FAULT-PROTO-PING'], 'passed');
      for (const leaf of [
        'FAULT-PROTO-INVALID-REQUEST',
        'FAULT-CONFIG-CAPABILITY-UNIMPLEMENTED',
        'FAULT-SECURITY-HTTP-ORIGIN',
        'FAULT-TOOL-CRASH',
      ]) {
        assert.equal(status[leaf], 'untested', leaf);
        assert.match(
          report.leaves.find((l) => l.id === leaf)!.note ?? '',
          /stopped answering after FAULT-PROTO-MALFORMED-JSON/,
        );
      }
      // What does not apply to this target stays n/a.
      assert.equal(status['FAULT-TOOL-STDOUT-POLLUTION'], 'n/a');
      assert.equal(status['FAULT-SECURITY-HTTP-TOKEN'], 'n/a');
    } finally {
      child.kill('SIGKILL');
    }
  },
);

test(
  'an HTTP server that exits on a hostile call is a crash (the ' +
    'connection went away), not a hang, and nothing after it fails',
  async () => {
    const { url, child } = await httpFaultyServer('crash');
    try {
      const report = await probe('', [], { kind: 'http', url });
      const status = Object.fromEntries(report.leaves.map((l) => [l.id, l.status]));
      assert.deepEqual(
        failed(report),
        ['FAULT-TOOL-CRASH'],
        JSON.stringify(report.leaves.flatMap((l) => l.findings.map((f) => f.message))),
      );
      assert.match(
        report.leaves.find((l) => l.id === 'FAULT-TOOL-CRASH')!.findings[0]!.message,
        /dropped the connection/,
      );
      for (const leaf of ['FAULT-SECURITY-HTTP-ORIGIN', 'FAULT-STATE-STALE-SESSION', 'FAULT-TIMEOUT-CANCEL-IGNORED'])
        assert.equal(status[leaf], 'untested', leaf);
    } finally {
      child.kill('SIGKILL');
    }
  },
);

test(
  'the shipped taxonomy maps every tool-call-plane plan fault, and ' + 'a broken registry is refused by name',
  async () => {
    const taxonomy = await loadTaxonomy();
    const { FAULT_TYPES } = await import('../src/toolcall/plan.js');
    for (const fault of FAULT_TYPES) assert.ok((taxonomy.injections.toolcall?.[fault] ?? []).length > 0, fault);
    assert.equal(taxonomy.families.length, 8);
    // Every leaf is probed by something in runner.ts: its family has leaves, ids are well formed.
    for (const family of taxonomy.families)
      assert.ok(
        taxonomy.leaves.some((l) => l.id.startsWith(`FAULT-${family.id}-`)),
        family.id,
      );
    const broken = structuredClone(taxonomy) as unknown as {
      leaves: Array<{ id: string }>;
      injections: Record<string, Record<string, string[]>>;
    };
    broken.leaves[0]!.id = 'FAULT-NOPE-X';
    broken.injections.toolcall!.latency = ['FAULT-TOOL-MISSING'];
    assert.throws(() => checkTaxonomy(broken), /FAULT-NOPE-X[\s\S]*FAULT-TOOL-MISSING/);
  },
);

test(
  'a tool with an outputSchema the probe may not call leaves the ' + 'output leaves untested, with why, not n/a',
  async () => {
    const report = await probe('writable-output', ['SCHEMA']);
    const status = (id: string) => report.leaves.find((l) => l.id === id)!;
    assert.deepEqual(report.tools.skipped, ['read_thing', 'delete_everything']);
    for (const id of ['FAULT-SCHEMA-OUTPUT-MISMATCH', 'FAULT-SCHEMA-MISSING-STRUCTURED']) {
      assert.equal(status(id).status, 'untested', id);
      assert.match(status(id).note ?? '', /read_thing declares an outputSchema but is not annotated readOnlyHint/, id);
    }
    assert.equal(status('FAULT-SCHEMA-INVALID-INPUT-SCHEMA').status, 'passed');
  },
);
