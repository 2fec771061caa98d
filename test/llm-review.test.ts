/**
 * The review operations (score, suggest, SLOs, file changes) through the real openai and ollama
 * clients against the fake LLM server: what they send, and what they make of each kind of reply.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, test } from 'node:test';
import { languageByName } from '../src/code/index.js';
import { LlmError } from '../src/llm/errors.js';
import { proposeFileChanges } from '../src/llm/file-changes.js';
import { applyModelPatch } from '../src/llm/patch.js';
import type { LlmProvider } from '../src/llm/provider.js';
import { scoreSnippet } from '../src/llm/score.js';
import { createProvider } from '../src/llm/select.js';
import { suggestSlos } from '../src/llm/slo.js';
import { suggestBetterFunction } from '../src/llm/suggest.js';
import { promptText, startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { fixturePath } from './helpers/repo.js';

const FILE = readFileSync(fixturePath('llm', 'fetch_all.py'), 'utf8');
const SNIPPET = FILE.slice(FILE.indexOf('def fetch_all'), FILE.indexOf('\n\n\ndef total'));
const VALID_SLOS = readFileSync(fixturePath('llm', 'slos-valid.json'), 'utf8');
const PYTHON = languageByName('python');

const BATCHED =
  'def fetch_all(client, ids):\n    """Fetch every record by id, in ' +
  'one batched call."""\n    return client.get_many(ids)\n';
const APPLYING_DIFF = [
  '```diff',
  '--- a/snippet',
  '+++ b/snippet',
  '@@ -1,6 +1,3 @@',
  ' def fetch_all(client, ids):',
  '-    """Fetch every record by id."""',
  '-    results = []',
  '-    for record_id in ids:',
  '-        results.append(client.get(record_id))',
  '-    return results',
  '+    """Fetch every record by id, in one batched call."""',
  '+    return client.get_many(ids)',
  '```',
].join('\n');
const NON_APPLYING_DIFF = [
  '```diff',
  '@@ -1,2 +1,2 @@',
  ' def fetch_all(client, ids):',
  '-    data = []',
  '+    data = {}',
  '```',
].join('\n');

for (const api of ['openai', 'ollama'] as const) {
  describe(`review operations over ${api}`, () => {
    let fake: FakeLlm;
    let provider: LlmProvider;
    before(async () => {
      fake = await startFakeLlm();
      const choice = createProvider(
        {
          client: api,
          baseUrl: api === 'openai' ? fake.openaiBaseUrl : fake.ollamaHost,
          promptModel: `${api}-model`,
          timeoutMs: 30_000,
        },
        {},
        { retry: { retries: 1, baseDelayMs: 5, maxDelayMs: 10 } },
      );
      assert.ok(choice.ok);
      provider = choice.provider;
    });
    after(() => fake.close());
    beforeEach(() => {
      assert.equal(fake.pendingChat(), 0, 'the previous test consumed its script');
      fake.requests.length = 0;
    });

    test('score: the prompt carries the snippet and the language; a fenced reply is parsed', async () => {
      fake.queueChat('```json\n{"score": 0.4, "explanation": "One query per id."}\n```');
      const result = await scoreSnippet(provider, { aspect: 'performance', snippet: SNIPPET, lang: 'python' });
      assert.deepEqual(result, { score: 0.4, explanation: 'One query per id.' });
      const [request] = fake.chatRequests();
      assert.equal(request!.body.model, `${api}-model`);
      const prompt = promptText(request!);
      assert.ok(prompt.includes(SNIPPET), 'the snippet is in the prompt verbatim');
      assert.match(prompt, /performance of the following python code/);
      assert.match(prompt, /```python\n/);
    });

    test('score: reliability uses its own prompt', async () => {
      fake.queueChat('{"score": 0.2, "explanation": "No timeout on client.get."}');
      await scoreSnippet(provider, { aspect: 'reliability', snippet: SNIPPET, lang: 'python' });
      assert.match(promptText(fake.chatRequests()[0]!), /reliability of the following python code/);
    });

    test('suggest: a diff that applies is checked and normalised', async () => {
      fake.queueChat(`Here is the diff:\n${APPLYING_DIFF}\n`);
      const result = await suggestBetterFunction(provider, suggestInput());
      assert.equal(result.applies, true);
      assert.equal(result.note, undefined);
      assert.match(result.diff, /^--- a\/snippet\n\+\+\+ b\/snippet\n@@ /);
      const applied = applyModelPatch(`${SNIPPET}\n`, result.diff);
      assert.ok(applied.ok);
      assert.equal(applied.result, BATCHED);
      const prompt = promptText(fake.chatRequests()[0]!);
      assert.match(prompt, /rated 0\.3 for performance/);
      assert.match(prompt, /at least 0\.8/);
      assert.ok(prompt.includes(SNIPPET));
    });

    test('suggest: code instead of a diff gets a locally computed diff', async () => {
      fake.queueChat(`\`\`\`python\n${BATCHED}\`\`\``);
      const result = await suggestBetterFunction(provider, suggestInput());
      assert.equal(result.applies, true);
      assert.match(result.note ?? '', /computed locally/);
      assert.match(result.diff, /^\+    return client\.get_many\(ids\)$/m);
      assert.equal(fake.chatRequests().length, 1);
    });

    test('suggest: a diff that does not apply gets one repair turn asking for the function', async () => {
      fake.queueChat(NON_APPLYING_DIFF, `\`\`\`python\n${BATCHED}\`\`\``);
      const result = await suggestBetterFunction(provider, suggestInput());
      assert.equal(result.applies, true);
      const requests = fake.chatRequests();
      assert.equal(requests.length, 2);
      const repair = requests[1]!.body.messages as Array<{ role: string; content: string }>;
      assert.match(repair.at(-1)!.content, /the diff does not apply/);
      assert.match(repair.at(-1)!.content, /complete improved function/);
    });

    test('suggest: when neither reply applies, the diff is returned with applies=false and why', async () => {
      fake.queueChat(NON_APPLYING_DIFF, NON_APPLYING_DIFF);
      const result = await suggestBetterFunction(provider, suggestInput());
      assert.equal(result.applies, false);
      assert.match(result.diff, /\+    data = \{\}/);
      assert.match(result.note ?? '', /does not apply/);
    });

    test('suggest: code that does not parse is sent back once', async () => {
      fake.queueChat(
        '```python\ndef fetch_all(client, ids)\n    return client.get_many(ids\n```',
        `\`\`\`python\n${BATCHED}\`\`\``,
      );
      const result = await suggestBetterFunction(provider, suggestInput());
      assert.equal(result.applies, true);
      assert.match(promptText(fake.chatRequests()[1]!), /does not parse as Python/);
    });

    test('suggest: an empty diff block means no change', async () => {
      fake.queueChat('```diff\n```');
      const result = await suggestBetterFunction(provider, suggestInput());
      assert.deepEqual(result, { diff: '', applies: true, note: 'No change suggested.' });
    });

    test('score: a string score, a list explanation and a bracketed aside are read in one call', async () => {
      fake.queueChat(
        'On a scale [0, 1] I rate it:\n```json\n{"score": "0.45", ' +
          '"explanation": ["One call per id.", "No batching."]}\n```',
      );
      const result = await scoreSnippet(provider, { aspect: 'performance', snippet: SNIPPET, lang: 'python' });
      assert.deepEqual(result, { score: 0.45, explanation: 'One call per id. No batching.' });
      assert.equal(fake.chatRequests().length, 1, 'no repair turn was needed');
    });

    test('suggest: a diff with miscounted hunk headers, or none, applies without a repair turn', async () => {
      const body = APPLYING_DIFF.split('\n').slice(4, -1).join('\n');
      const replies = [
        APPLYING_DIFF.replace('@@ -1,6 +1,3 @@', '@@ -1,9 +1,2 @@'),
        APPLYING_DIFF.replace('@@ -1,6 +1,3 @@', '@@'),
        `\`\`\`diff\n${body}\n\`\`\``,
        `\`\`\`diff\n--- a/snippet\n+++ b/snippet\n${body}\n\`\`\``,
      ];
      for (const reply of replies) {
        fake.requests.length = 0;
        fake.queueChat(reply);
        for (const language of [PYTHON, undefined]) {
          if (language === undefined) fake.queueChat(reply);
          const result = await suggestBetterFunction(provider, { ...suggestInput(), language });
          assert.equal(result.applies, true, reply);
          assert.equal(result.note, undefined, reply);
          const applied = applyModelPatch(`${SNIPPET}\n`, result.diff);
          assert.ok(applied.ok && applied.result === BATCHED, reply);
        }
        assert.equal(fake.chatRequests().length, 2, 'one call each, no repair');
      }
    });

    test('suggest: code for another function, or text that merely parses, is not accepted', async () => {
      fake.queueChat('```python\ndef other(x):\n    return x + 1\n```', `\`\`\`python\n${BATCHED}\`\`\``);
      const repaired = await suggestBetterFunction(provider, suggestInput());
      assert.equal(repaired.applies, true);
      assert.match(promptText(fake.chatRequests()[1]!), /does not define fetch_all, the function to improve/);
      fake.queueChat('x', 'x');
      await assert.rejects(
        suggestBetterFunction(provider, suggestInput()),
        (error: unknown) =>
          error instanceof LlmError &&
          error.kind === 'invalid_reply' &&
          /does not define fetch_all/.test(error.message),
      );
    });

    test('suggest: prose in both replies is an invalid_reply error quoting it, never a diff', async () => {
      const prose = 'I think you should add retries.';
      for (const language of [PYTHON, undefined]) {
        fake.queueChat(prose, prose);
        await assert.rejects(suggestBetterFunction(provider, { ...suggestInput(), language }), (error: unknown) => {
          assert.ok(error instanceof LlmError && error.kind === 'invalid_reply', String(error));
          assert.match(error.message, /no usable code or diff/);
          assert.ok(error.message.includes(`"${prose}"`), error.message);
          return true;
        });
      }
      assert.equal(fake.chatRequests().length, 4, 'one repair turn each');
    });

    test('suggest: prose, then a diff that does not apply, returns that diff with applies=false', async () => {
      fake.queueChat('I think you should add retries.', NON_APPLYING_DIFF);
      const result = await suggestBetterFunction(provider, suggestInput());
      assert.equal(result.applies, false);
      assert.match(result.diff, /\+    data = \{\}/);
      assert.doesNotMatch(result.diff, /retries/);
    });

    test('suggest: related code from the index reaches the prompt with path:lines', async () => {
      fake.queueChat(APPLYING_DIFF);
      const queries: string[] = [];
      const result = await suggestBetterFunction(provider, {
        ...suggestInput(),
        searchContext: async (query) => {
          queries.push(query);
          return [
            { path: 'src/store/client.py', startLine: 12, endLine: 20, text: 'def get_many(self, ids):\n    ...' },
          ];
        },
      });
      assert.equal(result.applies, true);
      assert.deepEqual(queries, [SNIPPET]);
      const prompt = promptText(fake.chatRequests()[0]!);
      assert.match(prompt, /src\/store\/client\.py:12-20/);
      assert.match(prompt, /def get_many\(self, ids\)/);
    });

    test('SLOs: a valid list is returned as typed objects; the schema is sent', async () => {
      fake.queueChat(VALID_SLOS);
      const slos = await suggestSlos(provider, { snippet: SNIPPET, lang: 'python' });
      assert.equal(slos.length, 2);
      assert.equal(slos[0]!.sli['gcp/cloudrun'].goal, 0.995);
      const body = fake.chatRequests()[0]!.body;
      const schema = api === 'openai' ? body.response_format.json_schema.schema : body.format;
      assert.deepEqual(schema.required, ['slos']);
      assert.ok(promptText(fake.chatRequests()[0]!).includes(SNIPPET));
    });

    test('SLOs: a bare array, as the reference tool asked for, is accepted as the list', async () => {
      fake.queueChat(`\`\`\`json\n${JSON.stringify(JSON.parse(VALID_SLOS).slos)}\n\`\`\``);
      const slos = await suggestSlos(provider, { snippet: SNIPPET, lang: 'python' });
      assert.equal(slos.length, 2);
      assert.equal(fake.chatRequests().length, 1);
    });

    test('SLOs: malformed PromQL and window are caught and repaired', async () => {
      const broken = JSON.parse(VALID_SLOS);
      broken.slos[0].window = '5 minutes';
      broken.slos[1].sli.prometheus = 'sum(rate(http_requests_total{code!~"5.."}[5 m]))';
      fake.queueChat(JSON.stringify(broken), VALID_SLOS);
      const slos = await suggestSlos(provider, { snippet: SNIPPET, lang: 'python' });
      assert.equal(slos.length, 2);
      const repair = promptText(fake.chatRequests()[1]!);
      assert.match(repair, /slos\.0\.window/);
      assert.match(repair, /slos\.1\.sli\.prometheus: the PromQL range/);
    });

    test('file changes: old comes from disk, diff is computed, new must parse', async () => {
      const newFile = FILE.replace('results = []', 'results: list = []');
      fake.queueChat(
        JSON.stringify({ score: 0.3, explanation: 'broken', new: 'def fetch_all(client, ids:\n', dependencies: [] }),
        JSON.stringify({
          score: 0.3,
          explanation: 'Typed the list.',
          new: newFile,
          old: 'ignored echo',
          dependencies: ['typing'],
        }),
      );
      const change = await proposeFileChanges(provider, { path: '/src/fetch_all.py', source: FILE, language: PYTHON });
      assert.equal(change.old, FILE);
      assert.equal(change.new, newFile);
      assert.deepEqual(change.dependencies, ['typing']);
      assert.match(change.diff, /^--- \/src\/fetch_all\.py\n\+\+\+ \/src\/fetch_all\.py\n/);
      assert.match(change.diff, /^\+    results: list = \[\]$/m);
      assert.match(promptText(fake.chatRequests()[0]!), /fetch_all\.py/);
      assert.match(promptText(fake.chatRequests()[1]!), /does not parse as Python/);
    });

    test('file changes: two unparsable proposals end in an error quoting the reply', async () => {
      const bad = JSON.stringify({ score: 0.3, explanation: 'x', new: 'def broken(:\n', dependencies: [] });
      fake.queueChat(bad, bad);
      await assert.rejects(
        proposeFileChanges(provider, { path: '/src/fetch_all.py', source: FILE, language: PYTHON }),
        (error: unknown) => {
          assert.ok(error instanceof LlmError);
          assert.equal(error.kind, 'invalid_reply');
          assert.match(error.message, /does not parse as Python/);
          assert.match(error.message, /def broken/);
          return true;
        },
      );
    });
  });
}

function suggestInput() {
  return {
    aspect: 'performance' as const,
    snippet: SNIPPET,
    lang: 'python',
    language: PYTHON,
    score: 0.3,
    targetScore: 0.8,
  };
}

test('suggest: the request and its repair share one LLM timeout', async () => {
  const fake = await startFakeLlm();
  try {
    const choice = createProvider(
      { client: 'openai', baseUrl: fake.openaiBaseUrl, timeoutMs: 400 },
      {},
      { retry: { retries: 0, baseDelayMs: 5, maxDelayMs: 10 } },
    );
    assert.ok(choice.ok);
    // Each reply alone is within the timeout; the two together are not.
    fake.queueChat(
      { delayMs: 300, content: 'no diff here' },
      { delayMs: 300, content: `\`\`\`python\n${BATCHED}\`\`\`` },
    );
    await assert.rejects(suggestBetterFunction(choice.provider, suggestInput()), (error: unknown) => {
      assert.ok(error instanceof LlmError);
      assert.equal(error.kind, 'timeout');
      assert.match(error.message, /did not finish within 400ms/);
      return true;
    });
  } finally {
    await fake.close();
  }
});
