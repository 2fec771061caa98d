/**
 * schema_mismatch: forwards, then removes `missing_fields` (dot paths, e.g. "data.user.email")
 * from a JSON body; a path through an array applies to each element. Bodies that are not JSON, or
 * hold none of the fields, go through untouched (byte for byte: the stage counts them unchanged).
 * content-length is recomputed by the stage.
 */
import { type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpSchemaMismatchSpec extends ResolvedCommon {
  type: 'schema_mismatch';
  missing_fields: string[];
}

export function httpSchemaMismatch(spec: HttpSchemaMismatchSpec): HttpFaultBehaviour {
  const paths = spec.missing_fields.map((field) => field.split('.'));
  return {
    readsBody: true,
    request: () => ({ kind: 'after_response' }),
    response(response) {
      let value: unknown;
      try {
        value = JSON.parse(response.body.toString('utf8'));
      } catch {
        return { kind: 'replace', response };
      }
      let removed = false;
      for (const path of paths) removed = removePath(value, path) || removed;
      if (!removed) return { kind: 'replace', response };
      return { kind: 'replace', response: { ...response, body: Buffer.from(JSON.stringify(value)) } };
    },
  };
}

/**
 * Deletes the field at `path` inside `value`, descending into every element of arrays on the way; whether it
 * deleted any.
 */
export function removePath(value: unknown, path: readonly string[]): boolean {
  if (Array.isArray(value)) {
    let removed = false;
    for (const item of value) removed = removePath(item, path) || removed;
    return removed;
  }
  if (typeof value !== 'object' || value === null || path.length === 0) return false;
  const record = value as Record<string, unknown>;
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length > 0) return removePath(record[head], rest);
  if (!Object.hasOwn(record, head)) return false;
  delete record[head];
  return true;
}
