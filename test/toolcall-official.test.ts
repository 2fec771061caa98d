/**
 * The stdio proxy (`faultline toolcall proxy stdio`, a real child process) in front of the
 * official MCP servers (server-memory, server-filesystem) and of hostile peers, driven by the
 * official SDK client or by raw JSON-RPC lines: what the client receives, and the journal.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cliPath, repoRoot } from './helpers/repo.js';

const dir = mkdtempSync(join(tmpdir(), 'toolcall-official-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const bin = (name: string): string => join(repoRoot, 'node_modules', '.bin', name);
let count = 0;

interface Proxied {
  client: Client;
  journal: string;
  stderr(): string;
  close(): Promise<void>;
}

async function proxied(plan: unknown, server: string[], env: Record<string, string> = {}): Promise<Proxied> {
  const n = ++count;
  const planFile = join(dir, `plan-${n}.json`);
  writeFileSync(planFile, JSON.stringify(plan));
  const journal = join(dir, `journal-${n}.jsonl`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, 'toolcall', 'proxy', 'stdio', '--plan', planFile, '--journal', journal, '--', ...server],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'toolcall-official-test', version: '0' });
  await client.connect(transport);
  await client.listTools();
  return { client, journal, stderr: () => stderr, close: () => client.close() };
}

const journalOf = (file: string): Array<Record<string, unknown>> =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const textOf = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

test(
  'server-memory: re-serialising an empty graph is no mutation; a ' +
    'real graph is cut alike in structuredContent and text',
  async () => {
    const p = await proxied(
      { faults: [{ type: 'partial_result', tools: ['read_graph'] }] },
      [bin('mcp-server-memory')],
      {
        MEMORY_FILE_PATH: join(dir, 'memory.jsonl'),
      },
    );
    try {
      const empty = await p.client.callTool({ name: 'read_graph', arguments: {} });
      assert.deepEqual(empty.structuredContent, { entities: [], relations: [] });
      assert.equal(
        textOf(empty),
        '{\n  "entities": [],\n  "relations": []\n}',
        "the server's own text, not a compact copy",
      );
      await p.client.callTool({
        name: 'create_entities',
        arguments: {
          entities: ['a', 'b', 'c', 'd'].map((name) => ({
            name,
            entityType: 'service',
            observations: [`${name} serves checkout`, `${name} runs on node`],
          })),
        },
      });
      const graph = await p.client.callTool({ name: 'read_graph', arguments: {} });
      const structured = graph.structuredContent as {
        entities: Array<{ name: string; observations: string[] }>;
        relations: unknown[];
      };
      assert.deepEqual(
        structured.entities.map((e) => [e.name, e.observations.length]),
        [
          ['a', 1],
          ['b', 1],
        ],
        "half the entities, half of each one's observations",
      );
      assert.deepEqual(JSON.parse(textOf(graph)), structured, 'the text says what structuredContent says');
      assert.match(textOf(graph), /^\{\n {2}"entities": \[\n/, "in the server's layout");
    } finally {
      await p.close();
    }
    assert.deepEqual(
      journalOf(p.journal).map((r) => [r.tool, r.fault, r.correct]),
      [
        ['read_graph', 'none', true],
        ['create_entities', 'none', true],
        ['read_graph', 'partial_result', false],
      ],
    );
    assert.match(p.stderr(), /Injected: partial_result 1\n/);
  },
);

test(
  'server-filesystem: partial_result cuts the file in ' + 'structuredContent and in the text, at a line break',
  async () => {
    const root = join(dir, 'files');
    mkdirSync(root, { recursive: true });
    const file =
      Array.from({ length: 8 }, (_, i) => `${i + 1}. a line of the runbook that the agent reads`).join('\n') + '\n';
    writeFileSync(join(root, 'runbook.md'), file);
    const p = await proxied({ faults: [{ type: 'partial_result', tools: ['read_text_file'] }] }, [
      bin('mcp-server-filesystem'),
      root,
    ]);
    try {
      const result = await p.client.callTool({ name: 'read_text_file', arguments: { path: join(root, 'runbook.md') } });
      const kept = file.split('\n').slice(0, 4).join('\n') + '\n';
      assert.deepEqual(result.structuredContent, { content: kept });
      assert.equal(textOf(result), kept);
    } finally {
      await p.close();
    }
    assert.deepEqual(
      journalOf(p.journal).map((r) => [r.tool, r.fault, r.correct]),
      [['read_text_file', 'partial_result', false]],
    );
  },
);

/** A server that answers every tools/call with what `arguments.kind` asks for: a deep result, a huge line, or a small
 * one. */
