/**
 * The experiment validator `npm run build` generates (src/experiment/shape-writer.ts, ajv standalone)
 * is the schema's: built from this schema, and it answers every input with the errors ajv compiling
 * the schema at run time answers (the refusal messages are made from them).
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { Ajv, type ErrorObject } from 'ajv';
import { EXPERIMENT_SCHEMA } from '../src/experiment/schema.js';
import { SHAPE_AJV_OPTIONS, SHAPE_VALIDATOR_URL, schemaFingerprint } from '../src/experiment/shape.js';

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
const generated = createRequire(import.meta.url)(fileURLToPath(SHAPE_VALIDATOR_URL)) as {
  default: Validate;
  fingerprint: string;
};

test('the generated validator was built from this schema', () => {
  assert.equal(generated.fingerprint, schemaFingerprint(EXPERIMENT_SCHEMA));
  assert.notEqual(schemaFingerprint({ ...EXPERIMENT_SCHEMA, title: 'other' }), generated.fingerprint);
});

test('the generated validator answers what a run-time compile answers', () => {
  const compiled = new Ajv(SHAPE_AJV_OPTIONS).compile(EXPERIMENT_SCHEMA) as Validate;
  const base = { title: 't', method: [{ fault: { type: 'latency', latency_ms: 100 } }] };
  const inputs: unknown[] = [
    base,
    { ...base, unknown: 1 },
    { ...base, load: { rps: 'fast' } },
    { ...base, method: [{ fault: 7 }] },
    { ...base, method: [{ nope: 1 }] },
    { ...base, method: 'x' },
    { ...base, abort_when: [{ nope: true }] },
    { title: 3 },
    {},
  ];
  let refused = 0;
  for (const input of inputs) {
    const expected = compiled(input);
    assert.equal(generated.default(input), expected, JSON.stringify(input));
    assert.deepEqual(generated.default.errors ?? null, compiled.errors ?? null, JSON.stringify(input));
    if (!expected) refused += 1;
  }
  assert.ok(refused >= 6, `${refused} of ${inputs.length} refused`);
});
