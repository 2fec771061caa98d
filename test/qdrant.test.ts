/**
 * The Qdrant store through @qdrant/js-client-rest: against test/helpers/fake-qdrant.ts (asserting
 * the requests), and the behaviour suite again against a real Qdrant when QDRANT_URL is set
 * (reported as skipped otherwise).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QdrantClient } from '@qdrant/js-client-rest';
import { chunkId, indexSourceTree, searchIndex, IndexError } from '../src/search/index.js';
import { hexOf, LAYOUT, QdrantStore, UPSERT_BATCH } from '../src/search/qdrant-store.js';
import { uuidV5 } from '../src/search/uuid.js';
import { startFakeQdrant, type FakeQdrant } from './helpers/fake-qdrant.js';
import { scratchTree, type ScratchTree } from './helpers/index-tree.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function collectionOf(store: string): string {
  return /collection (\S+)$/.exec(store)![1]!;
}

/** Behaviour any Qdrant must show; `url` is the fake's or the real server's. */
async function behaviour(
  url: string,
  apiKey: string | undefined,
  t: { after(fn: () => unknown): void },
): Promise<ScratchTree> {
  const tree = scratchTree({ QDRANT_URL: url, ...(apiKey ? { QDRANT_API_KEY: apiKey } : {}) });
  t.after(tree.cleanup);
  const first = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  t.after(async () => {
    // A real server keeps collections: remove this run's.
    const client = new QdrantClient({
      url,
      ...(apiKey ? { headers: { 'api-key': apiKey } } : {}),
      checkCompatibility: false,
    });
    await client.deleteCollection(collectionOf(first.store)).catch(() => undefined);
  });
  assert.match(first.store, new RegExp(`^qdrant ${url} collection faultline-tree-[0-9a-f]{12}-hashed-v1-512$`));
  assert.equal(first.files, 5);
  assert.equal(first.chunks, first.embedded);

  const [hit] = await searchIndex(tree.settings, { query: 'parse config file', sourceDir: tree.dir, limit: 3 });
  assert.equal(hit!.symbol, 'parse_config_file');
  assert.equal(hit!.path, join(tree.dir, 'app', 'config.py'));
  assert.deepEqual([hit!.startLine, hit!.endLine], [8, 13]);
  assert.ok(hit!.code.startsWith('def parse_config_file(path):'));
  const [prefixHit] = await searchIndex(tree.settings, { query: 'parse_conf', sourceDir: tree.dir, limit: 3 });
  assert.equal(
    prefixHit!.symbol,
    'parse_config_file',
    'a prefix of the name finds it first (the names_hex prefix index)',
  );

  const again = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual([again.changed, again.embedded, again.chunks], [0, 0, first.chunks]);

  tree.write(
    'lib/server.go',
    readFileSync(join(tree.dir, 'lib/server.go'), 'utf8').replace('NewServer', 'CreateServerInstance'),
  );
  const edited = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual([edited.changed, edited.embedded, edited.chunks], [1, 4, first.chunks]);
  const hits = await searchIndex(tree.settings, {
    query: 'new server create instance',
    sourceDir: tree.dir,
    limit: 50,
  });
  assert.equal(hits[0]!.symbol, 'CreateServerInstance');
  assert.ok(!hits.some((h) => h.symbol === 'NewServer'), 'the stale chunk is gone');

  tree.remove('web/rateLimiter.ts');
  const deleted = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.deepEqual([deleted.removed, deleted.chunks], [1, first.chunks - 5]);
  return tree;
}

