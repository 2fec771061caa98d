/**
 * The index tool when the embedding provider fails (the built CLI over stdio, the SDK client, the
 * fake OpenAI-compatible server): the result names what went wrong and what to set, and the
 * server logs it as the expected failure it is — one warning line, no stack trace.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startFakeLlm } from './helpers/fake-llm.js';
import { connectStdio, textOf } from './helpers/mcp.js';

test(
  'an embedding provider that fails is an isError result and a ' + 'one-line warning, not an unexpected failure',
  async (t) => {
    const fake = await startFakeLlm({ embedDim: 8 });
    t.after(() => fake.close());
    const work = mkdtempSync(join(tmpdir(), 'faultline-embed-errors-'));
    const tree = join(work, 'src');
    mkdirSync(tree);
    writeFileSync(join(tree, 'cart.py'), 'def total(items):\n    return sum(items)\n');
    // The default model's dimension is 1536; the server answers with 8.
    const session = await connectStdio(
      ['agent', '--llm-client', 'openai', '--llm-base-url', fake.openaiBaseUrl, 'tool'],
      {
        OPENAI_API_KEY: 'test-key',
        FAULTLINE_DATA_DIR: join(work, 'data'),
      },
    );
    // After hooks run in the order added: the directory goes once the server has closed.
    t.after(async () => {
      await session.close();
      rmSync(work, { recursive: true, force: true, maxRetries: 5 });
    });
    const call = (args: Record<string, unknown>): Promise<CallToolResult> =>
      session.client.callTool({ name: 'fault_index_source_code', arguments: args }) as Promise<CallToolResult>;

    const mismatch = await call({ source_dir: tree });
    assert.equal(mismatch.isError, true);
    assert.match(textOf(mismatch), /dimension 8, expected 1536.*FAULT_AGENT_EMBED_MODEL_DIMENSION/);

    fake.queueEmbed({ rawBody: '<!doctype html><title>Sign in</title>', headers: { 'content-type': 'text/html' } });
    const html = await call({ source_dir: tree });
    assert.equal(html.isError, true);
    assert.match(textOf(html), /not JSON|Sign in/);

    const stderr = session.stderr();
    assert.doesNotMatch(stderr, /failed unexpectedly/);
    assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
    assert.match(stderr, /WARN.*fault_index_source_code failed: .*dimension 8/);
  },
);
