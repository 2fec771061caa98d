/**
 * 1,000 tool calls with random and malformed arguments (seeded, so a failure replays) against the
 * built server over stdio: empty and numeric strings for any argument, structured arguments as
 * objects, as JSON text or as garbage, and `__proto__` / `constructor` / `prototype` keys at the
 * top and inside. The server must answer every call, stay up, refuse every forbidden key naming
 * it, and log no unhandled rejection or uncaught exception. File tools are confined to an empty
 * temporary root so the fuzz never reads or indexes anything real.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnRawServer } from './helpers/raw-stdio.js';
import { seededRandom } from '../src/probe/args.js';
import { LOCAL_PROVIDERS } from './helpers/index-tree.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const CALLS = 1000;
const IN_FLIGHT = 16;

test(`fuzz: ${CALLS} calls with random and malformed arguments (seed ${SEED})`, async () => {
  const root = await mkdtemp(join(tmpdir(), 'faultline-fuzz-'));
  await writeFile(join(root, 'ok.py'), 'def f():\n    return 1\n');
  const server = await spawnRawServer(['mcp', '--root', root, '--max-duration', '2'], {
    FAULTLINE_DATA_DIR: join(root, '.data'),
    ...LOCAL_PROVIDERS,
  });
  try {
    const listed = (await server.request('tools/list')).result as {
      tools: Array<{ name: string; inputSchema: { properties?: Record<string, unknown> } }>;
    };
    const tools = listed.tools;
    const random = seededRandom(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const strings = [
      '',
      ' ',
      'a'.repeat(10_000),
      '../../etc/passwd',
      '/etc/passwd',
      '/',
      '/dev/zero',
      join(root, 'ok.py'),
      join(root, 'missing.rs'),
      `file://${join(root, 'ok.py')}`,
      'file://',
      'http://',
      'http://127.0.0.1:1/',
      'ftp://example.com',
      '\u0000\u0001',
      '💥',
      'f',
      'python',
      'both',
      'sideways',
      '-1s',
      '1s',
      '0ms',
      '10 minutes',
      '999999h',
      'kbps',
      '{"json": true}',
      '0=127.0.0.1:1',
      '99999=nowhere',
      '3',
      ' 7 ',
      '-1',
      '1e3',
      '0x10',
      'Infinity',
      'NaN',
      '{"type": "error", "statusCode": 500}',
      '[{"type": "error"}]',
      'seed: 3\nfaults: []',
    ];
    const values: Array<() => unknown> = [
      () => pick(strings),
      () => Math.floor(random() * 2000) - 1000,
      () => random() * 1e12,
      () => -0.5,
      () => 0,
      () => Number.MAX_SAFE_INTEGER,
      () => random() < 0.5,
      () => null,
      () => [],
      () => [pick(strings), 7],
      () => ({}),
      () => ({ nested: { deeper: [1, 2, 3] } }),
    ];
    type Property = { type?: string; properties?: Record<string, Property>; items?: Property };
    const FORBIDDEN = ['__proto__', 'constructor', 'prototype'];
    /** An own forbidden key, as parsed JSON has it (an object literal would set the prototype). */
    const withForbidden = (object: Record<string, unknown>): Record<string, unknown> => {
      const key = pick(FORBIDDEN);
      return { ...object, ...(JSON.parse(`{"${key}": {"polluted": true}}`) as Record<string, unknown>) };
    };
    /** A structured argument: its declared properties filled at random, sometimes with a forbidden key. */
    const objectFor = (schema: Property): Record<string, unknown> => {
      const object: Record<string, unknown> = {};
      for (const name of Object.keys(schema.properties ?? {})) if (random() < 0.7) object[name] = pick(values)();
      return random() < 0.1 ? withForbidden(object) : object;
    };
    const valueFor = (schema: Property | undefined): unknown => {
      const structured =
        schema?.type === 'object'
          ? schema
          : schema?.type === 'array' && schema.items?.type === 'object'
            ? schema.items
            : undefined;
      if (!structured || random() < 0.3) return pick(values)();
      const object = objectFor(structured);
      const value = schema!.type === 'array' ? [object, ...(random() < 0.3 ? [objectFor(structured)] : [])] : object;
      // The same value as JSON text, as older clients send it.
      return random() < 0.4 ? JSON.stringify(value) : value;
    };
    const argumentsFor = (tool: (typeof tools)[number]): { args: unknown; forbidden?: string } => {
      const roll = random();
      if (roll < 0.05) return { args: pick([null, 'text', 42, [1, 2]]) };
      if (roll < 0.1) return { args: {} };
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, Property>;
      let args: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(properties)) if (random() < 0.8) args[name] = valueFor(schema);
      if (random() < 0.2) args[`unexpected_${Math.floor(random() * 10)}`] = pick(values)();
      if (random() < 0.05) {
        args = withForbidden(args);
        return { args, forbidden: Object.keys(args).find((key) => FORBIDDEN.includes(key))! };
      }
      return { args };
    };

    let answered = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < CALLS) {
        next += 1;
        const unknown = random() < 0.05;
        const tool = pick(tools);
        const generated = unknown ? { args: {} } : argumentsFor(tool);
        const params = unknown
          ? { name: `fault_${pick(strings)}`, arguments: {} }
          : { name: tool.name, arguments: generated.args };
        const response = await server.request('tools/call', params, 60_000);
        assert.ok(
          response.result !== undefined || response.error !== undefined,
          JSON.stringify(response).slice(0, 300),
        );
        if (generated.forbidden !== undefined) {
          const result = response.result as { isError?: boolean; content?: Array<{ text?: string }> } | undefined;
          assert.equal(result?.isError, true, `${tool.name} accepted ${generated.forbidden}`);
          assert.match(
            result?.content?.[0]?.text ?? '',
            new RegExp(`^${generated.forbidden}: not accepted as an argument name`),
          );
        }
        answered += 1;
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    assert.equal(answered, CALLS);

    const after = await server.request('tools/list');
    assert.ok(after.result, 'still answering after the fuzz');
    assert.ok(server.alive(), 'still running');
    assert.doesNotMatch(server.stderr(), /unhandled rejection|uncaught exception/i, server.stderr().slice(-2000));
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
});