test('Qdrant store against the fake server: requests, ids, payloads, batching, stale deletes', async (t) => {
  const fake = await startFakeQdrant({ apiKey: 'secret-key', scrollPage: 3 });
  t.after(() => fake.close());
  const tree = await behaviour(fake.url, 'secret-key', t);

  assert.ok(
    fake.requests.every((request) => request.apiKey === 'secret-key'),
    'QDRANT_API_KEY is sent as the api-key header',
  );
  const [create, ...moreCreates] = fake.requestsTo('PUT', `-hashed-v1-512`);
  assert.equal(moreCreates.length, 0, 'the collection is created once');
  assert.deepEqual(create!.body.vectors, { dense: { size: 512, distance: 'Cosine' } });
  assert.deepEqual(
    create!.body.sparse_vectors,
    { lexical: { modifier: 'idf' } },
    'Qdrant computes the IDF of the lexical terms',
  );
  const indexes = fake
    .requestsTo('PUT', '/index')
    .map((request) => [request.body.field_name, request.body.field_schema, request.query.get('wait')]);
  assert.deepEqual(indexes, [
    ['path', 'keyword', 'true'],
    ['language', 'keyword', 'true'],
    ['names', 'keyword', 'true'],
    ['names_hex', { type: 'text', tokenizer: 'prefix', min_token_len: 2, lowercase: true }, 'true'],
  ]);
  // Search asks Qdrant for each channel apart (their scores make the hits' scores): the dense
  // vector, the sparse one, then the cosine of the candidates the dense query did not return.
  const [dense, sparse, rest] = fake.requestsTo('POST', '/points/query').map((request) => request.body);
  assert.equal(dense.using, 'dense');
  assert.equal(dense.query.length, 512);
  assert.equal(sparse.using, 'lexical');
  assert.equal(sparse.query.indices.length, 3, '"parse config file": three terms');
  if (rest?.filter) assert.ok(rest.filter.must[0].has_id.length > 0);

  const collection = [...fake.collections.values()][0]!;
  const points = [...collection.points.values()];
  for (const point of points) {
    assert.match(String(point.id), UUID);
    const payload = point.payload as {
      path: string;
      symbol: string;
      hash: string;
      code: string;
      layout: number;
      names: string[];
      names_hex: string[];
    };
    assert.equal(point.id, chunkId(payload), 'the id is UUIDv5 of path, symbol and content hash');
    assert.deepEqual(Object.keys(payload).sort(), [
      'code',
      'end_line',
      'file_hash',
      'hash',
      'kind',
      'language',
      'layout',
      'names',
      'names_hex',
      'path',
      'start_line',
      'symbol',
    ]);
    assert.equal(payload.layout, LAYOUT);
    assert.deepEqual(
      payload.names_hex,
      payload.names.map((name) => Buffer.from(name).toString('hex')),
    );
    const vector = point.vector as unknown as { dense: number[]; lexical: { indices: number[]; values: number[] } };
    assert.equal(vector.dense.length, 512);
    assert.ok(
      vector.lexical.indices.length > 0 &&
        vector.lexical.indices.every((index) => Number.isInteger(index) && index >= 0 && index < 2 ** 32),
    );
  }
  assert.ok(points.some((point) => point.payload.symbol === 'CreateServerInstance'));

  // The edit upserted server.go's four chunks, then deleted its points not among them.
  const deletes = fake.requestsTo('POST', '/points/delete');
  assert.equal(deletes.length, 2, 'one for the edited file, one for the deleted file');
  assert.deepEqual(deletes[0]!.body.filter.must, [{ key: 'path', match: { value: 'lib/server.go' } }]);
  assert.equal(deletes[0]!.body.filter.must_not[0].has_id.length, 4);
  assert.deepEqual(deletes[1]!.body.filter, { must: [{ key: 'path', match: { value: 'web/rateLimiter.ts' } }] });
  assert.ok(fake.requestsTo('POST', '/points/scroll').length > 3, 'the file hashes are read page by page');

  // Many chunks go in batches of at most UPSERT_BATCH points.
  const before = fake.requestsTo('PUT', '/points').length;
  tree.write(
    'gen/many.py',
    Array.from({ length: 300 }, (_, i) => `def generated_${i}():\n    return ${i}\n`).join('\n'),
  );
  await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  const upserts = fake.requestsTo('PUT', '/points').slice(before);
  assert.deepEqual(
    upserts.map((request) => request.body.points.length),
    [UPSERT_BATCH, UPSERT_BATCH, 300 - 2 * UPSERT_BATCH],
  );
  assert.ok(upserts.every((request) => request.query.get('wait') === 'true'));
});

test('a file whose points carry two file hashes (an interrupted run) is redone', async (t) => {
  const fake = await startFakeQdrant();
  t.after(() => fake.close());
  const store = new QdrantStore({ url: fake.url }, 'mixed');
  const chunk = (symbol: string, fileHash: string) => ({
    path: 'a.py',
    language: 'python',
    symbol,
    kind: 'function' as const,
    startLine: 1,
    endLine: 2,
    text: symbol,
    hash: symbol,
    id: uuidV5(symbol),
    fileHash,
    vector: new Float32Array([1, 0, 0]),
  });
  await store.replaceFile('a.py', [chunk('old', 'hash-1'), chunk('new', 'hash-2')]);
  await store.replaceFile('b.py', [{ ...chunk('b', 'hash-3'), path: 'b.py' }]);
  await store.commit();
  assert.deepEqual(
    await store.fileHashes(),
    new Map([
      ['a.py', ''],
      ['b.py', 'hash-3'],
    ]),
  );
});

