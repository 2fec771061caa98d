/**
 * What an outside trial of scenario runs found, each as a regression test against real servers on 127.0.0.1: a fault
 * window shorter than the run is judged over the requests due in it (over the whole run a short fault was diluted
 * and passed); a capacity run that completed no request is inconclusive; a url where nothing listens is refused
 * before the load (as an experiment's load.url); two mappings on one port and a negative seed are refused when read.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EXPORT_LIMITS, exportScenario } from '../src/cloud/index.js';
import { after, before, describe, test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { renderReport } from '../src/report/markdown.js';
import { runScenario, scenarioFromArguments } from '../src/scenario/index.js';
import { startApp } from './fixtures/scenario/app.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { cliPath } from './helpers/repo.js';
import { closedPort, type TestServer } from './fixtures/load/servers.js';

const limits = makeConfig().scenario;
let app: TestServer;

before(async () => {
  app = await startApp();
});
after(async () => {
  await app.close();
});

describe('scenario trial fixes', () => {
  test('a fault window shorter than the run: its SLOs are judged over the requests due in it', async () => {
    // 25 requests/s for 4 s, 1 s of them slowed by 1 s from 1 s to 1.3 s: about 8 of 100 requests. Over the whole
    // run p80 is a fast request's and the SLO held ("every SLO held with the fault acting"); over the window it fails.
    const spec = await scenarioFromArguments(
      'latency',
      {
        url: `${app.origin}/ok`,
        duration: '4s',
        num_clients: 1,
        rps: 25,
        latency: 1000,
        fault_start: '1s',
        fault_duration: '300ms',
        slos: ['p80 < 500ms'],
      },
      limits,
    );
    const result = await runScenario(spec);
    const load = result.run.load!;
    const window = load.duringFault!;
    assert.ok(window.requests >= 5 && window.requests <= 10, `${window.requests} requests due in the window`);
    // The whole run's figures stay: its p80 is under the threshold (the diluted figure the verdict used to take).
    assert.ok(load.requests >= 90, `${load.requests} requests`);
    assert.ok(load.percentiles.find((row) => row.percentile === 75)!.latencyMs < 500);
    assert.deepEqual(result.run.slosWindow, { fromMs: 1000, toMs: 1300, requests: window.requests });
    assert.equal(result.verdict, 'failed');
    assert.ok(result.run.slos[0]!.observed > 500, `window p80 ${result.run.slos[0]!.observed} ms`);
    assert.equal(
      result.verdictReasons[0],
      `SLO "p80 < 500ms" failed over the ${window.requests} requests due in the fault window (1s to 1.3s).`,
    );
    const report = renderReport(result);
    assert.match(
      report,
      new RegExp(`SLOs judged over the ${window.requests} requests due while the fault was active \\(1s–1\\.3s\\)`),
    );
    assert.match(report, /While the fault was active \(1s–1\.3s\)/);
  });

  test('a capacity run that completed no request is inconclusive, saying why, not failed on its error SLO', async () => {
    const spec = await scenarioFromArguments(
      'blackhole',
      { url: `${app.origin}/ok`, strategy: 'capacity', duration: '2s', timeout: 1, num_clients: 2 },
      limits,
    );
    const result = await runScenario(spec);
    const capacity = result.run.capacity!;
    assert.equal(capacity.responses, 0);
    assert.ok(capacity.timeouts > 0, `${capacity.timeouts} timeouts`);
    assert.equal(result.verdict, 'inconclusive');
    assert.match(
      result.verdictReasons[0]!,
      new RegExp(
        `^the closed loop completed no request in 2s \\(${capacity.sent} sent: ${capacity.timeouts} timed out ` +
          'after 1s.*\\), so it measured no requests/s: with a fault that holds every request',
      ),
    );
    assert.match(renderReport(result), /^\*\*Verdict: Inconclusive\*\* — the closed loop completed no request/m);
  });

  test('a url where nothing listens is refused before the load, with or without proxies', async () => {
    // It ran the whole load and said "SLO errors < 1% failed" (exit 3) over a target that refused every connection:
    // nothing about the fault was tested. One check, the experiment runner's preflight, for both commands.
    const [dead, listen] = [await closedPort(), await closedPort()];
    for (const proxies of [[], [`${listen}=127.0.0.1:${app.port}#dep`]]) {
      const spec = await scenarioFromArguments(
        'latency',
        { url: `http://127.0.0.1:${dead}/`, duration: '500ms', num_clients: 1, rps: 8, latency: 50, proxies },
        limits,
      );
      await assert.rejects(
        runScenario(spec),
        new RegExp(
          `^OperationalError: url http://127\\.0\\.0\\.1:${dead}/: nothing accepts connections at ` +
            `127\\.0\\.0\\.1:${dead} \\(ECONNREFUSED\\); start the app, or fix url: nothing was run$`,
        ),
      );
    }
    const cli = spawnSync(process.execPath, [cliPath, 'run', 'latency', '--url', `http://127.0.0.1:${dead}/`], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(cli.status, 1, cli.stderr);
    assert.match(cli.stderr, /nothing accepts connections at .*nothing was run/);
  });

  test('two mappings on one port and a seed that is negative or fractional are refused when read', async () => {
    const url = `${app.origin}/ok`;
    const [port, other] = [await closedPort(), await closedPort()];
    await assert.rejects(
      scenarioFromArguments(
        'latency',
        { url, proxies: [`${port}=127.0.0.1:${app.port}`, `${other}=127.0.0.1:1`, `${port}=127.0.0.1:2`] },
        limits,
      ),
      new RegExp(
        `^InputError: proxies\\[2\\] \\("${port}=127\\.0\\.0\\.1:2"\\): local port ${port} is also ` +
          `proxies\\[0\\] \\("${port}=127\\.0\\.0\\.1:${app.port}"\\)`,
      ),
    );
    for (const seed of [-1, 1.5]) {
      await assert.rejects(
        scenarioFromArguments('latency', { url, seed }, limits),
        /^InputError: seed: must be a whole/,
      );
    }
    // The CLI exits 2 naming the flags (it reached EADDRINUSE with exit 1), and the MCP tool answers an error.
    const cli = spawnSync(
      process.execPath,
      [cliPath, 'run', 'latency', '--url', url, '--proxy', `${port}=127.0.0.1:1`, '--proxy', `${port}=127.0.0.1:2`],
      { encoding: 'utf8' },
    );
    assert.equal(cli.status, 2, cli.stderr);
    assert.match(cli.stderr, new RegExp(`--proxy\\[1\\] .*local port ${port} is also --proxy\\[0\\]`));
    const negative = spawnSync(process.execPath, [cliPath, 'run', 'latency', '--url', url, '--seed', '-1'], {
      encoding: 'utf8',
    });
    assert.equal(negative.status, 2, negative.stderr);
    assert.match(negative.stderr, /--seed: must be a whole number ≥ 0 \(got -1\)/);
    const mcp = await connectInMemory();
    try {
      const result = await mcp.client.callTool({
        name: 'fault_run_latency_impact_scenario',
        arguments: { url, seed: -1, duration: '500ms' },
      });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /seed: must be a whole number ≥ 0/);
    } finally {
      await mcp.close();
    }
  });

  test("the k6 export of a partial fault window puts the SLOs' thresholds on the window's requests", async () => {
    const spec = await scenarioFromArguments(
      'latency',
      {
        url: 'http://checkout.internal:8080/pay',
        duration: '10s',
        fault_start: '5s',
        fault_duration: '400ms',
        slos: ['p95 < 200ms', 'errors < 1%'],
      },
      EXPORT_LIMITS,
    );
    const { document } = await exportScenario(spec, 'k6');
    const options = JSON.parse(/export const options = (\{[\s\S]*?\n\});/.exec(document)![1]!);
    assert.deepEqual(options.thresholds, {
      'http_req_duration{fault:in}': ['p(95)<200'],
      'http_req_failed{fault:in}': ['rate<0.01'],
    });
    assert.match(document, /const inFault = t >= 5000 && t < 5400;/);
    assert.match(document, /inFault \? Object\.assign\(\{\}, params, \{ tags: \{ fault: 'in' \} \}\) : params\);/);
    const file = join(mkdtempSync(join(tmpdir(), 'trial-k6-')), 'load.mjs');
    writeFileSync(file, document);
    await promisify(execFile)(process.execPath, ['--check', file]);
    rmSync(file);
  });
});
