/**
 * Indexing with a provider's embedding model, through the real openai and ollama clients against
 * the local fake LLM server: what is sent, batching, the dimension checks, and the choice between
 * a provider and the local hashed embedder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeConfig, type LlmConfig } from '../src/config.js';
import { embeddingText, indexSourceTree, searchIndex, IndexError } from '../src/search/index.js';
import { EMBED_BATCH, selectEmbedder } from '../src/search/embedder.js';
import { HashedEmbedder } from '../src/search/hashed-embedder.js';
import { startFakeLlm } from './helpers/fake-llm.js';
import { scratchTree } from './helpers/index-tree.js';

const llm = (overrides: Partial<LlmConfig>) => makeConfig({ llm: { timeoutMs: 30_000, ...overrides } }).llm;

test('OpenAI-compatible embeddings: batches, model, dimension and a search that finds the chunk', async (t) => {
  const fake = await startFakeLlm({ embedDim: 8 });
  t.after(() => fake.close());
  const tree = scratchTree();
  t.after(tree.cleanup);
  for (let i = 0; i < 80; i++) tree.write(`extra/m${i}.py`, `def f${i}():\n    return ${i}\n`);
  const settings = {
    ...tree.settings,
    llm: llm({ client: 'openai', baseUrl: fake.openaiBaseUrl, embedModel: 'text-embedding-3-small', embedDim: 8 }),
  };

  const stats = await indexSourceTree(settings, { sourceDir: tree.dir });
  assert.equal(stats.embedder, 'openai embedding model text-embedding-3-small');
  assert.match(stats.store, /openai-text-embedding-3-small\.sqlite$/);
  const embeds = fake.requests.filter((request) => request.kind === 'embed');
  assert.ok(
    embeds.every((request) => request.path === '/v1/embeddings' && request.body.model === 'text-embedding-3-small'),
  );
  assert.ok(embeds.every((request) => request.body.input.length <= EMBED_BATCH));
  assert.equal(
    embeds.reduce((sum, request) => sum + request.body.input.length, 0),
    stats.chunks,
  );

  // The fake's vectors are a hash of the text: the exact text of a chunk finds that chunk.
  const text = readFileSync(join(tree.dir, 'app', 'config.py'), 'utf8')
    .split('\n')
    .slice(15, 20)
    .join('\n');
  const query = embeddingText({ path: 'app/config.py', symbol: 'validate_settings', text });
  const [hit] = await searchIndex(settings, { query, sourceDir: tree.dir, limit: 1 });
  assert.equal(hit!.symbol, 'validate_settings');

  const again = await indexSourceTree(settings, { sourceDir: tree.dir });
  assert.equal(again.embedded, 0);
  assert.equal(
    fake.requests.filter((request) => request.kind === 'embed').length,
    embeds.length + 1,
    'only the query since',
  );
});

test('Ollama embeddings go to /api/embed with the configured model', async (t) => {
  const fake = await startFakeLlm({ embedDim: 16 });
  t.after(() => fake.close());
  const tree = scratchTree();
  t.after(tree.cleanup);
  const settings = {
    ...tree.settings,
    llm: llm({ client: 'ollama', baseUrl: fake.ollamaHost, embedModel: 'nomic-embed-text', embedDim: 16 }),
  };
  const stats = await indexSourceTree(settings, { sourceDir: tree.dir });
  assert.match(stats.store, /ollama-nomic-embed-text\.sqlite$/);
  const embeds = fake.requests.filter((request) => request.kind === 'embed');
  assert.ok(
    embeds.length > 0 &&
      embeds.every((request) => request.api === 'ollama' && request.body.model === 'nomic-embed-text'),
  );
  const hits = await searchIndex(settings, { query: 'anything', sourceDir: tree.dir, limit: 3 });
  assert.equal(hits.length, 3);
});

test('dimension checks: the configured dimension, and an index built with another one', async (t) => {
  const fake8 = await startFakeLlm({ embedDim: 8 });
  t.after(() => fake8.close());
  const tree = scratchTree();
  t.after(tree.cleanup);

  const wrongConfigured = {
    ...tree.settings,
    llm: llm({ client: 'openai', baseUrl: fake8.openaiBaseUrl, embedModel: 'm', embedDim: 1536 }),
  };
  await assert.rejects(
    indexSourceTree(wrongConfigured, { sourceDir: tree.dir }),
    /returned vectors of dimension 8, expected 1536 .*--llm-embed-model-dim/,
  );

  const learnt = { ...tree.settings, llm: llm({ client: 'openai', baseUrl: fake8.openaiBaseUrl, embedModel: 'm' }) };
  await indexSourceTree(learnt, { sourceDir: tree.dir });

  // The same model name now answering with 12 dimensions (a different deployment).
  const fake12 = await startFakeLlm({ embedDim: 12 });
  t.after(() => fake12.close());
  tree.write('app/new.py', 'def new_function():\n    pass\n');
  const changed = { ...tree.settings, llm: llm({ client: 'openai', baseUrl: fake12.openaiBaseUrl, embedModel: 'm' }) };
  await assert.rejects(indexSourceTree(changed, { sourceDir: tree.dir }), (error: unknown) => {
    assert.ok(error instanceof IndexError);
    assert.match(
      error.message,
      /dimension 12 but the index at .*openai-m\.sqlite has dimension 8; it was built with another embedding model/,
    );
    return true;
  });
  const declared = { ...changed, llm: { ...changed.llm, embedDim: 12 } };
  await assert.rejects(
    indexSourceTree(declared, { sourceDir: tree.dir }),
    /local index .* has dimension 8 but openai embedding model m gives 12/,
  );
  await assert.rejects(
    searchIndex(changed, { query: 'config', sourceDir: tree.dir }),
    /query vector has dimension 12 but the index .* has dimension 8/,
  );
});

test('the hashed embedder is used when no provider is configured; a broken explicit choice is an error', async () => {
  assert.ok((await selectEmbedder(llm({}), {})) instanceof HashedEmbedder);
  assert.equal((await selectEmbedder(llm({}), { OPENAI_API_KEY: 'sk-test' })).id, 'openai-text-embedding-3-small');
  await assert.rejects(selectEmbedder(llm({ client: 'openai' }), {}), (error: unknown) => {
    assert.ok(error instanceof IndexError);
    assert.match(error.message, /^cannot embed: --llm-client openai needs an API key: set OPENAI_API_KEY/);
    return true;
  });
});
