/**
 * fault_suggest_service_level_objectives_slo when the model answers the way the reference tool's
 * guide shows (test/fixtures/llm/slos-fault-guide.json: `calendarPeriod: "NONE"`, windows-based
 * SLIs with a basic SLI performance or none, ratios written as percentages): accepted without a
 * repair turn and normalised, in every format; a reply that cannot be repaired still fails. Real
 * openai and ollama clients against the local fake LLM server, through a real MCP client.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig } from '../src/config.js';
import { createProvider } from '../src/llm/select.js';
import { normaliseCloudRunSlo } from '../src/llm/gcp-slo.js';
import { ratioQuery } from '../src/llm/slo-formats.js';
import { registerReviewTools } from '../src/tools/review.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { connectTools, textOf } from './helpers/mcp.js';
import { fixturePath } from './helpers/repo.js';

const GUIDE_REPLY = readFileSync(fixturePath('llm', 'slos-fault-guide.json'), 'utf8');
const SNIPPET = 'def index():\n    return httpx.get(UPSTREAM).json()\n';
const TOOL = 'fault_suggest_service_level_objectives_slo';

for (const api of ['openai', 'ollama'] as const) {
  describe(`the SLO shape of the reference tool's guide, ${api} provider`, () => {
    let fake: FakeLlm;
    let call: (args: Record<string, unknown>) => Promise<CallToolResult>;
    let close: () => Promise<void>;
    before(async () => {
      fake = await startFakeLlm();
      const llm = {
        client: api,
        baseUrl: api === 'openai' ? fake.openaiBaseUrl : fake.ollamaHost,
        promptModel: 'slo-model',
        timeoutMs: 60_000,
      };
      const session = await connectTools(
        (tools, ctx) =>
          registerReviewTools(tools, ctx, {
            provider: () => createProvider({ ...llm }, {}, { retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } }),
          }),
        makeConfig({ llm }),
      );
      call = (args) =>
        session.client.callTool({
          name: TOOL,
          arguments: { snippet: SNIPPET, lang: 'python', ...args },
        }) as Promise<CallToolResult>;
      close = session.close;
    });
    after(async () => {
      await close();
      await fake.close();
    });
    beforeEach(() => {
      fake.requests.length = 0;
    });

    test('format fault: accepted at once, the Cloud Monitoring SLOs normalised', async () => {
      fake.queueChat(GUIDE_REPLY);
      const result = await call({});
      assert.equal(result.isError, undefined, textOf(result));
      assert.equal(fake.chatRequests().length, 1, 'no repair turn');
      const slos = JSON.parse(textOf(result)) as Array<{
        sli: { prometheus: string; 'gcp/cloudrun': Record<string, any> };
      }>;
      assert.equal(slos.length, 3);
      for (const slo of slos) {
        const gcp = slo.sli['gcp/cloudrun'];
        assert.equal(gcp.calendarPeriod, undefined, '"NONE" is no calendar period');
        assert.equal(gcp.rollingPeriod, '300s', "the SLO's window");
      }
      const [latency, availability, errors] = slos.map(
        (slo) => slo.sli['gcp/cloudrun'].serviceLevelIndicator.windowsBased.goodTotalRatioThreshold,
      );
      assert.deepEqual(latency, { basicSliPerformance: { latency: { threshold: '0.3s' } }, threshold: 0.95 });
      assert.deepEqual(availability, { basicSliPerformance: { availability: {} }, threshold: 0.999 });
      assert.deepEqual(errors, { basicSliPerformance: { availability: {} }, threshold: 0.99 });
      // The SLIs themselves are kept as the model wrote them.
      assert.match(slos[1]!.sli.prometheus, /\*100$/);
      assert.deepEqual(result.structuredContent, { slos });
    });

    test('format openslo: the percentage ratios become ratios, the quantile a threshold objective', async () => {
      fake.queueChat(GUIDE_REPLY);
      const result = await call({ format: 'openslo', service: 'index' });
      assert.equal(result.isError, undefined, textOf(result));
      assert.equal(fake.chatRequests().length, 1);
      const documents = JSON.parse(textOf(result)) as Array<{ spec: Record<string, any> }>;
      assert.equal(documents.length, 3);
      assert.ok(documents[0]!.spec.indicator.spec.thresholdMetric);
      assert.deepEqual(documents[0]!.spec.objectives[0], {
        displayName: '95th percentile latency',
        target: 0.95,
        op: 'lte',
        value: 0.3,
      });
      const availability = documents[1]!.spec.indicator.spec.ratioMetric;
      assert.equal(availability.rawType, 'success');
      assert.doesNotMatch(availability.raw.metricSource.spec.query, /100/);
      assert.equal(documents[2]!.spec.indicator.spec.ratioMetric.rawType, 'failure');
      assert.equal(documents[2]!.spec.objectives[0].target, 0.99);
    });

    test('format sloth: the ratios carry {{.window}}, the quantile is skipped and said so', async () => {
      fake.queueChat(GUIDE_REPLY);
      const result = await call({ format: 'sloth' });
      assert.equal(result.isError, undefined, textOf(result));
      assert.equal(fake.chatRequests().length, 1);
      const spec = JSON.parse(textOf(result)) as {
        slos: Array<{ objective: number; sli: { raw: { error_ratio_query: string } } }>;
      };
      assert.deepEqual(
        spec.slos.map((slo) => slo.objective),
        [99.9, 99],
      );
      assert.equal(
        spec.slos[0]!.sli.raw.error_ratio_query,
        '1 - ' +
          '(sum(rate(http_requests_total{handler="index",status=~"2.."}[{{.window}}]))/sum(rate(http_requests_total{handler="index"}[{{.window}}])))',
      );
      assert.equal(
        spec.slos[1]!.sli.raw.error_ratio_query,
        'sum(rate(http_requests_total{handler="index",status!~"2.."}[{{.window}}]))/sum(rate(http_requests_total{handler="index"}[{{.window}}]))',
      );
      assert.deepEqual((result.structuredContent as { skipped: string[] }).skipped, [
        '"95th percentile latency": its PromQL is a quantile, not the ratio Sloth needs',
      ]);
    });

    test('a reply that cannot be repaired still fails loudly', async () => {
      const broken = JSON.parse(GUIDE_REPLY) as Array<{ sli: { 'gcp/cloudrun': Record<string, unknown> } }>;
      broken[0]!.sli['gcp/cloudrun'].serviceLevelIndicator = { somethingElse: true };
      fake.queueChat(JSON.stringify(broken), JSON.stringify(broken));
      const result = await call({});
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent, undefined);
      assert.match(textOf(result), /^LLM invalid reply: .*serviceLevelIndicator/);
      assert.equal(fake.chatRequests().length, 2, 'one repair turn, then the failure');
    });
  });
}

test('the normalisation of a Cloud Monitoring SLO: what it changes and what it leaves to validation', () => {
  const slo = { type: 'availability', title: 'Checkout', objective: 99.5, threshold: 99.5, unit: '%', window: '30d' };
  assert.deepEqual(normaliseCloudRunSlo({ calendarPeriod: ' month ', goal: '99.5', serviceLevelIndicator: {} }, slo), {
    calendarPeriod: 'MONTH',
    goal: 0.995,
    displayName: 'Checkout',
    serviceLevelIndicator: {},
  });
  // A rolling period in any duration form wins over a calendar period given too.
  assert.deepEqual(
    normaliseCloudRunSlo({ displayName: 'x', goal: 0.995, rollingPeriod: '30d', calendarPeriod: 'MONTH' }, slo),
    {
      displayName: 'x',
      goal: 0.995,
      rollingPeriod: '2592000s',
    },
  );
  assert.equal(
    (normaliseCloudRunSlo({ rollingPeriod: 3600 }, slo) as { rollingPeriod: string }).rollingPeriod,
    '3600s',
  );
  // Neither period: the SLO's window; a latency SLO's basic SLI is its threshold.
  const latency = normaliseCloudRunSlo(
    {
      goal: 0.99,
      serviceLevelIndicator: { windowsBased: { windowPeriod: '5m', goodTotalRatioThreshold: { threshold: 99 } } },
    },
    { type: 'latency', title: 'p99', objective: 99, threshold: 350, unit: 'ms', window: '300s' },
  ) as Record<string, any>;
  assert.equal(latency.rollingPeriod, '300s');
  assert.deepEqual(latency.serviceLevelIndicator.windowsBased, {
    windowPeriod: '300s',
    goodTotalRatioThreshold: { threshold: 0.99, basicSliPerformance: { latency: { threshold: '0.35s' } } },
  });
  // What cannot be read is left as it is, for the schema to refuse.
  assert.deepEqual(normaliseCloudRunSlo({ rollingPeriod: 'soon', goal: 'high' }, slo), {
    rollingPeriod: 'soon',
    goal: 0.995,
    displayName: 'Checkout',
  });
  assert.equal(normaliseCloudRunSlo('text', slo), 'text');
});

test('a percentage ratio query loses its factor 100, and nothing else does', () => {
  assert.equal(ratioQuery('sum(rate(a[5m]))/sum(rate(b[5m]))*100'), 'sum(rate(a[5m]))/sum(rate(b[5m]))');
  assert.equal(
    ratioQuery('100 * sum(rate(a{x="*100"}[5m])) / sum(rate(b[5m]))'),
    'sum(rate(a{x="*100"}[5m])) / sum(rate(b[5m]))',
  );
  for (const unchanged of [
    'sum(rate(a[5m]))/sum(rate(b[5m]))',
    '1 - sum(rate(a[5m]))/sum(rate(b[5m])) * 100',
    'sum(rate(a[5m]))/sum(rate(b[5m]))*100 > 99',
    'rate(a[5m]) * 100',
    '(sum(rate(a[5m]))/sum(rate(b[5m]))*100',
  ]) {
    assert.equal(ratioQuery(unchanged), unchanged);
  }
});
