/**
 * schema_mismatch: forwards, then removes `missing_fields` (dot paths, e.g. "data.user.email")
 * from a JSON body; a path through an array applies to each element. Bodies that are not JSON go
 * through untouched. content-length is recomputed by the stage.
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
      for (const path of paths) removePath(value, path);
      return { kind: 'replace', response: { ...response, body: Buffer.from(JSON.stringify(value)) } };
    },
  };
}

/** Deletes the field at `path` inside `value`, descending into every element of arrays on the way. */
export function removePath(value: unknown, path: readonly string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) removePath(item, path);
    return;
  }
  if (typeof value !== 'object' || value === null || path.length === 0) return;
  const record = value as Record<string, unknown>;
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) delete record[head];
  else removePath(record[head], rest);
}