const HOSTILE_SERVER = `
const deep = (n) => '['.repeat(n) + ']'.repeat(n);
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const kind = m.params && m.params.arguments && m.params.arguments.kind;
  let text;
  if (kind === 'deep') text = '{"jsonrpc":"2.0","id":' + JSON.stringify(m.id) + ',"result":{"content":[{"type":"text","text":"' + 'x'.repeat(40) + '"}],"structuredContent":{"items":[1,2,3,4],"v":' + deep(6000) + '}}}';
  else if (kind === 'big') text = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'z'.repeat(3 * 1024 * 1024) }] } });
  else text = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'small' }] } });
  process.stdout.write(text + '\\n');
});
`;

/** Raw JSON-RPC lines through the proxy in front of HOSTILE_SERVER; each call's answer line, then the proxy's exit. */
async function rawCalls(
  plan: unknown,
  kinds: string[],
  extra: string[] = [],
): Promise<{ answers: string[]; code: number | null; stderr: string }> {
  const planFile = join(dir, `hostile-${++count}.json`);
  writeFileSync(planFile, JSON.stringify(plan));
  const child = spawn(
    process.execPath,
    [cliPath, 'toolcall', 'proxy', 'stdio', '--plan', planFile, ...extra, '--', process.execPath, '-e', HOSTILE_SERVER],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const answers: string[] = [];
  let buffer = '';
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      answers.push(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      waiters.shift()?.();
    }
  });
  for (const [i, kind] of kinds.entries()) {
    const answered = new Promise<void>((resolve) => waiters.push(resolve));
    child.stdin.write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'any', arguments: { kind } },
      }) + '\n',
    );
    await answered;
  }
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { answers, code, stderr };
}

test(
  'a result nested 6,000 levels gets an answer, with or without a ' + 'plan and --strict; the proxy never crashes',
  async () => {
    const plans: Array<{ faults?: Array<{ type: string }> }> = [
      {},
      { faults: [{ type: 'schema_drift' }] },
      { faults: [{ type: 'partial_result' }] },
    ];
    for (const plan of plans) {
      const safe = await rawCalls(plan, ['deep', 'small']);
      assert.equal(safe.code, 0, safe.stderr);
      assert.doesNotMatch(safe.stderr, /RangeError|Maximum call stack/);
      assert.equal(safe.answers.length, 2);
      assert.ok(
        safe.answers[0]!.startsWith('{"jsonrpc":"2.0","id":1,"result":') && safe.answers[0]!.length > 12_000,
        "the server's answer, passed on as it came",
      );
      const next = JSON.parse(safe.answers[1]!) as { id: number; result: { content: Array<{ text: string }> } };
      assert.equal(next.id, 2, 'the next call is relayed as usual');
      assert.equal(next.result.content[0]!.text, plan.faults?.[0]?.type === 'partial_result' ? 'sm' : 'small');
      assert.match(safe.stderr, /proxy internal errors \/ evicted pending requests \| 1 \/ 0/);

      const strict = await rawCalls(plan, ['deep', 'small'], ['--strict']);
      assert.equal(strict.code, 0, strict.stderr);
      const error = JSON.parse(strict.answers[0]!) as { id: number; error: { code: number; message: string } };
      assert.equal(error.id, 1);
      assert.equal(error.error.code, -32603);
      assert.match(error.error.message, /could not be read: JSON nested deeper than 512 levels/);
      assert.equal(JSON.parse(strict.answers[1]!).id, 2);
    }
  },
);

test(
  'a line over --max-message-bytes is never held: passed through ' +
    'whole (fail-safe) or answered with an error (--strict)',
  async () => {
    const safe = await rawCalls(
      { faults: [{ type: 'partial_result' }] },
      ['big', 'small', 'big'],
      ['--max-message-bytes', String(1024 * 1024)],
    );
    assert.equal(safe.code, 0, safe.stderr);
    assert.equal(safe.answers.length, 3);
    const big = JSON.parse(safe.answers[0]!) as { id: number; result: { content: Array<{ text: string }> } };
    assert.equal(big.id, 1);
    assert.equal(
      big.result.content[0]!.text.length,
      3 * 1024 * 1024,
      'untouched: the plan cannot act on what it does not read',
    );
    assert.equal(JSON.parse(safe.answers[1]!).id, 2, 'framing intact after it');
    assert.equal(JSON.parse(safe.answers[2]!).id, 3);
    assert.match(safe.stderr, /proxy internal errors \/ evicted pending requests \| 2 \/ 0/);

    const strict = await rawCalls({}, ['big', 'small'], ['--max-message-bytes', String(1024 * 1024), '--strict']);
    assert.equal(strict.code, 0, strict.stderr);
    const error = JSON.parse(strict.answers[0]!) as { id: number; error: { message: string } };
    assert.equal(error.id, 1);
    assert.match(error.error.message, /a message of 3145\d\d\d bytes, above the 1048576 accepted/);
    assert.equal(JSON.parse(strict.answers[1]!).id, 2);
  },
);
