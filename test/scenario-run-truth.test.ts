/**
 * What a scenario run says is true: progress counts errors as they settle (not a second late), a cancel names the
 * scenario the person ran, and a phase whose load generator ran behind is said, with the impact comparison called
 * inconclusive (the SLO verdict left as it is).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { generatorLateness } from '../src/load/index.js';
import { renderReport } from '../src/report/markdown.js';
import { runScenario, scenarioFromArguments } from '../src/scenario/index.js';
import { generatorNotes } from '../src/scenario/run.js';
import type { TestServer } from './fixtures/load/servers.js';
import { LOOSE_SLOS, startApp } from './fixtures/scenario/app.js';
import { fixedResult } from './fixtures/scenario/fixed-result.js';

let app: TestServer;
before(async () => {
  app = await startApp();
});
after(async () => {
  await app.close();
});

test('progress counts errors live: every request to a failing endpoint is an error as soon as it settles', async () => {
  const spec = await scenarioFromArguments(
    'latency',
    { url: `${app.origin}/status/500`, duration: '3s', num_clients: 2, rps: 100, latency: 1, slos: LOOSE_SLOS },
    makeConfig().scenario,
  );
  const counts: Array<[settled: number, errors: number]> = [];
  const result = await runScenario(spec, {
    onProgress: (progress) => {
      const figures = /(\d+) requests settled, (\d+) errors/.exec(progress.message);
      if (figures) counts.push([Number(figures[1]), Number(figures[2])]);
    },
  });
  assert.equal(result.run.load!.errors, result.run.load!.requests);
  assert.ok(
    counts.some(([settled]) => settled > 0),
    `some progress came mid-run: ${JSON.stringify(counts)}`,
  );
  for (const [settled, errors] of counts) assert.equal(errors, settled, JSON.stringify(counts));
});

test('a cancelled scenario says which scenario was cancelled, whichever part saw the cancel', async () => {
  const spec = await scenarioFromArguments(
    'latency',
    { url: `${app.origin}/ok`, duration: '10s', num_clients: 1, rps: 20, latency: 1, slos: LOOSE_SLOS },
    makeConfig().scenario,
  );
  const controller = new AbortController();
  const run = runScenario(spec, {
    signal: controller.signal,
    onProgress: (progress) => {
      if (/[1-9]\d* requests settled/.test(progress.message)) controller.abort();
    },
  });
  await assert.rejects(run, { name: 'CancelledError', message: 'latency scenario cancelled' });
});

test('a phase whose generator ran behind is named in the reasons, and the impact comparison is inconclusive', () => {
  const result = fixedResult();
  const baseline = result.baseline!;
  const onTime = generatorLateness({ requests: 20, sentLate: 0, worstTickLateMs: 1.2 });
  const late = generatorLateness({ requests: 20, sentLate: 12, worstTickLateMs: 808 });
  result.run.load!.generatorLate = onTime;
  baseline.load!.generatorLate = onTime;
  assert.deepEqual(generatorNotes(baseline, result.run), { reasons: [], impactWarning: null });

  baseline.load!.generatorLate = late;
  const notes = generatorNotes(baseline, result.run);
  assert.equal(notes.reasons.length, 1);
  assert.match(
    notes.reasons[0]!,
    /^In the baseline phase, the load generator \(this machine\) ran behind: 12 requests/,
  );
  assert.match(notes.reasons[0]!, /up to 808 ms/);
  assert.match(notes.impactWarning ?? '', /the baseline phase.*measures this machine as much as the target/);
  // Without a baseline there is no comparison to call inconclusive; the fault phase is still named.
  result.run.load!.generatorLate = late;
  const alone = generatorNotes(null, result.run);
  assert.equal(alone.impactWarning, null);
  assert.match(alone.reasons[0]!, /^In the fault phase/);

  // The report says it above the impact table.
  const report = renderReport({ ...result, impactWarning: notes.impactWarning });
  const impact = report.slice(report.indexOf('### Impact against the baseline'));
  assert.ok(impact.indexOf('Inconclusive comparison') < impact.indexOf('| Metric |'), impact);
  // The phase's own figure is in its load paragraph.
  assert.match(report, /faultline itself sent 12 requests \(60\.0%\) more than 10 ms after their intended start/);
});
