/**
 * The diffs the review tools return, applied by the real tools a user has: `git apply` on the
 * text the diff names, written to disk exactly as it was sent (CRLF line ends, no final newline,
 * tabs, non-ASCII text). The server is the built CLI over stdio (`agent … tool`, fault's
 * spelling), driven by the MCP SDK client, its model the fake OpenAI-compatible server.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { connectStdio, textOf, type StdioSession } from './helpers/mcp.js';

// This file lists code through the servers it spawns: with their listing thread, as users run them
// (test/helpers/isolate.ts turns it off for the rest of the suite).
process.env.FAULTLINE_LISTING_THREAD = 'on';

const FUNCTION =
  'def total(items):\n    result = 0\n    for item in items:\n        result += item.price\n    return result\n';
const IMPROVED = 'def total(items):\n    return sum(item.price for item in items)\n';
const CODE_REPLY = `\`\`\`python\n${IMPROVED}\`\`\``;
const DIFF_REPLY =
  '```diff\n@@ -1,5 +1,2 @@\n def total(items):\n-    result = 0\n- ' +
  '   for item in items:\n-        result += item.price\n-    ' +
  'return result\n+    return sum(item.price for item in ' +
  'items)\n```';

/** Applies `diff` with `git apply` in `dir` (outside any repository: as `patch -p1` would). */
function gitApply(dir: string, diff: string): void {
  writeFileSync(join(dir, 'change.diff'), diff);
  execFileSync('git', ['apply', '--verbose', 'change.diff'], {
    cwd: dir,
    stdio: 'pipe',
    env: { ...process.env, GIT_CEILING_DIRECTORIES: dir },
  });
}

describe('review diffs apply with git apply to the text they name', () => {
  let fake: FakeLlm;
  let session: StdioSession;
  let work: string;
  before(async () => {
    fake = await startFakeLlm();
    work = mkdtempSync(join(tmpdir(), 'faultline-diffs-'));
    session = await connectStdio(['agent', '--llm-client', 'openai', '--llm-base-url', fake.openaiBaseUrl, 'tool'], {
      OPENAI_API_KEY: 'test-key',
      FAULTLINE_DATA_DIR: join(work, 'data'),
    });
  });
  after(async () => {
    await session.close();
    await fake.close();
    rmSync(work, { recursive: true, force: true });
  });

  const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
    session.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  /** The suggested diff for `snippet`, applied to a file named `snippet` holding exactly it; returns the result. */
  async function suggestAndApply(label: string, snippet: string, reply: string): Promise<string> {
    fake.queueChat(reply);
    const result = await call('fault_suggest_better_function_performance', {
      snippet,
      lang: 'python',
      score: 0.4,
      target_score: 0.9,
    });
    assert.equal(result.isError, undefined, textOf(result));
    const { diff, applies } = result.structuredContent as { diff: string; applies: boolean };
    assert.equal(applies, true, label);
    assert.equal(fake.pendingChat(), 0);
    const dir = join(work, label.replace(/\W+/g, '-'));
    mkdirSync(dir);
    writeFileSync(join(dir, 'snippet'), snippet);
    gitApply(dir, diff);
    return readFileSync(join(dir, 'snippet'), 'utf8');
  }

  for (const [kind, reply] of [
    ['code', CODE_REPLY],
    ['diff', DIFF_REPLY],
  ] as const) {
    test(`suggest (${kind} reply): a snippet without a final newline`, async () => {
      const snippet = FUNCTION.trimEnd();
      assert.equal(await suggestAndApply(`no-final-newline-${kind}`, snippet, reply), IMPROVED.trimEnd());
    });

    test(
      `suggest (${kind} reply): a CRLF snippet keeps its CRLF line ` + `ends, and only the changed lines change`,
      async () => {
        const snippet = FUNCTION.replace(/\n/g, '\r\n');
        assert.equal(await suggestAndApply(`crlf-${kind}`, snippet, reply), IMPROVED.replace(/\n/g, '\r\n'));
      },
    );
  }

  test('suggest: the CRLF diff leaves the unchanged line as context', async () => {
    const snippet = FUNCTION.replace(/\n/g, '\r\n');
    fake.queueChat(CODE_REPLY);
    const result = await call('fault_suggest_better_function_performance', {
      snippet,
      lang: 'python',
      score: 0.4,
      target_score: 0.9,
    });
    const { diff } = result.structuredContent as { diff: string };
    assert.match(diff, /^ def total\(items\):\r$/m);
    assert.doesNotMatch(diff, /^-def total/m);
  });

  test('suggest: tabs and non-ASCII text survive the round trip', async () => {
    const snippet = 'def greet(name):\n\tprefix = "Grüße, 世界 😀 "\n\treturn prefix + name\n';
    const improved = 'def greet(name):\n\treturn f"Grüße, 世界 😀 {name}"\n';
    assert.equal(await suggestAndApply('tabs-unicode', snippet, `\`\`\`python\n${improved}\`\`\``), improved);
  });

  test(
    'file changes: the diff applies to a CRLF file without a final ' + 'newline, and new keeps its line ends',
    async () => {
      const dir = join(work, 'file-change');
      mkdirSync(dir);
      const source = `import os\n\n\n${FUNCTION}`.replace(/\n/g, '\r\n').trimEnd();
      const path = join(dir, 'cart.py');
      writeFileSync(path, source);
      // The model answers in LF and ends with a newline, as models do.
      fake.queueChat(
        JSON.stringify({
          score: 0.5,
          explanation: 'a loop where sum() serves',
          new: `import os\n\n\n${IMPROVED}`,
          dependencies: [],
        }),
      );
      const result = await call('fault_make_reliability_and_perf_changes', { file: path });
      assert.equal(result.isError, undefined, textOf(result));
      const change = result.structuredContent as { diff: string; new: string; old: string };
      assert.equal(change.old, source);
      const expected = `import os\n\n\n${IMPROVED}`.replace(/\n/g, '\r\n').trimEnd();
      assert.equal(change.new, expected);
      assert.doesNotMatch(change.diff, /^-import os/m, 'the unchanged import is context');
      // The headers name the file by its absolute path: applied from the filesystem root.
      writeFileSync(join(dir, 'change.diff'), change.diff);
      execFileSync('git', ['apply', join(dir, 'change.diff')], {
        cwd: '/',
        stdio: 'pipe',
        env: { ...process.env, GIT_CEILING_DIRECTORIES: '/' },
      });
      assert.equal(readFileSync(path, 'utf8'), expected);
    },
  );
});
