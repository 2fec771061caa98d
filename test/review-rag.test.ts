/**
 * Retrieval for the suggest tools, end to end through MCP: a tree indexed with
 * fault_index_source_code gives the model related code with file:line references, found with
 * the snippet as the query; without an index the suggestion still works, with no context.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeConfig } from '../src/config.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { promptText, startFakeLlm } from './helpers/fake-llm.js';

const SNIPPET = `def fetch_quote(client, symbol):
    return client.get(f"/quotes/{symbol}").json()
`;

const IMPROVED = `\`\`\`python
def fetch_quote(client, symbol):
    delay = backoff_delay(0)
    return client.get(f"/quotes/{symbol}", timeout=2.0).json()
\`\`\``;

test('suggest tools get related code from the index, with file:line references', async () => {
  const base = await mkdtemp(join(tmpdir(), 'faultline-rag-'));
  const tree = join(base, 'tree');
  await mkdir(tree);
  await writeFile(
    join(tree, 'retry_policy.py'),
    'import random\n\n\ndef backoff_delay(attempt):\n    """Delay ' +
      'before retrying a quote fetch."""\n    return min(2 ** attempt, ' +
      '30) * random.random()\n',
  );
  await writeFile(join(tree, 'unrelated.py'), 'def render_banner(title):\n    return "*" * len(title)\n');
  const fake = await startFakeLlm({ chat: [IMPROVED, IMPROVED] });
  const config = makeConfig({
    llm: { baseUrl: fake.openaiBaseUrl, promptModel: 'review-model', embedModel: 'embed-model', timeoutMs: 30_000 },
    dataDir: join(base, 'data'),
  });
  const { client, close } = await connectInMemory(config);
  try {
    const indexed = await client.callTool({
      name: 'fault_index_source_code',
      arguments: { source_dir: tree, lang: 'python' },
    });
    assert.equal(indexed.isError, undefined, textOf(indexed));
    assert.equal(textOf(indexed), 'done');

    const suggested = await client.callTool({
      name: 'fault_suggest_better_function_reliability',
      arguments: { snippet: SNIPPET, lang: 'python', score: 0.3, target_score: 0.8 },
    });
    assert.equal(suggested.isError, undefined, textOf(suggested));
    assert.match(textOf(suggested), /timeout=2\.0/);

    const chats = fake.requests.filter((request) => request.kind === 'chat');
    assert.equal(chats.length, 1);
    const prompt = promptText(chats[0]!);
    assert.match(
      prompt,
      new RegExp(`${join(tree, 'retry_policy.py').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4`),
      'related code cited as path:line',
    );
    assert.match(prompt, /backoff_delay/);
    assert.match(prompt, /fetch_quote/, 'the snippet itself is in the prompt');
    const embeddings = fake.requests.filter((request) => request.kind === 'embed');
    assert.ok(
      embeddings.some((request) => JSON.stringify(request.body.input).includes('fetch_quote')),
      'the query embedded is the snippet',
    );
  } finally {
    await close();
    await fake.close();
    await rm(base, { recursive: true, force: true });
  }
});

test('with the root inside an indexed tree, related code comes from under that root only', async () => {
  const base = await mkdtemp(join(tmpdir(), 'faultline-rag-'));
  const tree = join(base, 'tree');
  await mkdir(join(tree, 'svc'), { recursive: true });
  await mkdir(join(tree, 'svcold'));
  const retry =
    'import random\n\n\ndef backoff_delay(attempt):\n    """Delay ' +
    'before retrying a quote fetch."""\n    return min(2 ** attempt, ' +
    '30) * random.random()\n';
  await writeFile(join(tree, 'svc', 'retry_policy.py'), retry);
  await writeFile(join(tree, 'svcold', 'retry_policy.py'), retry.replace('backoff_delay', 'old_backoff_delay'));
  const fake = await startFakeLlm({ chat: [IMPROVED] });
  const llm = {
    baseUrl: fake.openaiBaseUrl,
    promptModel: 'review-model',
    embedModel: 'embed-model',
    timeoutMs: 30_000,
  };
  const dataDir = join(base, 'data');
  const indexer = await connectInMemory(makeConfig({ llm, dataDir }));
  const rooted = await connectInMemory(makeConfig({ llm, dataDir, roots: [join(tree, 'svc')] }));
  try {
    const indexed = await indexer.client.callTool({
      name: 'fault_index_source_code',
      arguments: { source_dir: tree, lang: 'python' },
    });
    assert.equal(indexed.isError, undefined, textOf(indexed));
    const suggested = await rooted.client.callTool({
      name: 'fault_suggest_better_function_reliability',
      arguments: { snippet: SNIPPET, lang: 'python', score: 0.3, target_score: 0.8 },
    });
    assert.equal(suggested.isError, undefined, textOf(suggested));
    const prompt = promptText(fake.requests.filter((request) => request.kind === 'chat')[0]!);
    assert.ok(prompt.includes(`${join(tree, 'svc', 'retry_policy.py')}:4`), 'related code under the root is cited');
    assert.ok(!prompt.includes('svcold'), 'nothing outside the root reaches the prompt');
  } finally {
    await indexer.close();
    await rooted.close();
    await fake.close();
    await rm(base, { recursive: true, force: true });
  }
});
