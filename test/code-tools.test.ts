/**
 * fault_list_function_names and fault_extract_code_block through a real MCP SDK client: the whole
 * fixture matrix and every error case, once against the tools registered on an in-process server
 * (linked in memory) and once against the built CLI over stdio (`node dist/src/cli.js mcp`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { registerCodeTools } from '../src/tools/code.js';
import { extractFunction, listFunctions, requireLanguageForPath } from '../src/code/index.js';
import { extractionReport, functionListReport } from '../src/code/report.js';
import { connectStdio, connectTools, textOf } from './helpers/mcp.js';
import { fixturePath } from './helpers/repo.js';

// This file lists code through the servers it spawns: with their listing thread, as users run them
// (test/helpers/isolate.ts turns it off for the rest of the suite).
process.env.FAULTLINE_LISTING_THREAD = 'on';

type Call = (name: string, args: Record<string, unknown>) => Promise<CallToolResult>;

const fixtureDir = fixturePath('code');
const fixtures = readdirSync(fixtureDir).sort();

async function codeToolsInMemory(): Promise<{ call: Call; close(): Promise<void> }> {
  const { client, close } = await connectTools(registerCodeTools);
  return { call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>, close };
}

/** Every fixture listed, and every function of it extracted, exactly as the module answers. */
async function assertMatrix(call: Call): Promise<void> {
  for (const name of fixtures) {
    const file = join(fixtureDir, name);
    const text = readFileSync(file, 'utf8');
    const language = requireLanguageForPath(file, text);
    const expected = functionListReport(await listFunctions(text, language));
    const listed = await call('fault_list_function_names', { file });
    assert.equal(listed.isError, undefined, `${name}: ${textOf(listed)}`);
    assert.deepEqual(JSON.parse(textOf(listed)), expected.names, name);
    assert.deepEqual(listed.structuredContent, JSON.parse(JSON.stringify(expected)), name);
    for (const fn of expected.functions) {
      // The qualified name, plus :LINE where overloads share it, names exactly one definition.
      const shared = expected.functions.filter((other) => other.qualified_name === fn.qualified_name).length > 1;
      const func = shared ? `${fn.qualified_name}:${fn.start_line}` : fn.qualified_name;
      const extracted = await call('fault_extract_code_block', { file, func });
      assert.equal(extracted.isError, undefined, `${name} ${func}: ${textOf(extracted)}`);
      const report = extractionReport(await extractFunction(text, language, func));
      assert.deepEqual(JSON.parse(textOf(extracted)), { full: report.full, body: report.body });
      assert.deepEqual(extracted.structuredContent, JSON.parse(JSON.stringify(report)));
      assert.equal(report.start_line, fn.start_line);
    }
  }
}

/** Spot checks with literal values, so the matrix is not only the module compared with itself. */
async function assertLiterals(call: Call): Promise<void> {
  const go = await call('fault_list_function_names', { file: fixturePath('code', 'sample.go') });
  assert.equal(textOf(go), '["Plain","Start","Name","Map","Push","Run","Größe","helper"]');
  const start = (go.structuredContent as { functions: unknown[] }).functions[1];
  assert.deepEqual(start, {
    name: 'Start',
    qualified_name: 'Server.Start',
    kind: 'method',
    start_line: 14,
    end_line: 17,
  });
  const rust = await call('fault_extract_code_block', {
    file: `file://${fixturePath('code', 'sample.rs')}`,
    func: 'plain',
  });
  assert.deepEqual(JSON.parse(textOf(rust)), {
    full: '/// Adds two numbers.\n#[inline]\npub fn plain(a: i32, b: i32) -> i32 {\n    a + b\n}',
    body: '{\n    a + b\n}',
  });
}

