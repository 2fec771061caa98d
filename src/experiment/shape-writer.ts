/**
 * Generates dist/src/experiment/shape-validator.cjs: the published experiment schema compiled once
 * at build time by ajv's standalone code generation, so that `faultline experiment …` starts load
 * plain code instead of loading ajv and compiling the schema on every run (~150-200 ms of CPU).
 * `npm run build` runs it after tsc:
 *
 *   node dist/src/experiment/shape-writer.js [OUT.cjs]
 *
 * The file carries the schema's fingerprint; shape.ts compiles the schema itself when the file is
 * missing or was built from another schema (a `tsc` without this step). Never loaded at run time.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import { EXPERIMENT_SCHEMA } from './schema.js';
import { SHAPE_AJV_OPTIONS, SHAPE_VALIDATOR_URL, schemaFingerprint } from './shape.js';

/** The validator's CommonJS source (ajv's runtime helpers are required from node_modules). */
export function shapeValidatorSource(): string {
  const ajv = new Ajv({ ...SHAPE_AJV_OPTIONS, code: { source: true } });
  // A CommonJS module whose `exports.default` is the function: ESM sees it one level down.
  const code = standalone.default(ajv, ajv.compile(EXPERIMENT_SCHEMA));
  return `${code}\nmodule.exports.fingerprint = ${JSON.stringify(schemaFingerprint(EXPERIMENT_SCHEMA))};\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2] ? pathToFileURL(process.argv[2]) : SHAPE_VALIDATOR_URL;
  const source = shapeValidatorSource();
  writeFileSync(out, source);
  process.stderr.write(`experiment validator: ${source.length} characters → ${fileURLToPath(out)}\n`);
}
