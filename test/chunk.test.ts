/**
 * src/code/chunk.ts: one chunk per definition, class skeletons, statement-boundary splits,
 * leftover top-level code, line windows without a grammar, stable hashes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chunkSource, MAX_CHUNK_CHARS, WINDOW_LINES, WINDOW_OVERLAP } from '../src/code/chunk.js';
import { languageByName } from '../src/code/index.js';
import { fixturePath } from './helpers/repo.js';

const python = languageByName('python')!;
const typescript = languageByName('typescript')!;

test('a Python file: functions, methods, a class skeleton and the module lines', async () => {
  const source = readFileSync(fixturePath('index', 'tree', 'app', 'config.py'), 'utf8');
  const chunks = await chunkSource(source, { path: 'app/config.py', language: python });
  assert.deepEqual(
    chunks.map((chunk) => `${chunk.kind} ${chunk.symbol} ${chunk.startLine}-${chunk.endLine}`),
    [
      'function parse_config_file 8-13',
      'function validate_settings 16-20',
      'class RetryPolicy 23-33',
      'method RetryPolicy.__init__ 28-30',
      'method RetryPolicy.next_delay 32-33',
      'toplevel <module> 1-5',
    ],
  );
  const skeleton = chunks.find((chunk) => chunk.symbol === 'RetryPolicy')!;
  assert.equal(
    skeleton.text,
    [
      'class RetryPolicy:',
      '    """How often and how long to retry a failed upstream call."""',
      '',
      '    max_attempts = 3',
      '',
      '    def __init__(self, attempts, backoff_seconds):',
      '        ...',
      '',
      '    def next_delay(self, attempt):',
      '        ...',
    ].join('\n'),
  );
  assert.equal(
    chunks.at(-1)!.text,
    '"""Loading and validating the service configuration."""\nimport json\nimport os\n\nDEFAULT_PORT = 8080',
  );
  for (const chunk of chunks) {
    assert.equal(chunk.path, 'app/config.py');
    assert.equal(chunk.language, 'python');
    assert.equal(chunk.hash, createHash('sha256').update(chunk.text).digest('hex'));
  }
});

test('a brace-language class collapses member bodies to { … }', async () => {
  const source = readFileSync(fixturePath('index', 'tree', 'web', 'rateLimiter.ts'), 'utf8');
  const chunks = await chunkSource(source, { path: 'web/rateLimiter.ts', language: typescript });
  const skeleton = chunks.find((chunk) => chunk.symbol === 'TokenBucketRateLimiter')!;
  assert.match(skeleton.text, /constructor\(private readonly options: RateLimiterOptions\) \{ … \}/);
  assert.match(skeleton.text, /tryAcquireToken\(now: number\): boolean \{ … \}/);
  assert.doesNotMatch(skeleton.text, /this\.tokens -= 1/);
});

test('an oversized function is split between the statements of its body', async () => {
  const statements = Array.from(
    { length: 60 },
    (_, i) => `    total_${i} = compute_something(${i}, "padding text to make this line longer")`,
  );
  const source = `def huge_function(x):\n${statements.join('\n')}\n    return x\n`;
  const chunks = (await chunkSource(source, { path: 'h.py', language: python })).filter(
    (chunk) => chunk.kind === 'function',
  );
  assert.ok(chunks.length >= 3, `split into ${chunks.length} parts`);
  chunks.forEach((chunk, index) => {
    assert.equal(chunk.symbol, `huge_function#part${index + 1}`);
    assert.ok(chunk.text.length <= MAX_CHUNK_CHARS, `part ${index + 1} is ${chunk.text.length} chars`);
    // Every part starts at a statement (or the signature) and they tile the function exactly.
    assert.match(chunk.text, index === 0 ? /^def huge_function\(x\):\n/ : /^ {4}(total_\d+ =|return x)/);
    if (index > 0) assert.equal(chunk.startLine, chunks[index - 1]!.endLine + 1);
  });
  assert.equal(chunks[0]!.startLine, 1);
  assert.equal(chunks.at(-1)!.endLine, 62);
  assert.equal(chunks.map((chunk) => chunk.text).join('\n'), source.trimEnd());
});

test('files without a grammar are cut into overlapping line windows', async () => {
  const source = Array.from({ length: 100 }, (_, i) => `val line${i + 1} = ${i + 1}`).join('\n');
  const chunks = await chunkSource(source, { path: 'a.kt', language: 'kotlin' });
  const step = WINDOW_LINES - WINDOW_OVERLAP;
  assert.deepEqual(
    chunks.map((chunk) => [chunk.startLine, chunk.endLine]),
    [
      [1, WINDOW_LINES],
      [1 + step, WINDOW_LINES + step],
      [1 + 2 * step, WINDOW_LINES + 2 * step],
      [1 + 3 * step, 100],
    ],
  );
  assert.equal(chunks[0]!.symbol, `<lines 1-${WINDOW_LINES}>`);
  assert.equal(chunks[0]!.kind, 'window');
  assert.equal(chunks[0]!.language, 'kotlin');
  assert.equal(chunks[1]!.text.split('\n')[0], `val line${1 + step} = ${1 + step}`);
});

test('empty and comment-only files give no chunks; chunking is deterministic', async () => {
  assert.deepEqual(await chunkSource('', { path: 'e.py', language: python }), []);
  assert.deepEqual(await chunkSource('\n\n', { path: 'e.kt', language: 'kotlin' }), []);
  const source = readFileSync(fixturePath('index', 'tree', 'lib', 'server.go'), 'utf8');
  const go = languageByName('go')!;
  assert.deepEqual(
    await chunkSource(source, { path: 's.go', language: go }),
    await chunkSource(source, { path: 's.go', language: go }),
  );
});

test('every part of a split function and every window is exactly the lines it claims', async () => {
  // Blank lines between statements, and a window that ends on a blank line.
  const statements = Array.from(
    { length: 40 },
    (_, i) => `    total_${i} = compute_something(${i}, "padding text to make this line longer")\n`,
  );
  const source = `def spaced_function(x):\n${statements.join('\n')}    return x\n`;
  const kotlin = Array.from({ length: 60 }, (_, i) => (i % 5 === 4 ? '' : `val line${i + 1} = ${i + 1}`)).join('\n');
  const chunks = [
    ...(await chunkSource(source, { path: 's.py', language: python })),
    ...(await chunkSource(kotlin, { path: 'k.kt', language: 'kotlin' })),
  ];
  const parts = chunks.filter((chunk) => chunk.symbol.includes('#part') || chunk.kind === 'window');
  assert.ok(parts.length >= 4, `${parts.length} parts and windows`);
  for (const chunk of parts) {
    const lines = (chunk.path === 's.py' ? source : kotlin).split('\n').slice(chunk.startLine - 1, chunk.endLine);
    assert.equal(chunk.text, lines.join('\n'), `${chunk.symbol} ${chunk.startLine}-${chunk.endLine}`);
    if (chunk.kind !== 'window') assert.notEqual(lines.at(-1)!.trim(), '', 'a part ends at a line with code');
  }
});

test('top-level code between definitions forms one chunk per run, each exactly the lines it names', async () => {
  const source = [
    'import os',
    'LIMIT = 3',
    '',
    'def first():',
    '    return LIMIT',
    '',
    'REGISTRY = {}',
    '',
    'def second():',
    '    return 2',
    '',
    'if __name__ == "__main__":',
    '    first()',
  ].join('\n');
  const modules = (await chunkSource(source, { path: 'm.py', language: python })).filter(
    (chunk) => chunk.kind === 'toplevel',
  );
  assert.deepEqual(
    modules.map((chunk) => [chunk.symbol, chunk.startLine, chunk.endLine, chunk.text]),
    [
      ['<module>#part1', 1, 2, 'import os\nLIMIT = 3'],
      ['<module>#part2', 7, 7, 'REGISTRY = {}'],
      ['<module>#part3', 12, 13, 'if __name__ == "__main__":\n    first()'],
    ],
  );
});

test('each part of a split class skeleton names the source lines it stands for, not the whole class', async () => {
  // 60 fields and 30 methods: the skeleton (bodies collapsed) is over the budget and is cut.
  const fields = Array.from(
    { length: 60 },
    (_, i) => `  private readonly field_${i}: Map<string, number> = new Map();`,
  );
  const methods = Array.from(
    { length: 30 },
    (_, i) => `  method_${i}(value: number): number {\n    const doubled = value * 2;\n    return doubled + ${i};\n  }`,
  );
  const source =
    `import { x } from './x';\n\nexport class Big ` +
    `{\n${[...fields.slice(0, 30), ...methods, ...fields.slice(30)].join('\n')}\n}\n`;
  const parts = (await chunkSource(source, { path: 'big.ts', language: typescript })).filter((chunk) =>
    chunk.symbol.startsWith('Big#part'),
  );
  assert.ok(parts.length >= 2, `${parts.length} parts`);
  const sourceLines = source.split('\n');
  assert.equal(parts[0]!.startLine, 3, 'the first part starts at the class');
  assert.equal(parts.at(-1)!.endLine, sourceLines.length - 1, 'the last part ends at its closing brace');
  for (const [index, part] of parts.entries()) {
    if (index > 0)
      assert.ok(part.startLine > parts[index - 1]!.endLine, `${part.symbol} starts after the part before it ends`);
    const claimed = sourceLines.slice(part.startLine - 1, part.endLine);
    // Every line of the part's text is one of the lines it claims (a collapsed method shows its first line).
    for (const line of part.text.split('\n')) {
      const shown = line.replace(' { … }', ' {');
      assert.ok(
        claimed.includes(shown),
        `${part.symbol} ${part.startLine}-${part.endLine} shows ${JSON.stringify(line)}`,
      );
    }
  }
});
