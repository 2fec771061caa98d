/** The HTTP schema_mismatch fault's declaration (see ../faults/declaration.ts). */
import type { FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { HttpSchemaMismatchSpec } from './schema-mismatch.js';

export const HTTP_SCHEMA_MISMATCH = {
  type: 'schema_mismatch',
  plane: 'http',
  help: "the upstream's JSON body without the missing fields; other bodies untouched",
  fields: [
    {
      key: 'missing_fields',
      kind: 'strings',
      required: true,
      expected: 'a non-empty list of dot paths, e.g. ["id", "data.items.price"]',
      help: 'dot paths removed from JSON bodies (through arrays, each element)',
      argument: { name: 'missing_fields', help: 'schema_mismatch: dot paths removed from JSON responses' },
      chaosFlag: { name: 'fields' },
    },
  ],
  // A body that is not JSON, or holds none of the fields, goes through as it was: `unchanged`.
  acted: (counters) => counters.applications > 0,
  idle: 'no response body was JSON holding one of missing_fields (name fields the responses carry)',
  describe: (spec, probability) => `HTTP Schema Mismatch: without ${spec.missing_fields.join(', ')}, ${probability}`,
} as const satisfies FaultDeclaration<HttpFaultCounters, HttpSchemaMismatchSpec>;
