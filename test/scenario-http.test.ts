/** fault_run_http_error_impact_scenario and `faultline run http-error`, against a real upstream on loopback. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ScenarioResult } from '../src/scenario/index.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { startUpstream, type Upstream } from './fixtures/http/upstream.js';
import { cliPath } from './helpers/repo.js';
import { closedPort } from './fixtures/load/servers.js';
import { LOOSE_SLOS, startAppCallingUpstream } from './fixtures/scenario/app.js';

let upstream: Upstream;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;

before(async () => {
  upstream = await startUpstream();
  mcp = await connectInMemory();
});
after(async () => {
  await mcp.close();
  await upstream.close();
});

/** The tool, with SLOs a busy machine cannot fail unless the test names its own. */
const call = (args: Record<string, unknown>) =>
  mcp.client.callTool({
    name: 'fault_run_http_error_impact_scenario',
    arguments: { slos: LOOSE_SLOS, ...args },
  }) as Promise<CallToolResult>;

describe('fault_run_http_error_impact_scenario', () => {
  it("answers fault's error at the given probability, never reaching the upstream for those requests", async () => {
    const before = upstream.received.length;
    const response = await call({
      url: `http://127.0.0.1:${upstream.port}/ok`,
      duration: '1s',
      num_clients: 5,
      rps: 20,
      status_code: 503,
      probability: 0.5,
      seed: 11,
      latency: 5,
    });
    assert.notEqual(response.isError, true, textOf(response));
    const result = response.structuredContent as unknown as ScenarioResult;
    const load = result.run.load!;
    assert.equal(load.requests, 100);
    assert.equal(result.fault.type, 'http_error');
    assert.deepEqual(result.ignoredArguments, ['latency']);
    const errors = load.statusCodes['503'] ?? 0;
    // Binomial(100, 0.5): ±5 sd.
    assert.ok(errors > 25 && errors < 75, `${errors} errors`);
    // The warm requests, sent before the clock and the fault, reach it too (and are in no figure).
    assert.equal(upstream.received.length - before, 100 - errors + (load.warmRequests ?? 0));
    assert.equal(result.run.proxy.httpFaults![0]!.applications, errors);
    assert.equal(result.passed, false);
    assert.match(textOf(response), /HTTP Error: Status: 503, Probability: 50%, not forwarded/);
    // The injected 503s are the fault's, not the endpoint's (which answered every request 200).
    assert.ok(
      result.verdictReasons.includes(`503 × ${errors}: injected by the HTTP fault, as asked.`),
      result.verdictReasons.join('\n'),
    );
    assert.doesNotMatch(textOf(response), /the endpoint failed/);
  });

  it('runs the other HTTP faults by http_fault', async () => {
    const response = await call({
      url: `http://127.0.0.1:${upstream.port}/json`,
      duration: '500ms',
      num_clients: 2,
      rps: 10,
      http_fault: 'rate_limit',
      retry_after: 3,
    });
    const result = response.structuredContent as unknown as ScenarioResult;
    assert.equal(result.run.load!.statusCodes['429'], 10);
  });

  it(
    'calls a body-only fault in front of the url inconclusive: the ' + 'load reads statuses and times, not bodies',
    async () => {
      for (const args of [{ http_fault: 'malformed' }, { http_fault: 'schema_mismatch', missing_fields: ['id'] }]) {
        const response = await call({
          url: `http://127.0.0.1:${upstream.port}/json`,
          duration: '500ms',
          num_clients: 2,
          rps: 10,
          ...args,
        });
        const result = response.structuredContent as unknown as ScenarioResult;
        // The fault acted on every response and every SLO held, yet nothing measured could show it.
        assert.equal(result.run.proxy.httpFaults![0]!.applications, 10);
        assert.equal(result.verdict, 'inconclusive', result.verdictReasons.join('\n'));
        assert.match(
          result.verdictReasons.join('\n'),
          /changes only response bodies, which the load does not read.*proxies/,
        );
      }
    },
  );

  it(
    'through proxies, a fault that answers without calling the ' + 'upstream still counts the app as connected',
    async () => {
      const port = await closedPort();
      // The app answers 200 with whatever its dependency said: it shrugs off the injected 503s.
      const app = await startAppCallingUpstream(port);
      try {
        const response = await call({
          url: `${app.origin}/`,
          duration: '500ms',
          num_clients: 2,
          rps: 10,
          status_code: 503,
          proxies: [`${port}=127.0.0.1:${upstream.port}`],
        });
        const result = response.structuredContent as unknown as ScenarioResult;
        assert.equal(result.run.proxy.httpFaults![0]!.applications, 10);
        assert.equal(result.run.proxy.mappings[0]!.connections, 0); // no request went on to the upstream
        assert.ok(result.run.proxy.mappings[0]!.httpConnections! >= 1);
        assert.equal(result.verdict, 'passed', result.verdictReasons.join('\n'));
        assert.match(textOf(response), new RegExp(`\\| ${port} \\| \\d+ from clients, 0 to the target \\|`));
      } finally {
        await app.close();
      }
    },
  );

  it('refuses bad arguments, naming them', async () => {
    const url = `http://127.0.0.1:${upstream.port}/`;
    // The schema publishes the range the fault validates (400..599), so the tool layer refuses it first.
    assert.match(textOf(await call({ url, status_code: 200 })), /^status_code: must be at least 400 \(got 200\)/);
    assert.match(
      textOf(await call({ url, delay: 5 })),
      /^delay: belongs to http_fault latency; error takes status_code, error_body, forward, probability/,
    );
    assert.match(textOf(await call({ url, http_fault: 'schema_mismatch' })), /^missing_fields: schema_mismatch needs/);
    assert.match(textOf(await call({ url: 'https://127.0.0.1:1/' })), /^url: an https:\/\/ url keeps TLS end to end/);
    assert.match(textOf(await call({ url, http_fault: 'teapot' })), /http_fault/);
  });
});

describe('faultline run http-error', () => {
  it('prints the report and exits 3 when the SLOs fail', async () => {
    const child = spawn(
      process.execPath,
      [
        cliPath,
        'run',
        'http-error',
        '--url',
        `http://127.0.0.1:${upstream.port}/`,
        '--duration',
        '500ms',
        '--status-code',
        '502',
        '--num-clients',
        '2',
        '--rps',
        '10',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.equal(code, 3, stderr);
    assert.match(stdout, /HTTP Error: Status: 502/);
    const wrong = spawn(
      process.execPath,
      [cliPath, 'run', 'latency', '--url', `http://127.0.0.1:${upstream.port}/`, '--status-code', '502'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let wrongErr = '';
    wrong.stderr.on('data', (d: Buffer) => (wrongErr += d.toString()));
    assert.equal(await new Promise<number | null>((resolve) => wrong.once('close', resolve)), 2);
    assert.match(wrongErr, /--status-code applies to 'http-error' scenarios/);
  });
});
