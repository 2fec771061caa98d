/**
 * The Anthropic provider through the real `@anthropic-ai/sdk` against the fake LLM server's
 * Messages API: structured output by tool use, fenced JSON in text, the repair turn, 429 then
 * success, the deadline, cancellation; and the local embedder standing in for embeddings.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { z } from 'zod';
import { CancelledError } from '../src/kernel/errors.js';
import { selectEmbedder } from '../src/search/embedder.js';
import { LlmError } from '../src/llm/errors.js';
import type { LlmProvider } from '../src/llm/provider.js';
import { scoreSnippet } from '../src/llm/score.js';
import { createProvider } from '../src/llm/select.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';

const SLOW_REPLY_MS = 30_000;
const Answer = z.object({ score: z.number().min(0).max(1), explanation: z.string().min(1) });
const MESSAGES = [
  { role: 'system' as const, content: 'You review code.' },
  { role: 'user' as const, content: 'Rate it.' },
];

describe('anthropic provider over the real SDK', () => {
  let fake: FakeLlm;
  before(async () => {
    fake = await startFakeLlm();
  });
  after(() => fake.close());
  beforeEach(() => {
    assert.equal(fake.pendingChat(), 0, 'the previous test consumed its script');
    fake.requests.length = 0;
  });

  function provider(timeoutMs = 30_000): LlmProvider {
    const choice = createProvider(
      { client: 'anthropic', promptModel: 'claude-test', timeoutMs },
      { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: fake.anthropicBaseUrl },
      { retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20 } },
    );
    assert.ok(choice.ok, choice.ok ? '' : choice.reason);
    return choice.provider;
  }

  test('ANTHROPIC_API_KEY alone picks anthropic; the key and version headers are sent', async () => {
    const choice = createProvider(
      { timeoutMs: 30_000 },
      { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: fake.anthropicBaseUrl },
    );
    assert.ok(choice.ok);
    assert.equal(choice.provider.info.client, 'anthropic');
    assert.equal(choice.provider.info.endpoint, fake.anthropicBaseUrl);
    fake.queueChat('plain text');
    assert.equal(await choice.provider.text(MESSAGES), 'plain text');
    const [request] = fake.chatRequests();
    // The SDK decides how the key travels (x-api-key or a bearer token); it must travel.
    const sent = request!.headers['x-api-key'] ?? request!.headers.authorization;
    assert.match(String(sent), /sk-ant-test/);
    assert.ok(request!.headers['anthropic-version']);
    assert.equal(request!.body.system, 'You review code.', 'the system prompt is the top-level field');
    assert.deepEqual(
      request!.body.messages.map((m: { role: string }) => m.role),
      ['user'],
    );
  });

  test('structured output is a forced tool call whose input is validated', async () => {
    fake.queueChat({ toolInput: { score: 0.4, explanation: 'One call per id.' } });
    const value = await provider().structured(MESSAGES, Answer, { name: 'code_score' });
    assert.deepEqual(value, { score: 0.4, explanation: 'One call per id.' });
    const body = fake.chatRequests()[0]!.body;
    assert.equal(body.tools[0].name, 'code_score');
    assert.equal(body.tools[0].input_schema.type, 'object');
    assert.deepEqual(body.tool_choice, { type: 'tool', name: 'code_score' });
    assert.ok(body.max_tokens > 0);
  });

  test('fenced JSON in a text reply is read', async () => {
    fake.queueChat('Here you go:\n```json\n{"score": 0.7, "explanation": "Fine."}\n```');
    assert.deepEqual(await provider().structured(MESSAGES, Answer, { name: 'code_score' }), {
      score: 0.7,
      explanation: 'Fine.',
    });
  });

  test('an invalid tool input gets one repair turn showing the problem', async () => {
    fake.queueChat(
      { toolInput: { score: 7, explanation: 'Too high.' } },
      { toolInput: { score: 0.7, explanation: 'Fixed.' } },
    );
    const value = await provider().structured(MESSAGES, Answer, { name: 'code_score' });
    assert.equal(value.score, 0.7);
    const repair = fake.chatRequests()[1]!.body.messages;
    assert.equal(repair.length, 3);
    assert.equal(repair[1].role, 'assistant');
    assert.match(repair[2].content, /score/);
  });

  test('twice unusable is invalid_reply', async () => {
    fake.queueChat('', { toolInput: { score: 'high' } });
    await assert.rejects(provider().structured(MESSAGES, Answer, { name: 'code_score' }), (error: unknown) => {
      assert.ok(error instanceof LlmError);
      assert.equal(error.kind, 'invalid_reply');
      return true;
    });
  });

  test('429 then success is retried', async () => {
    fake.queueChat({ status: 429, content: 'slow down', headers: { 'retry-after': '0' } }, 'after the wait');
    assert.equal(await provider().text(MESSAGES), 'after the wait');
    assert.equal(fake.chatRequests().length, 2);
  });

  test('401 is final and says so', async () => {
    fake.queueChat({ status: 401, content: 'bad key' });
    await assert.rejects(provider().text(MESSAGES), /HTTP 401/);
    assert.equal(fake.chatRequests().length, 1);
  });

  test('a reply slower than the timeout ends in a timeout error, promptly', async () => {
    fake.queueChat({ delayMs: SLOW_REPLY_MS, content: 'too late' });
    const started = performance.now();
    await assert.rejects(
      provider(200).text(MESSAGES),
      (error: unknown) => error instanceof LlmError && error.kind === 'timeout',
    );
    assert.ok(performance.now() - started < SLOW_REPLY_MS / 2);
  });

  test('cancelling aborts the HTTP request', { timeout: 10_000 }, async () => {
    fake.queueChat({ delayMs: SLOW_REPLY_MS, content: 'never read' });
    const controller = new AbortController();
    const pending = provider().text(MESSAGES, { signal: controller.signal });
    while (fake.chatRequests().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await assert.rejects(pending, CancelledError);
    while (!fake.chatRequests()[0]!.abandoned) await new Promise((resolve) => setTimeout(resolve, 5));
  });

  test('the review operations work end to end (score)', async () => {
    fake.queueChat({ toolInput: { score: 0.3, explanation: 'N+1 calls.' } });
    const result = await scoreSnippet(provider(), { aspect: 'performance', snippet: 'def f(): pass', lang: 'python' });
    assert.deepEqual(result, { score: 0.3, explanation: 'N+1 calls.' });
  });

  test('indexing with anthropic uses the local embedder and says why', async () => {
    const embedder = await selectEmbedder(
      { client: 'anthropic', timeoutMs: 1_000 },
      { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: fake.anthropicBaseUrl },
    );
    assert.match(embedder.id, /^hashed-/);
    assert.match(embedder.description, /anthropic has no embedding API/);
  });

  test('without a key or base URL, the reason names ANTHROPIC_API_KEY', () => {
    const choice = createProvider({ client: 'anthropic', timeoutMs: 1_000 }, {});
    assert.equal(choice.ok, false);
    assert.match(choice.ok ? '' : choice.reason, /ANTHROPIC_API_KEY/);
  });
});

describe('OPENAI_BASE_URL', () => {
  test('reaches a local OpenAI-compatible server; --llm-base-url wins over it; blank counts as unset', async () => {
    const fake = await startFakeLlm();
    const other = await startFakeLlm();
    try {
      // Alone, it picks the openai client (a self-hosted server needing no key).
      const alone = createProvider({ timeoutMs: 30_000 }, { OPENAI_BASE_URL: fake.openaiBaseUrl });
      assert.ok(alone.ok);
      assert.equal(alone.provider.info.client, 'openai');
      assert.equal(alone.provider.info.endpoint, fake.openaiBaseUrl);
      fake.queueChat('from the compatible server');
      assert.equal(await alone.provider.text(MESSAGES), 'from the compatible server');
      assert.equal(fake.chatRequests().length, 1);

      const both = createProvider(
        { baseUrl: other.openaiBaseUrl, timeoutMs: 30_000 },
        { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: fake.openaiBaseUrl },
      );
      assert.ok(both.ok);
      assert.equal(both.provider.info.endpoint, other.openaiBaseUrl);

      const blank = createProvider({ timeoutMs: 5_000 }, { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: '' });
      assert.ok(blank.ok);
      assert.equal(blank.provider.info.endpoint, 'https://api.openai.com/v1');

      const bad = createProvider({ timeoutMs: 5_000 }, { OPENAI_BASE_URL: 'ftp://x' });
      assert.equal(bad.ok, false);
      assert.match(bad.ok ? '' : bad.reason, /OPENAI_BASE_URL must be an http/);
    } finally {
      await fake.close();
      await other.close();
    }
  });
});