test('Qdrant errors name the URL: unreachable server, dimension mismatch, bad QDRANT_URL', async (t) => {
  const closedPort = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const unreachable = scratchTree({ QDRANT_URL: `http://127.0.0.1:${closedPort}` });
  t.after(unreachable.cleanup);
  await assert.rejects(indexSourceTree(unreachable.settings, { sourceDir: unreachable.dir }), (error: unknown) => {
    assert.ok(error instanceof IndexError);
    assert.match(
      error.message,
      new RegExp(
        `^could not reach Qdrant at http://127\\.0\\.0\\.1:${closedPort} to check the collection: .*ECONNREFUSED`,
      ),
    );
    return true;
  });
  await assert.rejects(
    searchIndex(unreachable.settings, { query: 'config', sourceDir: unreachable.dir }),
    /could not reach Qdrant at http:\/\/127\.0\.0\.1/,
  );

  const fake: FakeQdrant = await startFakeQdrant();
  t.after(() => fake.close());
  const tree = scratchTree({ QDRANT_URL: fake.url });
  t.after(tree.cleanup);
  const first = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  const collection = fake.collections.get(collectionOf(first.store))!;
  collection.size = 8;
  collection.points.clear();
  await assert.rejects(indexSourceTree(tree.settings, { sourceDir: tree.dir }), (error: unknown) => {
    assert.ok(error instanceof IndexError);
    assert.match(
      error.message,
      new RegExp(
        `qdrant ${fake.url} collection \\S+ has dimension 8 but local hashed identifier embedder .* gives 512`,
      ),
    );
    return true;
  });

  const guarded = await startFakeQdrant({ apiKey: 'right-key' });
  t.after(() => guarded.close());
  const wrongKey = scratchTree({ QDRANT_URL: guarded.url, QDRANT_API_KEY: 'wrong-key' });
  t.after(wrongKey.cleanup);
  await assert.rejects(
    indexSourceTree(wrongKey.settings, { sourceDir: wrongKey.dir }),
    new RegExp(
      `^IndexError: Qdrant at ${guarded.url} failed to check the ` +
        `collection: Must provide an API key .* \\(check ` +
        `QDRANT_API_KEY\\)$`,
    ),
  );

  const bad = scratchTree({ QDRANT_URL: 'localhost:6333' });
  t.after(bad.cleanup);
  await assert.rejects(
    indexSourceTree(bad.settings, { sourceDir: bad.dir }),
    /QDRANT_URL must be an http:\/\/ or https:\/\/ URL .*"localhost:6333"/,
  );
});

test('uuidV5 matches the RFC test vector', () => {
  assert.equal(
    uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
    '2ed6657d-e927-568b-95e1-2665a8aea6a2',
  );
});

test('Qdrant store against a real Qdrant (QDRANT_URL)', {
  skip: !process.env.QDRANT_URL && 'QDRANT_URL not set',
}, async (t) => {
  await behaviour(process.env.QDRANT_URL!.replace(/\/+$/, ''), process.env.QDRANT_API_KEY, t);
});

test(
  'Qdrant: an identifier query puts the definition of that name ' + 'first; an old-layout collection is rebuilt once',
  async (t) => {
    const fake = await startFakeQdrant();
    t.after(() => fake.close());
    const tree = scratchTree({ QDRANT_URL: fake.url });
    t.after(tree.cleanup);
    const first = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    for (const name of [
      'RetryPolicy.next_delay',
      'next_delay',
      'TokenBucketRateLimiter.tryAcquireToken',
      'parse_config_file',
    ]) {
      const [hit] = await searchIndex(tree.settings, { query: name, sourceDir: tree.dir, limit: 5 });
      assert.equal(hit!.symbol.endsWith(name), true, `${name} → ${hit!.symbol}`);
      assert.equal(hit!.score, 1, 'an exact name match scores 1');
    }
    const lookups = fake.requestsTo('POST', '/points/scroll').filter((request) => request.body.filter);
    assert.deepEqual(lookups.at(-2)!.body.filter.must, [{ key: 'names', match: { value: 'parse_config_file' } }]);
    assert.deepEqual(lookups.at(-1)!.body.filter.must, [
      { key: 'names_hex', match: { text: hexOf('parse_config_file') } },
    ]);

    // A collection written before hybrid search: one unnamed vector, no sparse vectors.
    const collection = fake.collections.get(collectionOf(first.store))!;
    collection.named = false;
    await assert.rejects(
      searchIndex(tree.settings, { query: 'config', sourceDir: tree.dir }),
      /written by an older faultline \(without hybrid search\); index the tree again/,
    );
    const rebuilt = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.match(rebuilt.note ?? '', /layout of an older faultline .* rebuilt once/);
    assert.deepEqual([rebuilt.changed, rebuilt.chunks], [first.changed, first.chunks]);
    assert.equal(fake.requestsTo('DELETE', collectionOf(first.store)).length, 1);
    const again = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.deepEqual([again.note, again.changed], [undefined, 0]);
  },
);

