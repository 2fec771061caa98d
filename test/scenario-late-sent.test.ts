/**
 * A failed latency SLO when the load generator ran behind (late-sent.ts, verdict.ts): inconclusive when the SLO holds
 * without the requests this machine sent late, failed when it fails without them too; the generator's lateness is a
 * caveat kept apart from the verdict's reasons; counts are pluralised and the worst lateness is never rounded down.
 * Built from explicit samples and the fixed report result: no run, no clock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { plural } from '../src/kernel/plural.js';
import { generatorBehindText, generatorLateness, worstLate } from '../src/load/index.js';
import { createSamples } from '../src/load/samples.js';
import { renderReport } from '../src/report/markdown.js';
import { judgeSentOnTime } from '../src/scenario/late-sent.js';
import { decideVerdict, evaluateSlos, parseSlo, scenarioFromArguments } from '../src/scenario/index.js';
import { fixedResult } from './fixtures/scenario/fixed-result.js';

const SLO = parseSlo('95% @ 100ms');

/**
 * 100 requests 10 ms apart answering in 5 ms; `late` of them sent 295 ms late, `slow` more kept 300 ms by the target.
 */
function samples(late: number, slow: number) {
  const samples = createSamples(100);
  for (let i = 0; i < 100; i++) {
    samples.intendedStartMs[i] = i * 10;
    const sentLate = i < late;
    const targetSlow = !sentLate && i < late + slow;
    samples.serviceMs[i] = targetSlow ? 300 : 5;
    samples.latencyMs[i] = sentLate ? 300 : samples.serviceMs[i]!;
  }
  return samples;
}

function judged(late: number, slow: number, behind = true) {
  const run = samples(late, slow);
  const sorted = Float64Array.from(run.latencyMs).sort();
  const slos = evaluateSlos([SLO], sorted, 0);
  return { slos, onTime: judgeSentOnTime([SLO], slos, run, { fromMs: -Infinity, toMs: Infinity }, behind) };
}

async function verdictOf(late: number, slow: number) {
  const spec = await scenarioFromArguments(
    'latency',
    { url: 'http://127.0.0.1:8080/api', latency: 50, slos: ['95% @ 100ms'] },
    makeConfig().scenario,
  );
  const { slos, onTime } = judged(late, slow);
  const run = { ...fixedResult().run, slos, ...(onTime && { slosSentOnTime: onTime }) };
  return decideVerdict(spec, run);
}

describe('a latency SLO failed while the generator ran behind', () => {
  test('holds without the late-sent requests: inconclusive, saying why', async () => {
    const { slos, onTime } = judged(6, 0);
    assert.equal(slos[0]!.pass, false);
    assert.equal(onTime?.leftOut, 6);
    assert.equal(onTime?.requests, 94);
    assert.equal(onTime?.slos[0]!.pass, true);
    const { verdict, reasons } = await verdictOf(6, 0);
    assert.equal(verdict, 'inconclusive');
    assert.match(reasons[0]!, /^SLO "95% @ 100ms" failed, but the load generator \(this machine\) ran behind/);
    assert.match(reasons[0]!, /without the 6 requests sent more than 10 ms after their intended start, p95 is 5\.0 ms/);
  });

  test('fails without the late-sent requests too: failed, the target is slow', async () => {
    const { onTime } = judged(1, 6);
    assert.equal(onTime?.slos[0]!.pass, false);
    const { verdict, reasons } = await verdictOf(1, 6);
    assert.equal(verdict, 'failed');
    assert.equal(reasons[0], 'SLO "95% @ 100ms" failed.');
  });

  test('a generator that was not behind leaves the failure alone', () => {
    assert.equal(judged(6, 0, false).onTime, undefined);
  });
});

describe('caveats and wording', () => {
  test("the generator's lateness is a caveat after the verdict line, not its reason", () => {
    const result = { ...fixedResult(), verdict: 'passed' as const, verdictReasons: [], verdictCaveats: ['LATE'] };
    const report = renderReport(result);
    assert.match(report, /^\*\*Verdict: Passed\*\* — every SLO held with the fault acting on the traffic\.$/m);
    assert.match(report, /^- Caveat \(not the verdict's reason\): LATE$/m);
  });

  test('one request is "1 request"; the worst lateness is rounded up past the threshold', () => {
    assert.equal(plural(1, 'request'), '1 request');
    assert.equal(plural(0, 'request'), '0 requests');
    const lateness = generatorLateness({ requests: 50, sentLate: 1, worstTickLateMs: 10.3 });
    assert.equal(worstLate(lateness), 'up to 11 ms');
    const text = generatorBehindText(lateness)!;
    assert.match(
      text,
      /ran behind: 1 request \(2\.0%\) left more than 10 ms after its intended start .* \(up to 11 ms\)/,
    );
  });
});
