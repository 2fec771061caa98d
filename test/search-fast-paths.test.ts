/**
 * The shortcuts a search from a fresh process takes give the answers of the general code they
 * stand in for: bm25.ts conceptScorer is conceptScore over an encoded term list, and the ASCII
 * forms of the identifier patterns (hashed-embedder.ts splitIdentifier, tokens.ts codeTokens and
 * symbolQueryText) split and match as the Unicode ones do, on random names and texts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conceptScore, conceptScorer, encodeTerms, type ScoringConcept } from '../src/search/bm25.js';
import { isAscii, splitIdentifier } from '../src/search/hashed-embedder.js';
import { codeTokens, symbolQueryText } from '../src/search/tokens.js';
import { publicationKey, publishedForm } from '../src/search/fusion.js';

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The reference reader: a term id's weighted frequency in an encoded term list, by binary search (0 when absent). */
function frequencies(blob: Uint8Array): (id: number) => number {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const last = blob.byteLength / 8 - 1;
  return (id) => {
    let low = 0;
    let high = last;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const seen = view.getUint32(middle * 8, true);
      if (seen === id) return view.getUint32(middle * 8 + 4, true);
      if (seen < id) low = middle + 1;
      else high = middle - 1;
    }
    return 0;
  };
}

test('conceptScorer scores a stored term list exactly as conceptScore does', () => {
  const next = random(7);
  const pick = (n: number) => Math.floor(next() * n);
  for (let round = 0; round < 200; round++) {
    const concepts: ScoringConcept[] = Array.from({ length: 1 + pick(4) }, () => ({
      ceiling: next() * 10,
      // Ids may repeat across concepts (a form shared by two words) and miss every chunk.
      variants: Array.from({ length: 1 + pick(6) }, () => ({ id: 1 + pick(60), idf: next() * 8, weight: next() })),
    }));
    const totalCeiling = round % 50 === 0 ? 0 : concepts.reduce((sum, concept) => sum + concept.ceiling, 0);
    const avgLength = 1 + next() * 200;
    const score = conceptScorer(concepts, avgLength, totalCeiling);
    for (let chunk = 0; chunk < 10; chunk++) {
      const ids = [...new Set(Array.from({ length: pick(40) }, () => 1 + pick(80)))];
      const blob = encodeTerms(ids.map((id) => [id, 1 + pick(60)]));
      const length = 1 + pick(400);
      assert.equal(
        score(blob, length),
        conceptScore(concepts, frequencies(blob), length, avgLength, totalCeiling),
        `round ${round}, chunk ${chunk}`,
      );
    }
  }
});

/** The general forms, as they were before the ASCII shortcuts. */
function splitUnicode(identifier: string): string[] {
  return identifier
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[\s_\p{N}]+/u)
    .filter((part) => part.length > 1)
    .map((part) => part.toLowerCase());
}

const NAME = /^[\p{L}_$][\p{L}\p{N}_$]*((\.|::?|\/|#)[\p{L}_$][\p{L}\p{N}_$]*)*(\(\))?$/u;

test('the ASCII identifier patterns split and match as the Unicode ones', () => {
  const next = random(11);
  const alphabet = 'aAbZz09_$ .:/#()\t\n-é';
  for (let round = 0; round < 20_000; round++) {
    let text = '';
    for (let i = 1 + Math.floor(next() * 14); i > 0; i--) text += alphabet[Math.floor(next() * alphabet.length)];
    assert.deepEqual(splitIdentifier(text), splitUnicode(text), JSON.stringify(text));
    const expected = [...text.matchAll(/[\p{L}_$][\p{L}\p{N}_$]*/gu)].map((match) => match[0]);
    const tokens = expected.flatMap((identifier) => codeTokens(identifier));
    assert.deepEqual(codeTokens(text), tokens, JSON.stringify(text));
    assert.equal(symbolQueryText(text) !== undefined, NAME.test(text.trim()), JSON.stringify(text));
  }
  assert.equal(isAscii('parseHTTPConfig_file2'), true);
  assert.equal(isAscii('größe'), false);
  assert.deepEqual(splitIdentifier('parseHTTPConfig_file2'), ['parse', 'http', 'config', 'file']);
  assert.deepEqual(splitIdentifier('größeBerechnen'), ['größe', 'berechnen']);
});

test('a published form is known by the extension as by the patterns', () => {
  const forms: Array<[RegExp, number]> = [
    [/\.d\.(ts|mts|cts)$/, 3],
    [/\.(ts|tsx|mts|cts)$/, 0],
    [/\.(js|jsx|mjs)$/, 1],
    [/\.cjs$/, 2],
  ];
  const next = random(5);
  const pieces = [
    'src',
    'a.b',
    'ts',
    '.d',
    '.ts',
    '.tsx',
    '.mts',
    '.cts',
    '.js',
    '.jsx',
    '.mjs',
    '.cjs',
    '.py',
    '.TS',
    '/',
    'x',
  ];
  for (let round = 0; round < 5_000; round++) {
    let path = '';
    for (let i = 1 + Math.floor(next() * 5); i > 0; i--) path += pieces[Math.floor(next() * pieces.length)];
    const form = forms.find(([pattern]) => pattern.test(path))?.[1];
    assert.equal(publishedForm(path), form, path);
    assert.equal(publicationKey({ path, symbol: 'f' }) !== undefined, form !== undefined, path);
  }
});
