/**
 * A reply with nothing usable in it is never success. Empty `choices`, null or
 * empty content, a non-array `choices` and a reply that is only reasoning all go through the
 * repair turn and end in `invalid_reply`; only an explicit empty diff block means "no change".
 * Content sent as an object, and a hunk header past the end of the snippet, give clear messages;
 * an oversized reply is refused while it streams in. Through the real openai client.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { LlmError } from '../src/llm/errors.js';
import type { LlmProvider } from '../src/llm/provider.js';
import { createProvider } from '../src/llm/select.js';
import { suggestBetterFunction } from '../src/llm/suggest.js';
import { startFakeLlm, type FakeLlm, type FakeReply } from './helpers/fake-llm.js';

const SNIPPET = 'def total(items):\n    s = 0\n    for item in items:\n        s += item\n    return s\n';
const INPUT = { aspect: 'performance' as const, snippet: SNIPPET, lang: 'python', score: 0.3, targetScore: 0.8 };

function completion(choices: unknown): { body: unknown } {
  return { body: { id: 'x', object: 'chat.completion', created: 0, model: 'm', choices } };
}
const message = (content: unknown) =>
  completion([{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }]);

const UNUSABLE: Record<string, FakeReply> = {
  'empty choices': completion([]),
  'choices that are not an array': completion({ 0: { message: { content: '```diff\n```' } } }),
  'no choices at all': { body: { id: 'x', object: 'chat.completion' } },
  'null content': message(null),
  'empty content': message(''),
  'only reasoning': message('<think>The loop is fine; sum() would be faster.</think>'),
};

function isInvalidReply(error: unknown): boolean {
  assert.ok(error instanceof LlmError, String(error));
  assert.equal(error.kind, 'invalid_reply');
  return true;
}

describe('unusable LLM replies', () => {
  let fake: FakeLlm;
  let provider: LlmProvider;
  before(async () => {
    fake = await startFakeLlm();
    const choice = createProvider(
      { client: 'openai', baseUrl: fake.openaiBaseUrl, timeoutMs: 30_000 },
      {},
      { retry: { retries: 0, baseDelayMs: 5, maxDelayMs: 10 } },
    );
    assert.ok(choice.ok);
    provider = choice.provider;
  });
  after(() => fake.close());
  beforeEach(() => {
    assert.equal(fake.pendingChat(), 0, 'the previous test consumed its script');
    fake.requests.length = 0;
  });

  for (const [what, reply] of Object.entries(UNUSABLE)) {
    test(`suggest: ${what}, twice, is invalid_reply after the repair turn`, async () => {
      fake.queueChat(reply, reply);
      await assert.rejects(suggestBetterFunction(provider, INPUT), isInvalidReply);
      assert.equal(fake.chatRequests().length, 2, 'one repair turn was asked for');
    });
  }

  test('suggest: an empty reply, then an explicit empty diff block, is "no change"', async () => {
    fake.queueChat(message(null), '```diff\n```');
    assert.deepEqual(await suggestBetterFunction(provider, INPUT), {
      diff: '',
      applies: true,
      note: 'No change suggested.',
    });
    assert.match(JSON.stringify(fake.chatRequests()[1]!.body.messages), /the reply is empty/);
  });

  test('structured: empty choices twice is invalid_reply', async () => {
    fake.queueChat(completion([]), completion([]));
    await assert.rejects(
      provider.structured(
        [{ role: 'user', content: 'x' }],
        (await import('zod')).z.object({ a: (await import('zod')).z.number() }),
        { name: 'a' },
      ),
      isInvalidReply,
    );
  });

  test('content sent as an object is a clear invalid_reply, not a TypeError', async () => {
    fake.queueChat(message({ text: 'not a string' }));
    await assert.rejects(provider.text([{ role: 'user', content: 'x' }]), (error: unknown) => {
      isInvalidReply(error);
      assert.match((error as Error).message, /content is object, not text/);
      return true;
    });
  });

  test(
    'an answer that is not JSON (an HTML page from a wrong base URL) ' + 'is named at once, not read as an empty reply',
    async () => {
      fake.queueChat({
        body: '<html><title>Welcome to nginx</title></html>',
        headers: { 'content-type': 'text/html' },
      });
      await assert.rejects(provider.text([{ role: 'user', content: 'x' }]), (error: unknown) => {
        isInvalidReply(error);
        assert.match((error as Error).message, /not a chat completion .*base URL.*Welcome to nginx/);
        return true;
      });
      assert.equal(fake.chatRequests().length, 1, 'no repair turn: the model was never reached');
    },
  );

  test('a hunk header past the end of the snippet is named, not a TypeError', async () => {
    const pastEnd = '```diff\n@@ -4000,2 +4000,2 @@\n def nothing_here():\n-    pass\n+    return 1\n```';
    fake.queueChat(pastEnd, pastEnd);
    const result = await suggestBetterFunction(provider, INPUT);
    assert.equal(result.applies, false);
    assert.match(result.note ?? '', /starts past the end of the snippet/);
    assert.doesNotMatch(result.note ?? '', /Cannot read properties/);
  });

  test('a reply over the 1 MiB cap is refused while it streams, without reading it all', async () => {
    fake.queueChat({ streamBytes: 64 * 1024 * 1024 });
    const before = process.memoryUsage().rss;
    await assert.rejects(provider.text([{ role: 'user', content: 'x' }]), (error: unknown) => {
      isInvalidReply(error);
      assert.match((error as Error).message, /1048576-byte cap/);
      return true;
    });
    // 64 MiB were offered; far less than that was held (a generous bound: half).
    assert.ok(process.memoryUsage().rss - before < 32 * 1024 * 1024);
  });

  test('a declared content-length over the cap is refused before the body is read', async () => {
    fake.queueChat(message('x'.repeat(1_100_000)));
    await assert.rejects(provider.text([{ role: 'user', content: 'x' }]), /bytes, over the 1048576-byte cap/);
  });
});

/**
 * A 2xx whose body is empty, HTML or cut-off JSON is no reply from a model, for every provider:
 * `invalid_reply` at once, never a `network` error retried (left to themselves, all three SDKs
 * turn an empty 200 into "could not reach" after three attempts, and Anthropic's hand an HTML
 * page back as an empty answer).
 */