test('Qdrant: a prefix of a name or qualified name ranks that definition first, as the local store does', async (t) => {
  const fake = await startFakeQdrant();
  t.after(() => fake.close());
  const remote = scratchTree({ QDRANT_URL: fake.url });
  t.after(remote.cleanup);
  const local = scratchTree();
  t.after(local.cleanup);
  await indexSourceTree(remote.settings, { sourceDir: remote.dir });
  await indexSourceTree(local.settings, { sourceDir: local.dir });
  const cases: Array<[string, string]> = [
    ['parse_conf', 'parse_config_file'],
    ['validate_sett', 'validate_settings'],
    ['RetryPolicy.next_d', 'RetryPolicy.next_delay'],
    ['config.RetryPol', 'RetryPolicy'],
    ['TokenBucketRate', 'TokenBucketRateLimiter'],
    ['TokenBucketRateLimiter.tryAcq', 'TokenBucketRateLimiter.tryAcquireToken'],
  ];
  for (const [query, expected] of cases) {
    const [remoteHit] = await searchIndex(remote.settings, { query, sourceDir: remote.dir, limit: 5 });
    const [localHit] = await searchIndex(local.settings, { query, sourceDir: local.dir, limit: 5 });
    assert.equal(remoteHit?.symbol, expected, `Qdrant: "${query}"`);
    assert.equal(localHit?.symbol, expected, `local: "${query}"`);
    assert.ok(remoteHit!.score < 1, 'a prefix is not an exact name match');
  }
  const prefixLookups = fake
    .requestsTo('POST', '/points/scroll')
    .filter((request) => request.body.filter?.must?.[0]?.key === 'names_hex');
  assert.equal(prefixLookups.length, cases.length);
  assert.deepEqual(prefixLookups[0]!.body.filter.must[0], { key: 'names_hex', match: { text: hexOf('parse_conf') } });
  // The prefix index itself: a name's own prefixes match, a piece from its middle does not.
  const client = new QdrantClient({ url: fake.url, checkCompatibility: false });
  const collection = collectionOf((await indexSourceTree(remote.settings, { sourceDir: remote.dir })).store);
  const symbolsFor = async (text: string): Promise<string[]> =>
    (
      await client.scroll(collection, {
        limit: 100,
        with_payload: ['symbol'],
        filter: { must: [{ key: 'names_hex', match: { text } }] },
      })
    ).points
      .map((point) => String(point.payload!.symbol))
      .sort();
  assert.deepEqual(await symbolsFor(hexOf('parse_conf')), ['parse_config_file']);
  assert.deepEqual(await symbolsFor(hexOf('config.parse_c')), ['parse_config_file'], 'the module-qualified name');
  assert.deepEqual(await symbolsFor(hexOf('config_file')), []);
  assert.deepEqual(await symbolsFor(hexOf('retrypolicy.')), ['RetryPolicy.__init__', 'RetryPolicy.next_delay']);
});

test(
  'Qdrant: a collection of an older layout (no layout in the ' +
    'payload, or no prefix index) is rebuilt once, with a note',
  async (t) => {
    const fake = await startFakeQdrant();
    t.after(() => fake.close());
    const tree = scratchTree({ QDRANT_URL: fake.url });
    t.after(tree.cleanup);
    const first = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    const name = collectionOf(first.store);

    // Written before the layout version: points without `layout`, names qualified the old way.
    for (const point of fake.collections.get(name)!.points.values()) delete point.payload.layout;
    await assert.rejects(
      searchIndex(tree.settings, { query: 'parse_config_file', sourceDir: tree.dir }),
      /older faultline \(layout 2, this one writes 3\); index the tree again to rebuild it once/,
    );
    const rebuilt = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.match(
      rebuilt.note ?? '',
      /layout of an older faultline \(layout 2, this one writes 3\) and was rebuilt once/,
    );
    assert.deepEqual([rebuilt.changed, rebuilt.chunks], [first.changed, first.chunks], 'every file indexed again');
    assert.ok([...fake.collections.get(name)!.points.values()].every((point) => point.payload.layout === LAYOUT));
    const again = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.deepEqual([again.note, again.changed], [undefined, 0], 'once');

    // An empty collection of that version lacks the prefix index: rebuilt too.
    const collection = fake.collections.get(name)!;
    collection.points.clear();
    collection.payloadIndexes.delete('names_hex');
    const emptyRebuilt = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
    assert.match(emptyRebuilt.note ?? '', /no prefix index on names/);
    assert.ok(fake.collections.get(name)!.payloadIndexes.has('names_hex'));
    assert.equal(fake.requestsTo('DELETE', name).length, 2);
    const [hit] = await searchIndex(tree.settings, { query: 'parse_config_file', sourceDir: tree.dir, limit: 3 });
    assert.equal(hit!.symbol, 'parse_config_file');
  },
);