/**
 * Every tool with hostile arguments derived from its published schema (traversal,
 * FIFOs, /proc, huge and nested values, odd URLs and mappings). No crash, no hang past the bound,
 * nothing but JSON-RPC on stdout, and every argument error names an argument it was given.
 */
test(`fuzz: schema-derived hostile arguments for every tool (seed ${SEED})`, async () => {
  const { execFileSync } = await import('node:child_process');
  const root = await mkdtemp(join(tmpdir(), 'faultline-fuzz-hostile-'));
  await writeFile(join(root, 'ok.py'), 'def f():\n    return 1\n');
  execFileSync('mkfifo', [join(root, 'pipe.py')]);
  const server = await spawnRawServer(['mcp', '--root', root, '--max-duration', '1'], {
    FAULTLINE_DATA_DIR: join(root, '.data'),
    ...LOCAL_PROVIDERS,
  });
  try {
    type Schema = { type?: string | string[]; items?: Schema; enum?: unknown[] };
    const listed = (await server.request('tools/list')).result as {
      tools: Array<{ name: string; inputSchema: { properties?: Record<string, Schema> } }>;
    };
    const random = seededRandom(SEED ^ 0x5eed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const hostileStrings = [
      join(root, '..', '..', 'etc', 'passwd'),
      join(root, 'pipe.py'),
      '/proc/self/mem',
      '/proc/1/environ',
      '/etc/shadow',
      'x'.repeat(200_000),
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://0x7f.1:0/',
      'gopher://127.0.0.1/',
      '0.0.0.0:41500=169.254.169.254:80',
      '[::]:0=127.0.0.1:80',
      '81=127.0.0.1:80',
      '\u202e\u0000',
    ];
    const hostileFor = (schema: Schema | undefined): unknown => {
      const type = Array.isArray(schema?.type) ? schema!.type[0] : schema?.type;
      switch (type) {
        case 'string':
          return pick(hostileStrings);
        case 'number':
        case 'integer':
          return pick([1e308, -1, 0.5, 2 ** 53 + 1, 1e-300]);
        case 'boolean':
          return pick(['true', 1, null]);
        case 'array':
          return pick([
            Array.from({ length: 3000 }, () => pick(hostileStrings).slice(0, 64)),
            [pick(hostileStrings)],
            [[[[['deep']]]]],
          ]);
        default:
          return { nested: Array.from({ length: 50 }, () => ({ a: [1, { b: 'c' }] })) };
      }
    };
    const calls: Array<{ tool: string; args: Record<string, unknown>; names: string[] }> = [];
    for (const tool of listed.tools) {
      const properties = tool.inputSchema.properties ?? {};
      for (let round = 0; round < 4; round++) {
        const args: Record<string, unknown> = {};
        for (const [name, schema] of Object.entries(properties)) if (random() < 0.7) args[name] = hostileFor(schema);
        calls.push({ tool: tool.name, args, names: Object.keys(properties) });
      }
    }
    let next = 0;
    const failures: string[] = [];
    const worker = async (): Promise<void> => {
      while (next < calls.length) {
        const { tool, args, names } = calls[next++]!;
        // Bound: the slowest legitimate answer here is a 1 s scenario plus its set-up.
        const response = (await server.request('tools/call', { name: tool, arguments: args }, 30_000)) as {
          result?: { isError?: boolean; content?: Array<{ text?: string }> };
          error?: { message: string };
        };
        const text = response.error?.message ?? response.result?.content?.[0]?.text ?? '';
        if (!response.result?.isError && !response.error) continue;
        // A given argument, or a required one that is missing.
        const named = names.some((name) => text.includes(name));
        // Errors that are not about an argument: no LLM configured, no index built yet.
        const unrelated = /LLM|provider|API key|index/i.test(text);
        if (!named && !unrelated) failures.push(`${tool} ${JSON.stringify(Object.keys(args))}: ${text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    assert.deepEqual(failures, [], 'every error names an argument it was given');
    for (const line of server.stdoutLines()) {
      if (line.trim() === '') continue;
      const message = JSON.parse(line) as { jsonrpc?: string };
      assert.equal(message.jsonrpc, '2.0', `stdout carries only JSON-RPC: ${line.slice(0, 200)}`);
    }
    assert.ok((await server.request('tools/list')).result, 'still answering');
    assert.ok(server.alive(), 'still running');
    assert.doesNotMatch(server.stderr(), /unhandled rejection|uncaught exception/i, server.stderr().slice(-2000));
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
});
