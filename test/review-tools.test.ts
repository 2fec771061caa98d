/**
 * The six LLM review tools through a real MCP SDK client (in-memory link to a real McpServer),
 * with the real openai / ollama clients talking to the fake LLM server.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig, type LlmConfig } from '../src/config.js';
import { createProvider } from '../src/llm/select.js';
import { registerReviewTools, type ReviewDependencies } from '../src/tools/review.js';
import { promptText, startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { connectTools, textOf } from './helpers/mcp.js';
import { fixturePath } from './helpers/repo.js';
import { lintTool } from './helpers/schema-lint.js';

const FILE_PATH = fixturePath('llm', 'fetch_all.py');
const FILE = readFileSync(FILE_PATH, 'utf8');
const SNIPPET = FILE.slice(FILE.indexOf('def fetch_all'), FILE.indexOf('\n\n\ndef total'));
const VALID_SLOS = readFileSync(fixturePath('llm', 'slos-valid.json'), 'utf8');
const BATCHED =
  'def fetch_all(client, ids):\n    """Fetch every record by id, in ' +
  'one batched call."""\n    return client.get_many(ids)\n';
const FAST_RETRY = { retries: 2, baseDelayMs: 5, maxDelayMs: 20 };

interface Session {
  client: Client;
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

async function reviewSession(llm: Partial<LlmConfig>, deps: ReviewDependencies = {}): Promise<Session> {
  const { client, close } = await connectTools(
    (tools, ctx) => registerReviewTools(tools, ctx, deps),
    makeConfig({ llm }),
  );
  return {
    client,
    call: (name, args, signal) =>
      client.callTool({ name, arguments: args }, undefined, { signal }) as Promise<CallToolResult>,
    close,
  };
}

function json(result: CallToolResult): any {
  assert.equal(result.isError, undefined, textOf(result));
  return JSON.parse(textOf(result));
}

for (const api of ['openai', 'ollama'] as const) {
  describe(`review tools over MCP, ${api} provider`, () => {
    let fake: FakeLlm;
    let session: Session;
    before(async () => {
      fake = await startFakeLlm();
      const llm = {
        client: api,
        baseUrl: api === 'openai' ? fake.openaiBaseUrl : fake.ollamaHost,
        promptModel: 'review-model',
        timeoutMs: 30_000,
      };
      session = await reviewSession(llm, { provider: () => createProvider({ ...llm }, {}, { retry: FAST_RETRY }) });
    });
    after(async () => {
      await session.close();
      await fake.close();
    });
    beforeEach(() => {
      assert.equal(fake.pendingChat(), 0, 'the previous test consumed its script');
      fake.requests.length = 0;
    });

    test(
      'fault_score_performance: fenced JSON becomes {score, ' + 'explanation} in text and structuredContent',
      async () => {
        fake.queueChat('```json\n{"score": 0.35, "explanation": "One call per id."}\n```');
        const result = await session.call('fault_score_performance', { snippet: SNIPPET, lang: 'python' });
        assert.deepEqual(json(result), { score: 0.35, explanation: 'One call per id.' });
        assert.deepEqual(result.structuredContent, { score: 0.35, explanation: 'One call per id.' });
        const request = fake.chatRequests()[0]!;
        assert.equal(request.body.model, 'review-model');
        assert.ok(promptText(request).includes(SNIPPET));
      },
    );

    test('fault_score_reliability: a score of 1.7 is repaired; 429 on the repair is retried', async () => {
      fake.queueChat(
        '{"score": 1.7, "explanation": "solid"}',
        { status: 429 },
        '{"score": 0.7, "explanation": "solid"}',
      );
      const result = await session.call('fault_score_reliability', { snippet: SNIPPET, lang: 'python' });
      assert.deepEqual(json(result), { score: 0.7, explanation: 'solid' });
      assert.equal(fake.chatRequests().length, 3);
    });

    test('fault_score_performance: unusable twice is isError quoting the reply', async () => {
      fake.queueChat('I cannot rate this.', 'Still cannot.');
      const result = await session.call('fault_score_performance', { snippet: SNIPPET, lang: 'python' });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent, undefined);
      assert.match(textOf(result), /LLM invalid reply: .*"Still cannot\."/);
    });

    test('fault_suggest_better_function_performance: code reply → a diff in a ```diff block that applies', async () => {
      fake.queueChat(`\`\`\`python\n${BATCHED}\`\`\``);
      const result = await session.call('fault_suggest_better_function_performance', {
        snippet: SNIPPET,
        lang: 'python',
        score: 0.3,
        target_score: 0.9,
      });
      assert.equal(result.isError, undefined, textOf(result));
      const structured = result.structuredContent as { diff: string; applies: boolean };
      assert.equal(structured.applies, true);
      assert.equal(textOf(result), `\`\`\`diff\n${structured.diff}\`\`\``);
      assert.match(structured.diff, /^\+    return client\.get_many\(ids\)$/m);
      assert.match(promptText(fake.chatRequests()[0]!), /rated 0\.3 for performance/);
    });

    test('fault_suggest_better_function_performance: prose twice is isError quoting it, not a diff', async () => {
      fake.queueChat('I think you should add retries.', 'I think you should add retries.');
      const result = await session.call('fault_suggest_better_function_performance', {
        snippet: SNIPPET,
        lang: 'python',
        score: 0.3,
        target_score: 0.9,
      });
      assert.equal(result.isError, true, textOf(result));
      assert.equal(result.structuredContent, undefined);
      assert.match(
        textOf(result),
        /LLM invalid reply: the model sent no usable code or diff.*"I think you should add retries\."/,
      );
    });

    test('fault_suggest_better_function_reliability: a diff that never applies says so', async () => {
      const bad = '```diff\n@@ -1,2 +1,2 @@\n def fetch_all(client, ids):\n-    x = 1\n+    x = 2\n```';
      fake.queueChat(bad, bad);
      const result = await session.call('fault_suggest_better_function_reliability', {
        snippet: SNIPPET,
        lang: 'python',
        score: 0.2,
        target_score: 0.8,
      });
      assert.equal(result.isError, undefined, textOf(result));
      assert.equal((result.structuredContent as { applies: boolean }).applies, false);
      assert.match(textOf(result), /^The model's suggestion does not apply to the snippet/);
      assert.match(textOf(result), /```diff\n@@ -1,2/);
    });

    test('fault_suggest_service_level_objectives_slo: a JSON array in text, {slos} structured', async () => {
      fake.queueChat(`Here are my SLOs:\n${VALID_SLOS}`);
      const result = await session.call('fault_suggest_service_level_objectives_slo', {
        snippet: SNIPPET,
        lang: 'python',
      });
      const slos = json(result);
      assert.ok(Array.isArray(slos));
      assert.equal(slos.length, 2);
      assert.deepEqual(result.structuredContent, { slos });
      assert.equal(slos[0].sli['gcp/cloudrun'].serviceLevelIndicator.requestBased.distributionCut.range.max, 300);
    });

    test('fault_suggest_service_level_objectives_slo: format openslo and sloth', async () => {
      fake.queueChat(VALID_SLOS, VALID_SLOS);
      const open = await session.call('fault_suggest_service_level_objectives_slo', {
        snippet: SNIPPET,
        lang: 'python',
        format: 'openslo',
        service: 'Fetcher',
      });
      assert.equal(open.isError, undefined, textOf(open));
      const documents = json(open);
      assert.equal(documents.length, 2);
      assert.deepEqual((open.structuredContent as { openslo: unknown }).openslo, documents);
      for (const document of documents) {
        assert.equal(document.apiVersion, 'openslo/v1');
        assert.equal(document.kind, 'SLO');
        assert.match(document.metadata.name, /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
        assert.equal(document.spec.service, 'fetcher');
        assert.equal(document.spec.budgetingMethod, 'Occurrences');
        assert.equal(document.spec.timeWindow.length, 1);
        assert.equal(document.spec.timeWindow[0].isRolling, true);
        assert.match(document.spec.timeWindow[0].duration, /^[1-9]\d*[mhdwMQY]$/);
        assert.ok(document.spec.indicator.spec.ratioMetric, 'good/total PromQL is a ratio SLI');
        assert.equal(document.spec.indicator.spec.ratioMetric.rawType, 'success');
      }
      assert.equal(documents[0].spec.timeWindow[0].duration, '5m', '"300s" in OpenSLO shorthand');
      assert.equal(documents[0].spec.objectives[0].target, 0.995);

      const sloth = await session.call('fault_suggest_service_level_objectives_slo', {
        snippet: SNIPPET,
        lang: 'python',
        format: 'sloth',
      });
      const spec = json(sloth);
      assert.equal(spec.version, 'prometheus/v1');
      assert.equal(spec.service, 'service');
      assert.equal(spec.slos.length, 2);
      for (const slo of spec.slos) {
        assert.match(slo.name, /^[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]$/);
        assert.ok(slo.objective > 0 && slo.objective <= 100);
        assert.match(slo.sli.raw.error_ratio_query, /^1 - \(.*\[\{\{\.window\}\}\]/);
        assert.doesNotMatch(slo.sli.raw.error_ratio_query, /\[5m\]/);
        assert.ok(slo.alerting.name);
      }
      assert.deepEqual((sloth.structuredContent as { skipped: string[] }).skipped, []);
    });

    test(
      'fault_suggest_service_level_objectives_slo: the documented GCP ' + 'windowsBased/calendarPeriod shape is valid',
      async () => {
        const parsed = JSON.parse(VALID_SLOS);
        const gcp = parsed.slos[1].sli['gcp/cloudrun'];
        delete gcp.rollingPeriod;
        gcp.calendarPeriod = 'MONTH';
        gcp.serviceLevelIndicator = {
          windowsBased: {
            goodTotalRatioThreshold: { performance: gcp.serviceLevelIndicator.requestBased, threshold: 0.99 },
            windowPeriod: '60s',
          },
        };
        fake.queueChat(JSON.stringify(parsed));
        const result = await session.call('fault_suggest_service_level_objectives_slo', {
          snippet: SNIPPET,
          lang: 'python',
        });
        assert.equal(result.isError, undefined, textOf(result));
        assert.equal(json(result)[1].sli['gcp/cloudrun'].calendarPeriod, 'MONTH');
        assert.equal(fake.chatRequests().length, 1, 'accepted without a repair turn');
      },
    );

    test(
      'replies real models send: prose around JSON, a string score, a ' + 'bare SLO array, a miscounted diff',
      async () => {
        fake.queueChat(
          'Rated on [0, 1]:\n```json\n{"score": "0.6", "explanation": ["Sequential calls.", "No timeout."]}\n```',
        );
        const score = await session.call('fault_score_reliability', { snippet: SNIPPET, lang: 'python' });
        assert.deepEqual(json(score), { score: 0.6, explanation: 'Sequential calls. No timeout.' });

        fake.queueChat(JSON.stringify(JSON.parse(VALID_SLOS).slos));
        const slos = await session.call('fault_suggest_service_level_objectives_slo', {
          snippet: SNIPPET,
          lang: 'python',
        });
        assert.equal(json(slos).length, 2);

        const removed = SNIPPET.split('\n')
          .slice(1)
          .map((line) => `-${line}`);
        fake.queueChat(
          [
            '```diff',
            '@@ -1,3 +1,3 @@',
            ` ${SNIPPET.split('\n')[0]}`,
            ...removed,
            '+    return client.get_many(ids)',
            '```',
          ].join('\n'),
        );
        const suggestion = await session.call('fault_suggest_better_function_performance', {
          snippet: SNIPPET,
          lang: 'python',
          score: 0.3,
          target_score: 0.9,
        });
        assert.equal((suggestion.structuredContent as { applies: boolean }).applies, true, textOf(suggestion));
        assert.match(textOf(suggestion), /^```diff\n--- a\/snippet\n\+\+\+ b\/snippet\n@@ -1,\d+ \+1,2 @@\n/);
        assert.equal(fake.chatRequests().length, 3, 'no repair turn was needed');
      },
    );

    test(
      'fault_function_reliability_deep_analysis: findings per concern, ' +
        'lines in the file, diffs that apply (one repair)',
      async () => {
        const diff =
          '@@ -1,6 +1,3 @@\n def fetch_all(client, ids):\n-    """Fetch ' +
          'every record by id."""\n-    results = []\n-    for record_id in ' +
          'ids:\n-        results.append(client.get(record_id))\n-    ' +
          'return results\n+    """Fetch every record by id, in one batched ' +
          'call."""\n+    return client.get_many(ids)\n';
        const finding = {
          concern: 'performance',
          severity: 'high',
          start_line: 7,
          end_line: 8,
          problem: 'One call per id.',
          change: 'Batch the calls.',
          diff,
        };
        fake.queueChat(
          // Lines outside the function and a concern not asked for: sent back once.
          JSON.stringify({ findings: [{ ...finding, start_line: 1, end_line: 2 }] }),
          JSON.stringify({
            findings: [
              finding,
              {
                ...finding,
                concern: 'reliability',
                severity: 'medium',
                problem: 'No timeout on client.get.',
                change: 'Pass a timeout.',
                diff: '',
              },
            ],
          }),
        );
        const result = await session.call('fault_function_reliability_deep_analysis', {
          file: FILE_PATH,
          lang: 'python',
          func: 'fetch_all',
          concerns: ['performance', 'reliability'],
        });
        const structured = result.structuredContent as {
          function: { start_line: number; end_line: number };
          findings: Array<Record<string, unknown>>;
        };
        assert.deepEqual(structured.function, { qualified_name: 'fetch_all', start_line: 4, end_line: 9 });
        assert.equal(structured.findings.length, 2);
        assert.equal(structured.findings[0]!.start_line, 7);
        assert.match(String(structured.findings[0]!.diff), /^\+    return client.get_many\(ids\)$/m);
        assert.equal(structured.findings[1]!.diff, '');
        const prompt = promptText(fake.chatRequests()[0]!);
        assert.ok(prompt.includes(SNIPPET), 'the extracted function is in the prompt');
        assert.match(prompt, /lines 4-9 of the file/);
        assert.match(promptText(fake.chatRequests()[1]!), /not inside the function \(lines 4-9/);
        assert.deepEqual(json(result), { findings: structured.findings });
      },
    );

    test('fault_function_reliability_deep_analysis: an unknown concern names the argument', async () => {
      const result = await session.call('fault_function_reliability_deep_analysis', {
        file: FILE_PATH,
        lang: 'python',
        func: 'fetch_all',
        concerns: ['speed'],
      });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /^concerns: "speed" not accepted; accepted: performance, reliability, threat/);
    });

    test('fault_make_reliability_and_perf_changes: old from disk, diff computed, new must parse', async () => {
      const proposed = FILE.replace('results = []', 'results: list = []');
      fake.queueChat(
        JSON.stringify({ score: 0.4, explanation: 'half done', new: 'def fetch_all(client, ids:\n', dependencies: [] }),
        JSON.stringify({ score: 0.4, explanation: 'Typed the accumulator.', new: proposed, dependencies: [] }),
      );
      const result = await session.call('fault_make_reliability_and_perf_changes', { file: `file://${FILE_PATH}` });
      const change = json(result);
      assert.deepEqual(Object.keys(change).sort(), ['dependencies', 'diff', 'explanation', 'new', 'old', 'score']);
      assert.equal(change.old, FILE);
      assert.equal(change.new, proposed);
      assert.match(change.diff, /^\+    results: list = \[\]$/m);
      assert.deepEqual(result.structuredContent, change);
      assert.ok(promptText(fake.chatRequests()[0]!).includes(FILE));
    });
  });
}

describe('review tools: configuration, timeouts, cancellation, bad input', () => {
  let fake: FakeLlm;
  before(async () => {
    fake = await startFakeLlm();
  });
  after(() => fake.close());

  test('no provider configured: every tool answers isError at once, naming what to set', async () => {
    const session = await reviewSession({}, { provider: () => createProvider(makeConfig().llm, {}) });
    try {
      const calls: Array<[string, Record<string, unknown>]> = [
        ['fault_score_performance', { snippet: 'x = 1', lang: 'python' }],
        ['fault_score_reliability', { snippet: 'x = 1', lang: 'python' }],
        [
          'fault_suggest_better_function_performance',
          { snippet: 'x = 1', lang: 'python', score: 0.1, target_score: 0.9 },
        ],
        [
          'fault_suggest_better_function_reliability',
          { snippet: 'x = 1', lang: 'python', score: 0.1, target_score: 0.9 },
        ],
        ['fault_suggest_service_level_objectives_slo', { snippet: 'x = 1', lang: 'python' }],
        ['fault_make_reliability_and_perf_changes', { file: FILE_PATH }],
      ];
      for (const [name, args] of calls) {
        const result = await session.call(name, args);
        assert.equal(result.isError, true, name);
        assert.match(
          textOf(result),
          new RegExp(`^${name} needs an LLM, and no LLM provider is configured: set OPENAI_API_KEY`),
          name,
        );
      }
    } finally {
      await session.close();
    }
  });

  test('the default wiring uses the config (Ollama at --llm-base-url) and its timeout', async () => {
    const session = await reviewSession({ client: 'ollama', baseUrl: fake.ollamaHost, timeoutMs: 300 });
    try {
      fake.queueChat({ delayMs: 10_000, content: '{"score": 0.5, "explanation": "late"}' });
      const result = await session.call('fault_score_performance', { snippet: SNIPPET, lang: 'python' });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /LLM timeout: .*ollama model qwen2\.5-coder:7b.*300ms/);
      assert.equal(fake.chatRequests().at(-1)!.body.model, 'qwen2.5-coder:7b');
    } finally {
      await session.close();
    }
  });

  test('cancelling the tool call aborts the LLM request', { timeout: 10_000 }, async () => {
    const llm = { client: 'openai' as const, baseUrl: fake.openaiBaseUrl, timeoutMs: 30_000 };
    const session = await reviewSession(llm);
    try {
      const before = fake.chatRequests().length;
      fake.queueChat({ delayMs: 10_000, content: '{"score": 0.5, "explanation": "never"}' });
      const controller = new AbortController();
      const pending = session.call('fault_score_performance', { snippet: SNIPPET, lang: 'python' }, controller.signal);
      while (fake.chatRequests().length === before) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      await assert.rejects(pending);
      while (!fake.chatRequests().at(-1)!.abandoned) await new Promise((resolve) => setTimeout(resolve, 5));
    } finally {
      await session.close();
    }
  });

  test('bad arguments are refused before any LLM call', async () => {
    const llm = { client: 'openai' as const, baseUrl: fake.openaiBaseUrl, timeoutMs: 30_000 };
    const session = await reviewSession(llm);
    const dir = mkdtempSync(join(tmpdir(), 'faultline-review-'));
    try {
      const before = fake.requests.length;
      const blank = await session.call('fault_score_performance', { snippet: '   ', lang: 'python' });
      assert.equal(blank.isError, true);
      assert.match(textOf(blank), /^snippet: is blank/);
      const range = await session.call('fault_suggest_better_function_performance', {
        snippet: 'x = 1',
        lang: 'python',
        score: 2,
        target_score: 0.5,
      });
      assert.equal(range.isError, true);
      assert.match(textOf(range), /score/);
      const missing = await session.call('fault_make_reliability_and_perf_changes', { file: join(dir, 'nope.py') });
      assert.equal(missing.isError, true);
      assert.match(textOf(missing), /^file: .*does not exist/);
      const big = join(dir, 'big.py');
      writeFileSync(big, 'x = 1\n'.repeat(60_000));
      const tooBig = await session.call('fault_make_reliability_and_perf_changes', { file: big });
      assert.equal(tooBig.isError, true);
      assert.match(textOf(tooBig), /not read/);
      assert.equal(fake.requests.length, before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await session.close();
    }
  });

  test('every review tool is listed read-only, open-world, with an output schema, saying it needs an LLM', async () => {
    const session = await reviewSession({});
    try {
      const { tools } = await session.client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name).sort(), [
        'fault_function_reliability_deep_analysis',
        'fault_make_reliability_and_perf_changes',
        'fault_score_performance',
        'fault_score_reliability',
        'fault_suggest_better_function_performance',
        'fault_suggest_better_function_reliability',
        'fault_suggest_service_level_objectives_slo',
      ]);
      for (const tool of tools) {
        assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
        assert.equal(tool.annotations?.openWorldHint, true, tool.name);
        assert.ok(tool.outputSchema, tool.name);
        assert.match(tool.description ?? '', /Needs an LLM/, tool.name);
      }
      assert.deepEqual(tools.flatMap(lintTool), []);
    } finally {
      await session.close();
    }
  });
});
