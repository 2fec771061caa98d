import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { z } from 'zod';
import { CancelledError } from '../src/kernel/errors.js';
import { LlmError } from '../src/llm/errors.js';
import { createProvider } from '../src/llm/select.js';
import type { LlmProvider } from '../src/llm/provider.js';
import { promptText, startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';

/** A scripted reply this slow is never waited for: timeouts and cancellation must end the call long before. */
const SLOW_REPLY_MS = 20_000;
const Score = z.object({ score: z.number().min(0).max(1), explanation: z.string() });
const FAST_RETRY = { retries: 2, baseDelayMs: 5, maxDelayMs: 20 };
const MESSAGES = [{ role: 'user' as const, content: 'Score this: function snippetMarker() {}' }];

for (const api of ['openai', 'ollama'] as const) {
  describe(`${api} provider against the fake server`, () => {
    let fake: FakeLlm;
    before(async () => {
      fake = await startFakeLlm({ embedDim: 4 });
    });
    after(() => fake.close());
    beforeEach(() => {
      fake.requests.length = 0;
      assert.equal(fake.pendingChat(), 0, 'the previous test consumed its script');
    });

    function provider(timeoutMs = 30_000, embedDim?: number): LlmProvider {
      const choice = createProvider(
        {
          client: api,
          baseUrl: api === 'openai' ? fake.openaiBaseUrl : fake.ollamaHost,
          promptModel: 'test-model',
          embedModel: 'test-embed',
          embedDim,
          timeoutMs,
        },
        { OPENAI_API_KEY: 'sk-test' },
        { retry: FAST_RETRY },
      );
      assert.ok(choice.ok, !choice.ok ? choice.reason : '');
      return choice.provider;
    }

    test('a fenced JSON reply is accepted; the request carries model, schema and prompt', async () => {
      fake.queueChat('```json\n{"score": 0.8, "explanation": "fine"}\n```');
      const result = await provider().structured(MESSAGES, Score, { name: 'code_score' });
      assert.deepEqual(result, { score: 0.8, explanation: 'fine' });
      const [request] = fake.chatRequests();
      assert.ok(request);
      assert.equal(request.body.model, 'test-model');
      assert.match(promptText(request), /snippetMarker/);
      const schema = api === 'openai' ? request.body.response_format?.json_schema?.schema : request.body.format;
      if (api === 'openai') {
        assert.equal(request.body.response_format.type, 'json_schema');
        assert.equal(request.body.response_format.json_schema.name, 'code_score');
        assert.equal(request.headers.authorization, 'Bearer sk-test');
      }
      assert.deepEqual(Object.keys(schema.properties).sort(), ['explanation', 'score']);
      assert.equal(schema.properties.score.maximum, 1);
    });

    test('JSON inside prose is accepted', async () => {
      fake.queueChat('Sure! Here is my assessment: {"score": 0.25, "explanation": "slow loop"} Let me know.');
      assert.deepEqual(await provider().structured(MESSAGES, Score, { name: 'code_score' }), {
        score: 0.25,
        explanation: 'slow loop',
      });
    });

    test('invalid JSON then a valid repair: the repair request shows the problem', async () => {
      fake.queueChat('{"score": 0.5, "explanation": ', '{"score": 0.5, "explanation": "ok"}');
      assert.deepEqual(await provider().structured(MESSAGES, Score, { name: 'code_score' }), {
        score: 0.5,
        explanation: 'ok',
      });
      const requests = fake.chatRequests();
      assert.equal(requests.length, 2);
      const repair = requests[1]!.body.messages as Array<{ role: string; content: string }>;
      assert.equal(repair.at(-2)?.role, 'assistant');
      assert.match(repair.at(-1)!.content, /could not be used: no JSON object or array/);
    });

    test('a score of 1.7 is rejected by validation and repaired', async () => {
      fake.queueChat('{"score": 1.7, "explanation": "great"}', '{"score": 0.9, "explanation": "great"}');
      assert.deepEqual(await provider().structured(MESSAGES, Score, { name: 'code_score' }), {
        score: 0.9,
        explanation: 'great',
      });
      assert.match(promptText(fake.chatRequests()[1]!), /score: Too big/);
    });

    test('two unusable replies give an invalid_reply error quoting the second', async () => {
      fake.queueChat('not json at all', 'still nothing useful here');
      await assert.rejects(provider().structured(MESSAGES, Score, { name: 'code_score' }), (error: unknown) => {
        assert.ok(error instanceof LlmError);
        assert.equal(error.kind, 'invalid_reply');
        assert.match(error.message, /"still nothing useful here"/);
        assert.match(error.message, /test-model/);
        return true;
      });
    });

    test('a failing extra check triggers the repair too', async () => {
      fake.queueChat('{"score": 0.1, "explanation": "bad"}', '{"score": 0.2, "explanation": "good"}');
      const result = await provider().structured(MESSAGES, Score, {
        name: 'code_score',
        check: (value) => (value.explanation === 'bad' ? 'the explanation must not be "bad"' : undefined),
      });
      assert.equal(result.explanation, 'good');
      assert.match(promptText(fake.chatRequests()[1]!), /must not be "bad"/);
    });

    test('429 then success is retried', async () => {
      fake.queueChat({ status: 429, headers: { 'retry-after': '0' } }, 'plain text answer');
      assert.equal(await provider().text(MESSAGES), 'plain text answer');
      assert.equal(fake.chatRequests().length, 2);
    });

    test("a 429's Retry-After is carried on the error, so the backoff honours it", async () => {
      const choice = createProvider(
        {
          client: api,
          baseUrl: api === 'openai' ? fake.openaiBaseUrl : fake.ollamaHost,
          promptModel: 'test-model',
          timeoutMs: 30_000,
        },
        { OPENAI_API_KEY: 'sk-test' },
        { retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } },
      );
      assert.ok(choice.ok);
      fake.queueChat({ status: 429, headers: { 'retry-after': '7' } });
      await assert.rejects(choice.provider.text(MESSAGES), (error: unknown) => {
        assert.ok(error instanceof LlmError);
        assert.equal(error.status, 429);
        assert.equal(error.retryAfterSeconds, 7);
        return true;
      });
    });

    test(
      'an error page (HTML, or an error object from a proxy) is named ' + 'in the message, and nothing reaches stdout',
      async () => {
        const choice = createProvider(
          {
            client: api,
            baseUrl: api === 'openai' ? fake.openaiBaseUrl : fake.ollamaHost,
            promptModel: 'test-model',
            timeoutMs: 30_000,
          },
          { OPENAI_API_KEY: 'sk-test' },
          { retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } },
        );
        assert.ok(choice.ok);
        fake.queueChat(
          { status: 502, rawBody: '<html>bad gateway from the proxy</html>', headers: { 'content-type': 'text/html' } },
          { status: 429, rawBody: '{"error":{"message":"quota exceeded","type":"rate"}}' },
        );
        // console.log goes to stdout, where `faultline index` prints its JSON: a dependency must not use it.
        const logged: unknown[] = [];
        const log = console.log;
        console.log = (...args: unknown[]) => void logged.push(args);
        try {
          await assert.rejects(choice.provider.text(MESSAGES), /HTTP 502.*bad gateway from the proxy/);
          await assert.rejects(choice.provider.text(MESSAGES), /HTTP 429.*quota exceeded/);
        } finally {
          console.log = log;
        }
        assert.deepEqual(logged, []);
      },
    );

    test('500 and a dropped connection are retried', async () => {
      fake.queueChat({ status: 503 }, { drop: true }, 'third time lucky');
      assert.equal(await provider().text(MESSAGES), 'third time lucky');
      assert.equal(fake.chatRequests().length, 3);
    });

    test('retries are bounded: persistent 500s end in an http error', async () => {
      fake.queueChat({ status: 500 }, { status: 500 }, { status: 500 });
      await assert.rejects(provider().text(MESSAGES), (error: unknown) => {
        assert.ok(error instanceof LlmError);
        assert.equal(error.kind, 'http');
        assert.equal(error.status, 500);
        return true;
      });
      assert.equal(fake.chatRequests().length, 3);
    });

    if (api === 'openai') {
      test('an endpoint that refuses json_schema (400) is asked again without it', async () => {
        fake.queueChat(
          { status: 400, content: 'response_format json_schema is not supported' },
          '{"score": 0.6, "explanation": "ok"}',
        );
        const llm = provider();
        assert.deepEqual(await llm.structured(MESSAGES, Score, { name: 'code_score' }), {
          score: 0.6,
          explanation: 'ok',
        });
        const [refused, plain] = fake.chatRequests();
        assert.equal(refused!.body.response_format.type, 'json_schema');
        assert.equal(plain!.body.response_format, undefined);
        // The schema still reaches the model through the prompt.
        assert.match(promptText(plain!), /matches this JSON Schema/);
      });
    }

    test('400 is not retried', async () => {
      fake.queueChat({ status: 401, content: 'bad key' });
      await assert.rejects(provider().text(MESSAGES), /401/);
      assert.equal(fake.chatRequests().length, 1);
    });

    test('a reply slower than the timeout ends in a timeout error, promptly', async () => {
      fake.queueChat({ delayMs: SLOW_REPLY_MS, content: 'too late' });
      const started = performance.now();
      await assert.rejects(provider(200).text(MESSAGES), (error: unknown) => {
        assert.ok(error instanceof LlmError);
        assert.equal(error.kind, 'timeout');
        assert.match(error.message, /200ms/);
        return true;
      });
      // The point is that we did not wait for the slow reply; half its delay is a generous bound.
      assert.ok(performance.now() - started < SLOW_REPLY_MS / 2);
    });

    test('a cancelled request stops at once with CancelledError', { timeout: 10_000 }, async () => {
      fake.queueChat({ delayMs: SLOW_REPLY_MS, content: 'never read' });
      const controller = new AbortController();
      const pending = provider().text(MESSAGES, { signal: controller.signal });
      while (fake.chatRequests().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const started = performance.now();
      controller.abort();
      await assert.rejects(pending, CancelledError);
      assert.ok(performance.now() - started < SLOW_REPLY_MS / 2);
      // The HTTP request itself was aborted, not left running.
      while (!fake.chatRequests()[0]!.abandoned) await new Promise((resolve) => setTimeout(resolve, 5));
    });

    test('an already aborted signal sends nothing', async () => {
      await assert.rejects(provider().text(MESSAGES, { signal: AbortSignal.abort() }), CancelledError);
      assert.equal(fake.requests.length, 0);
    });

    test('embeddings come back in order with the checked dimension', async () => {
      const vectors = await provider(2_000, 4).embed(['alpha', 'beta']);
      assert.equal(vectors.length, 2);
      assert.ok(vectors.every((vector) => vector.length === 4));
      assert.notDeepEqual(vectors[0], vectors[1]);
      const [request] = fake.requests;
      assert.equal(request?.kind, 'embed');
      assert.equal(request?.body.model, 'test-embed');
      assert.deepEqual(request?.body.input, ['alpha', 'beta']);
      if (api === 'openai') assert.equal(request?.body.encoding_format, 'float');
    });

    test('an embedding dimension other than the configured one is an error', async () => {
      await assert.rejects(provider(2_000, 1536).embed(['alpha']), (error: unknown) => {
        assert.ok(error instanceof LlmError);
        assert.equal(error.kind, 'dimension_mismatch');
        assert.match(error.message, /dimension 4, expected 1536/);
        return true;
      });
    });
  });
}