/** A `.h` header is read as C++ when its text is C++ (the tool passes the text, not the extension alone). */
async function assertHeaders(call: Call): Promise<void> {
  const cpp = await call('fault_list_function_names', { file: fixturePath('code', 'widget.h') });
  const listed = cpp.structuredContent as { language: string; functions: { qualified_name: string }[] };
  assert.equal(listed.language, 'cpp');
  assert.deepEqual(
    listed.functions.slice(0, 2).map((fn) => fn.qualified_name),
    ['ui::Rect::area', 'ui::Widget::Widget'],
  );
  const method = await call('fault_extract_code_block', {
    file: fixturePath('code', 'widget.h'),
    func: 'Widget::invalidate',
  });
  assert.deepEqual(JSON.parse(textOf(method)), {
    full: '  void invalidate() { dirty_ = true; }',
    body: '{ dirty_ = true; }',
  });
  assert.equal((method.structuredContent as { language: string }).language, 'cpp');
  const c = await call('fault_list_function_names', { file: fixturePath('code', 'ring_buffer.h') });
  assert.equal(textOf(c), '["ring_used","ring_is_empty"]');
  assert.equal((c.structuredContent as { language: string }).language, 'c');
}

async function assertErrors(call: Call): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'faultline-code-tools-'));
  try {
    const failure = async (name: string, args: Record<string, unknown>, pattern: RegExp): Promise<string> => {
      const result = await call(name, args);
      assert.equal(result.isError, true, `${JSON.stringify(args)} should fail`);
      assert.equal(result.structuredContent, undefined);
      assert.match(textOf(result), pattern);
      return textOf(result);
    };
    const list = 'fault_list_function_names';
    await failure(list, { file: 'relative/sample.py' }, /file: .*absolute/i);
    await failure(list, { file: join(scratch, 'missing.py') }, /file: .*missing\.py/);
    await failure(list, { file: scratch }, /file: .*director/i);
    const binary = join(scratch, 'blob.py');
    writeFileSync(binary, Buffer.from([0x64, 0x65, 0x66, 0x00, 0x01]));
    await failure(list, { file: binary }, /binary/);
    const huge = join(scratch, 'huge.py');
    writeFileSync(huge, Buffer.alloc(5 * 1024 * 1024 + 1, 0x20));
    await failure(list, { file: huge }, /over 5(\.0)? MB|5 MiB|5\.0 MB/);
    const text = join(scratch, 'notes.txt');
    writeFileSync(text, 'def f(): pass\n');
    await failure(
      list,
      { file: text },
      /^file: .*notes\.txt (has no supported extension; supported: .*\.py|is not a source file of a known language)/,
    );
    await failure(
      'fault_extract_code_block',
      { file: fixturePath('code', 'Sample.java'), func: 'size' },
      /'size' matches 2 definitions: Sample\.size \(lines 22-24\), Sample\.size \(lines 26-28\)/,
    );
    // Two overloads on one line: ':LINE' cannot separate them, so the error must not advise adding one.
    const oneLine = join(scratch, 'OneLine.cs');
    writeFileSync(oneLine, 'class P { public int M() => 1; public int M(int x) { return x; } }\n');
    const sameLine = await failure(
      'fault_extract_code_block',
      { file: oneLine, func: 'M:1' },
      /'M:1' matches 2 definitions: P\.M \(lines 1-1\), P\.M \(lines 1-1\)\. They all start at line 1/,
    );
    assert.doesNotMatch(sameLine, /M:1:LINE/);
    await failure(
      'fault_extract_code_block',
      { file: fixturePath('code', 'sample.py'), func: 'nope' },
      /no function named 'nope'; the file defines: plain, decorated, Greeter\.__init__/,
    );

    const broken = await call(list, { file: fixturePath('code', 'broken.py') });
    assert.equal(broken.isError, undefined);
    assert.equal(textOf(broken), '["good","bad","also_good"]');
    const structured = broken.structuredContent as { syntax_errors: unknown; note: string };
    assert.deepEqual(structured.syntax_errors, { count: 1, first_lines: [5] });
    assert.match(structured.note, /1 syntax error\(s\), first at line\(s\) 5/);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

test('code tools through an in-memory MCP client', async () => {
  const session = await codeToolsInMemory();
  try {
    await assertLiterals(session.call);
    await assertHeaders(session.call);
    await assertErrors(session.call);
    await assertMatrix(session.call);
  } finally {
    await session.close();
  }
});

test('code tools through the built CLI over stdio', async () => {
  const session = await connectStdio();
  try {
    const call: Call = (name, args) => session.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
    await assertLiterals(call);
    await assertHeaders(call);
    await assertErrors(call);
    await assertMatrix(call);
    assert.ok(
      session.stdoutLines().every((line) => line.startsWith('{')),
      'stdout carries only JSON-RPC',
    );
  } finally {
    await session.close();
  }
});
