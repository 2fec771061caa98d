/** Model-written diffs: what counts as one, and the slips that are put right before applying. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyModelPatch, looksLikePatch, normaliseModelPatch } from '../src/llm/patch.js';

const ORIGINAL = 'def f(xs):\n    out = []\n    for x in xs:\n        out.append(x)\n    return out\n';
const IMPROVED = 'def f(xs):\n    return list(xs)\n';
const HUNK_BODY = [
  ' def f(xs):',
  '-    out = []',
  '-    for x in xs:',
  '-        out.append(x)',
  '-    return out',
  '+    return list(xs)',
];

function applies(patch: string, original = ORIGINAL): string {
  const outcome = applyModelPatch(original, patch);
  assert.ok(outcome.ok, `${JSON.stringify(patch)}: ${outcome.ok ? '' : outcome.reason}`);
  return outcome.result;
}

test('hunk headers are recounted from the lines under them', () => {
  assert.equal(
    normaliseModelPatch(['--- a/snippet', '+++ b/snippet', '@@ -1,7 +1,5 @@ def f', ...HUNK_BODY, '', ''].join('\n')),
    ['--- a/snippet', '+++ b/snippet', '@@ -1,5 +1,2 @@ def f', ...HUNK_BODY, ''].join('\n'),
  );
  assert.equal(applies(['@@ -3,9 +3,1 @@', ...HUNK_BODY].join('\n')), IMPROVED);
});

test('a bare @@, no hunk header, no file headers, or a context line without its space still apply', () => {
  assert.equal(applies(['@@', ...HUNK_BODY].join('\n')), IMPROVED);
  assert.equal(applies(['@@ @@', ...HUNK_BODY].join('\n')), IMPROVED);
  assert.equal(applies(HUNK_BODY.join('\n')), IMPROVED);
  assert.equal(applies(['--- a/snippet', '+++ b/snippet', ...HUNK_BODY].join('\n')), IMPROVED);
  assert.equal(applies(['@@ -1,5 +1,2 @@', 'def f(xs):', ...HUNK_BODY.slice(1)].join('\n')), IMPROVED);
});

test('an LF diff applies to CRLF code, keeping its line ends', () => {
  assert.equal(applies(HUNK_BODY.join('\n'), ORIGINAL.replace(/\n/g, '\r\n')), IMPROVED.replace(/\n/g, '\r\n'));
});

test('a diff for other code does not apply, and says why', () => {
  const outcome = applyModelPatch(
    ORIGINAL,
    ['@@ -1,2 +1,2 @@', ' def g(y):', '-    return y', '+    return y + 1'].join('\n'),
  );
  assert.deepEqual(outcome, { ok: false, reason: 'its context and removed lines do not match the code' });
});

test('diffs are told from code', () => {
  assert.equal(looksLikePatch(HUNK_BODY.join('\n')), true);
  assert.equal(looksLikePatch(['--- a/x', '+++ b/x', ' same'].join('\n')), true);
  assert.equal(looksLikePatch('@@ -1 +1 @@\n-a\n+b'), true);
  assert.equal(looksLikePatch(IMPROVED), false);
  // An indented method is all leading spaces, but has no added or removed line.
  assert.equal(looksLikePatch('    def m(self):\n        return -1\n'), false);
  assert.equal(looksLikePatch(''), false);
});