test('an unreachable endpoint fails quickly with a network error naming it', async () => {
  const fake = await startFakeLlm();
  const baseUrl = fake.openaiBaseUrl;
  await fake.close();
  const choice = createProvider({ client: 'openai', baseUrl, timeoutMs: 30_000 }, {}, { retry: FAST_RETRY });
  assert.ok(choice.ok);
  await assert.rejects(choice.provider.text(MESSAGES), (error: unknown) => {
    assert.ok(error instanceof LlmError);
    assert.equal(error.kind, 'network');
    assert.ok(error.message.includes(baseUrl), error.message);
    return true;
  });
});

describe('createProvider', () => {
  const base = { timeoutMs: 1_000 };

  test('nothing configured: the reason names the env vars and flags', () => {
    const choice = createProvider(base, {});
    assert.equal(choice.ok, false);
    if (!choice.ok) {
      for (const name of ['OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'GEMINI_API_KEY', 'OLLAMA_HOST', '--llm-client']) {
        assert.ok(choice.reason.includes(name), name);
      }
    }
  });

  test('without --llm-client the first key set wins, in the documented order', () => {
    const pick = (env: NodeJS.ProcessEnv) => {
      const choice = createProvider(base, env);
      assert.ok(choice.ok);
      return choice.provider.info;
    };
    assert.equal(pick({ GEMINI_API_KEY: 'g', OPENROUTER_API_KEY: 'r' }).client, 'openrouter');
    assert.equal(pick({ GEMINI_API_KEY: 'g', OPENAI_API_KEY: 'o' }).client, 'openai');
    assert.equal(pick({ OLLAMA_HOST: 'http://127.0.0.1:9' }).client, 'ollama');
    assert.equal(pick({ OLLAMA_HOST: 'http://127.0.0.1:9' }).endpoint, 'http://127.0.0.1:9');
    assert.equal(pick({ OPENAI_API_KEY: '  ', GEMINI_API_KEY: 'g' }).client, 'gemini');
  });

  test('defaults per provider, overridden by the model flags', () => {
    const gemini = createProvider({ ...base, client: 'gemini' }, { GEMINI_API_KEY: 'g' });
    assert.ok(gemini.ok);
    assert.equal(gemini.provider.info.promptModel, 'gemini-2.5-flash');
    assert.match(gemini.provider.info.endpoint, /generativelanguage\.googleapis\.com\/v1beta\/openai/);
    assert.equal(gemini.provider.info.embedDim, 3072);
    const custom = createProvider(
      { ...base, client: 'openai', promptModel: 'gpt-x', embedModel: 'emb-x' },
      { OPENAI_API_KEY: 'o' },
    );
    assert.ok(custom.ok);
    assert.equal(custom.provider.info.promptModel, 'gpt-x');
    // A custom embedding model has no known dimension unless the user gives one.
    assert.equal(custom.provider.info.embedDim, undefined);
    const ollama = createProvider({ ...base, client: 'ollama' }, {});
    assert.ok(ollama.ok);
    assert.equal(ollama.provider.info.endpoint, 'http://127.0.0.1:11434');
  });

  test('an explicit client without its key names the key', () => {
    const choice = createProvider({ ...base, client: 'openrouter' }, { OPENAI_API_KEY: 'o' });
    assert.equal(choice.ok, false);
    if (!choice.ok) assert.match(choice.reason, /OPENROUTER_API_KEY/);
  });

  test('a base URL alone means a self-hosted OpenAI-compatible server', () => {
    const choice = createProvider({ ...base, baseUrl: 'http://127.0.0.1:8000/v1' }, {});
    assert.ok(choice.ok);
    assert.equal(choice.provider.info.client, 'openai');
    assert.equal(choice.provider.info.endpoint, 'http://127.0.0.1:8000/v1');
  });

  test('a malformed base URL is refused with the flag named', () => {
    const choice = createProvider({ ...base, baseUrl: 'localhost:8000' }, { OPENAI_API_KEY: 'o' });
    assert.equal(choice.ok, false);
    if (!choice.ok) assert.match(choice.reason, /--llm-base-url/);
  });
});
