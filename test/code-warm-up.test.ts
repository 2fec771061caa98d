/**
 * warmUpCode: it loads the grammars a first call needs and lists a sample in steps, each put off
 * while the host's beforeStep says so; it keeps no trees, leaves answers unchanged, and never
 * fails. `faultline mcp` runs it on its listing thread from the start. What the warm-up buys a first
 * call in time is measured by bench/checks/code.ts (code.warm-up-first-call, code.mcp-start-warm-up).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keptTreeCount } from '../src/code/grammar.js';
import { isFunctionKind, listDefinitions, listFunctions, supportedLanguages } from '../src/code/index.js';
import { warmUpCode, warmUpSample } from '../src/code/warm-up.js';
import { generatedTypeScript } from './helpers/code-fixtures.js';
import { connectStdio } from './helpers/mcp.js';

// The listing thread is what this file tests (test/helpers/isolate.ts turns it off for the rest of the suite).
process.env.FAULTLINE_LISTING_THREAD = 'on';

test('warming up keeps no trees, skips unknown languages, never rejects, and changes no answer', async () => {
  const source = generatedTypeScript();
  const before = keptTreeCount();
  await warmUpCode(['typescript', 'python', 'go', 'no-such-language', 'c++']);
  await warmUpCode([]);
  assert.equal(keptTreeCount(), before);
  const listed = await listFunctions(source, 'typescript');
  assert.equal(
    listed.definitions.filter((definition) => definition.name === 'run').length,
    listed.definitions.filter((definition) => definition.name.startsWith('func_')).length,
  );
  assert.equal(listed.syntaxErrors.count, 0);
});

test('every language has a warm-up sample that parses cleanly into functions and types', async () => {
  for (const info of supportedLanguages()) {
    const sample = warmUpSample(info);
    assert.ok(sample !== undefined && sample.split('\n').length >= 100, info.name);
    const listed = await listDefinitions(sample, info);
    assert.equal(listed.syntaxErrors.count, 0, `${info.name}: ${JSON.stringify(listed.syntaxErrors)}`);
    assert.ok(
      listed.definitions.some((definition) => isFunctionKind(definition.kind)),
      `${info.name}: functions`,
    );
    // Shell and Lua have functions only: nothing their queries call a type.
    if (info.name !== 'shell' && info.name !== 'lua')
      assert.ok(
        listed.definitions.some((definition) => !isFunctionKind(definition.kind)),
        `${info.name}: types`,
      );
  }
});

test(
  'the warm-up is one grammar load and five sample listings per ' + 'language, each step awaiting beforeStep first',
  async () => {
    const steps: string[] = [];
    await warmUpCode(['typescript', 'no-such-language', 'python'], { beforeStep: async () => void steps.push('step') });
    assert.equal(
      steps.length,
      2 * 6,
      'typescript and python: a grammar load and five listings each; an unknown language none',
    );
    // A beforeStep that has not settled holds the warm-up at that step.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waits = 0;
    let done = false;
    const warming = warmUpCode(['go'], { beforeStep: () => ((waits += 1), gate) }).then(() => (done = true));
    for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual({ waits, done }, { waits: 1, done: false }, 'held at its first step');
    release();
    await warming;
    assert.equal(waits, 6);
  },
);

test('faultline mcp warms the code tools up on its listing thread from the start, with no call made', async () => {
  const session = await connectStdio(['--log-level', 'debug', 'mcp']);
  try {
    for (let i = 0; i < 600 && !/code warm-up: done/.test(session.stderr()); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.match(session.stderr(), /code warm-up: done/);
  } finally {
    await session.close();
  }
});