describe('a 2xx that is not a JSON reply, on every provider', () => {
  let fake: FakeLlm;
  before(async () => {
    fake = await startFakeLlm();
  });
  after(() => fake.close());
  beforeEach(() => {
    assert.equal(fake.pendingChat(), 0, 'the previous test consumed its script');
    fake.requests.length = 0;
  });

  const retry = { retries: 2, baseDelayMs: 5, maxDelayMs: 10 };
  const providers: Record<string, () => LlmProvider> = {
    openai: () =>
      pick(createProvider({ client: 'openai', baseUrl: fake.openaiBaseUrl, timeoutMs: 30_000 }, {}, { retry })),
    ollama: () =>
      pick(createProvider({ client: 'ollama', baseUrl: fake.ollamaHost, timeoutMs: 30_000 }, {}, { retry })),
    anthropic: () =>
      pick(
        createProvider(
          { client: 'anthropic', timeoutMs: 30_000 },
          { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: fake.anthropicBaseUrl },
          { retry },
        ),
      ),
  };
  const bodies: Record<string, { rawBody: string; headers?: Record<string, string>; message: RegExp }> = {
    'an empty body': { rawBody: '', message: /HTTP 200 with an empty body/ },
    'an HTML page': {
      rawBody: '<html><title>Sign in</title></html>',
      headers: { 'content-type': 'text/html' },
      message: /not JSON.*Sign in/,
    },
    'JSON cut short': { rawBody: '{"choices":[{"mess', message: /not JSON.*choices/ },
  };

  for (const [client, make] of Object.entries(providers)) {
    for (const [what, { rawBody, headers, message: expected }] of Object.entries(bodies)) {
      test(`${client}: ${what} is invalid_reply on the first attempt, not a retried network error`, async () => {
        fake.queueChat({ rawBody, ...(headers ? { headers } : {}) });
        await assert.rejects(make().text([{ role: 'user', content: 'x' }]), (error: unknown) => {
          isInvalidReply(error);
          assert.match((error as Error).message, expected);
          return true;
        });
        assert.equal(fake.chatRequests().length, 1, 'asked once: retrying cannot make an empty reply full');
      });
    }
  }
});

function pick(choice: ReturnType<typeof createProvider>): LlmProvider {
  assert.ok(choice.ok, choice.ok ? '' : choice.reason);
  return choice.provider;
}
