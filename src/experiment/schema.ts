/**
 * The experiment file's JSON Schema: the one source of its structure. The reader validates every
 * file against it (ajv) before the meaning of each field is checked, `faultline experiment
 * schema` prints it, and schemas/experiment.schema.json is this object written out (a test holds
 * the two equal), so editors complete and check the files people write.
 *
 * Draft-07, which every editor's YAML and JSON support reads. A leaf module (it imports only the
 * faults' declarations, leaves too), so the MCP server can describe its tools without loading the runner.
 */

import {
  HTTP_COMMON_FIELDS,
  NETWORK_COMMON_FIELDS,
  spellingsOf,
  type FieldDeclaration,
} from '../proxy/faults/declaration.js';
import { LIST_FAULTS } from '../proxy/faults/declarations.js';
import { HTTP_FAULTS } from '../proxy/http/declarations.js';

export const EXPERIMENT_SCHEMA_ID = 'https://faultline.dev/schemas/experiment.schema.json';

const duration = {
  type: ['string', 'number'],
  description: 'A duration: 500ms, 10s, 1m30s, or a number of seconds.',
} as const;

const moment = {
  type: ['string', 'number'],
  description: 'When, from the start of the load: a duration (5s, 1m) or a percentage of the run ("20%").',
} as const;

/**
 * Every fault field in every spelling a config may use (camelCase, snake_case, the reference
 * tools'), from the faults' declarations: completion only; the proxy's own validator decides.
 */
function faultProperties(): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    type: {
      type: 'string',
      description:
        `Network: ` +
        `${LIST_FAULTS.map((f) => (f.type === 'latency' ? 'latency (with latencyMs)' : f.type)).join(', ')}. ` +
        `HTTP: ${HTTP_FAULTS.map((f) => (f.type === 'latency' ? 'latency (with delay)' : f.type)).join(', ')}. ` +
        'kebab-case (rate-limit) is accepted.',
    },
    target: {
      type: 'string',
      description: "The mapping it acts on: its #name or local port (a control plane's own target name with via)",
    },
    name: { type: 'string', description: 'Counter key (default the type)' },
  };
  const described = (fields: readonly FieldDeclaration[], owner: string | undefined) => {
    for (const field of fields) {
      if (field.argumentOnly || field.key === 'name' || field.key === 'target') continue;
      const description = owner === undefined ? field.help : `${owner}: ${field.help}`;
      for (const spelling of spellingsOf(field)) {
        // A spelling two faults share (delayMs: HTTP latency, slow_close) says both.
        const known = (properties[spelling] as { description: string } | undefined)?.description;
        properties[spelling] = { description: known ? `${known}; ${description}` : description };
      }
    }
  };
  described(NETWORK_COMMON_FIELDS, undefined);
  described(HTTP_COMMON_FIELDS, undefined);
  for (const fault of [...LIST_FAULTS, ...HTTP_FAULTS]) {
    const owner = fault.plane === 'http' && fault.type === 'latency' ? 'latency (HTTP)' : fault.type;
    described(fault.fields as readonly FieldDeclaration[], owner);
  }
  return properties;
}

const fault = {
  type: 'object',
  description: 'A fault config as the admin API, --http-fault and the held proxies take it (camelCase or snake_case).',
  required: ['type'],
  properties: faultProperties(),
};

const during = {
  type: 'string',
  description:
    'The window: inject (default for expect: from the first fault on ' +
    "to the last one off), baseline, recover, run, a step's name, or " +
    '"10s..20s".',
};

const httpCheck = {
  type: 'object',
  required: ['http'],
  additionalProperties: false,
  properties: {
    http: {
      type: 'string',
      description: '"GET http://127.0.0.1:8000/health"; a path alone ("GET /health") is taken on the load\'s host',
    },
    expect: {
      type: 'string',
      description:
        'What the answer must satisfy: status == 200, status < 500, ' +
        'header.content-type contains "json", $.circuit == "open", ' +
        '$.items exists, body contains "ok"; join with and (default ' +
        'status < 400)',
    },
    mode: {
      enum: ['continuous', 'eventually', 'start', 'end', 'edge'],
      description:
        'continuous: every probe in the window (default); eventually: at ' +
        'least one; start / end / edge: once at the start, the end, or ' +
        'both',
    },
    every: { ...duration, description: 'How often it is probed in the window (default 1s)' },
    timeout: { ...duration, description: 'Bound on one probe (default 2s)' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    body: { type: 'string' },
    during,
    name: { type: 'string' },
  },
};

const command = {
  type: 'object',
  required: ['command'],
  additionalProperties: false,
  properties: {
    command: {
      type: ['string', 'array'],
      items: { type: 'string' },
      description: 'The program and its arguments (["npm", "test"]); a string runs through /bin/sh -c',
    },
    timeout: {
      ...duration,
      description: 'Bound on the command (default 5m; a rollback 1m); killed with its process group after it',
    },
    cwd: { type: 'string' },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    during: { ...during, description: 'When it starts: at the start of this window (default inject)' },
    name: { type: 'string' },
  },
};

const sloExpectation = {
  type: 'object',
  required: ['slo'],
  additionalProperties: false,
  properties: {
    slo: { type: 'string', description: 'An SLO: "p99 < 2s", "99% @ 350ms", "errors < 5%"' },
    during,
    name: { type: 'string' },
  },
};

/** A PromQL check (src/experiment/read-promql.ts): the query and what its value must be. */
const promqlFields = {
  prometheus: { type: 'string', minLength: 1, description: 'A PromQL query whose value is judged each poll' },
  url: {
    type: 'string',
    description: "The Prometheus server (default the file's prometheus.url, else FAULTLINE_PROMETHEUS_URL)",
  },
  below: { type: 'number', description: 'The value must stay below this' },
  above: { type: 'number', description: 'The value must stay above this' },
  between: {
    type: 'array',
    items: { type: 'number' },
    minItems: 2,
    maxItems: 2,
    description: 'The value must stay within [low, high]',
  },
  comparator: {
    type: 'object',
    additionalProperties: false,
    required: ['criteria', 'value'],
    description: 'Litmus promProbe\'s comparator: {criteria: "<=", value: "0.01"}',
    properties: {
      criteria: { enum: ['>=', '<=', '>', '<', '==', '!=', 'oneOf'] },
      value: { type: ['string', 'number'] },
      type: { enum: ['float', 'int'] },
    },
  },
  every: { ...duration, description: 'How often it is asked in the window (default 1s)' },
  timeout: { ...duration, description: 'Bound on one query (default 2s)' },
  name: { type: 'string' },
} as const;

const promqlCheck = {
  type: 'object',
  required: ['prometheus'],
  additionalProperties: false,
  properties: { ...promqlFields, during },
};

const promqlAbort = {
  type: 'object',
  required: ['prometheus'],
  additionalProperties: false,
  properties: {
    ...promqlFields,
    for: {
      ...duration,
      description: 'How long the value must meet the condition before the run aborts (default one poll)',
    },
  },
};

const expectation = {
  description:
    'An SLO string ("errors < 5%"), an HTTP probe ("GET /health -> ' +
    '$.circuit == \\"open\\"" or an object), a command that must exit ' +
    '0, or a PromQL check ({prometheus: query, below: 0.01}).',
  oneOf: [{ type: 'string' }, sloExpectation, httpCheck, command, promqlCheck],
};

const abortCheck = {
  type: 'object',
  required: ['http'],
  additionalProperties: false,
  properties: {
    http: httpCheck.properties.http,
    expect: httpCheck.properties.expect,
    failures: { type: 'integer', minimum: 1, description: 'Consecutive failed probes that abort (default 3)' },
    every: httpCheck.properties.every,
    timeout: httpCheck.properties.timeout,
    headers: httpCheck.properties.headers,
    name: { type: 'string' },
  },
};

const abortRule = {
  description:
    'A condition on the load, checked each second while faults act ' +
    '("errors > 50% for 3s", "p95 > 2s for 5s"), or an HTTP check ' +
    'whose consecutive failures abort.',
  oneOf: [{ type: 'string' }, abortCheck, promqlAbort],
};

const mcpServer = {
  command: { type: 'string', description: 'MCP server executable, spawned over stdio' },
  args: { type: 'array', items: { type: 'string' } },
  url: { type: 'string', description: 'Streamable-HTTP MCP endpoint' },
};

const step = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', description: 'Names the step in reports and in during: windows' },
    description: { type: 'string' },
    at: { ...moment, description: `${moment.description} Default 0.` },
    for: {
      ...duration,
      description: 'How long it lasts (a fault step needs it); a tool-call or probe step not done by then is cut',
    },
    fault,
    via: {
      type: 'string',
      description: 'The control plane (a name under control:) that sets this fault, instead of the proxies',
    },
    toolcall: {
      type: 'object',
      additionalProperties: false,
      required: ['calls'],
      properties: {
        ...mcpServer,
        plan: {
          type: ['object', 'string'],
          description: 'The tool-call fault plan (mcp-chaos format: seed, faults [{type, tools, probability, …}])',
        },
        calls: {
          type: 'array',
          items: {
            type: 'object',
            required: ['tool'],
            properties: { tool: { type: 'string' }, arguments: { type: 'object' } },
          },
        },
        tasks: { type: 'integer', minimum: 1, maximum: 100 },
        deadline_ms: { type: 'number' },
        resilience: { type: 'boolean' },
      },
    },
    probe: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ...mcpServer,
        families: { type: 'array', items: { type: 'string' } },
        cases: { type: 'integer', minimum: 1 },
        allow_writes: { type: 'boolean' },
        call_timeout: duration,
      },
    },
    expect: {
      type: 'array',
      items: { type: 'string' },
      description:
        'A tool-call step\'s SLIs: "tcsr >= 0.95", "blast_radius <= 0.2", ' +
        '"eta >= 90%". A probe step must pass (no leaf failed) unless ' +
        'expect: [] ',
    },
  },
};

export const EXPERIMENT_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: EXPERIMENT_SCHEMA_ID,
  title: 'faultline experiment',
  description:
    'A chaos experiment: the steady state that should hold, faults on ' +
    'a timeline, what must hold while they act, how soon the system ' +
    'recovers, when to abort. ' +
    "mcp-chaos-monkey's scenario JSON (name, faults, expectedBehavior, assertions) is accepted as it is.",
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: {
      type: 'string',
      description: 'The schema this file follows, for editors that complete JSON files (read, not used)',
    },
    version: { const: 1 },
    title: { type: 'string', minLength: 1, maxLength: 200 },
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: "mcp-chaos-monkey's scenario name (the title when there is none)",
    },
    description: { type: 'string', maxLength: 4000 },
    seed: { type: 'integer', description: 'Seed of every random fault decision (default drawn and reported)' },
    load: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      description:
        "Open-loop load on the app, with the scenario tools' arguments: " +
        'the rate is num_clients × rps (num_clients defaults to 1 here, ' +
        'so rps is the total).',
      properties: {
        url: { type: 'string' },
        method: { type: 'string' },
        headers: {
          oneOf: [
            { type: 'array', items: { type: 'string' } },
            { type: 'object', additionalProperties: { type: 'string' } },
          ],
        },
        body: { type: ['string', 'object', 'array'] },
        duration: {
          ...duration,
          description: "The run's length (default: to the last fault's end plus recover_within plus 5s)",
        },
        rps: { type: 'number', exclusiveMinimum: 0 },
        num_clients: { type: 'integer', minimum: 1 },
        timeout: { ...duration, description: 'Per request, from its intended start (default 10s)' },
        expect_status: { type: 'string', description: 'Statuses that count as success (default "2xx,3xx")' },
        max_connections: { type: 'integer', minimum: 1 },
        insecure_tls: { type: 'boolean' },
      },
    },
    duration: { ...duration, description: "The run's length when there is no load" },
    prometheus: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      description:
        'The Prometheus server PromQL checks ask unless they give their ' +
        'own url (credentials from FAULTLINE_PROMETHEUS_TOKEN, or ' +
        '_USERNAME and _PASSWORD)',
      properties: { url: { type: 'string' } },
    },
    proxies: {
      type: 'array',
      items: { type: 'string' },
      description:
        "Fault proxies the runner starts for the app's dependencies: " +
        '"34000=127.0.0.1:7001#weather" (LOCAL=REMOTE, #name for fault ' +
        'targets)',
    },
    control: {
      type: 'object',
      description:
        'Control planes that already run (`faultline proxy --admin`, or ' +
        "an app with mcp-chaos-monkey's admin endpoint), by name",
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['url'],
        properties: {
          url: { type: 'string' },
          token_env: {
            type: 'string',
            description: 'The environment variable holding its bearer token (default FAULTLINE_ADMIN_TOKEN)',
          },
        },
      },
    },
    steady_state: {
      type: 'array',
      items: { oneOf: [{ type: 'string' }, httpCheck, promqlCheck] },
      description: 'What holds before the faults and again after recovery: SLO strings on the load, or HTTP checks',
    },
    method: {
      type: 'array',
      items: step,
      description: "The faults and the plane steps, on the run's timeline; steps may overlap",
    },
    faults: {
      type: 'array',
      description: "mcp-chaos-monkey's faults: each starts with the run and lasts durationMs",
      items: {
        type: 'object',
        required: ['target', 'config'],
        additionalProperties: false,
        properties: {
          target: { type: 'string' },
          config: fault,
          durationMs: { type: 'integer', minimum: 0 },
          duration_ms: { type: 'integer', minimum: 0 },
        },
      },
    },
    expect: {
      type: 'array',
      items: expectation,
      description: 'What must hold while the faults act (each may name another window with during)',
    },
    recover_within: { ...duration, description: 'Back to the steady state this long after the last fault ends' },
    abort_when: {
      description: abortRule.description,
      oneOf: [{ type: 'string' }, abortCheck, promqlAbort, { type: 'array', items: abortRule }],
    },
    rollbacks: {
      type: 'array',
      items: command,
      description:
        'Commands run after the method, whatever happened (every fault is ' +
        'cleared before them); after a cancellation each is cut within ' +
        '10s',
    },
    expectedBehavior: { type: 'string', description: "mcp-chaos-monkey's free text: reported, not checked" },
    assertions: {
      type: 'array',
      items: { type: 'string' },
      description: "mcp-chaos-monkey's free-text assertions: reported as not checked",
    },
  },
} as const;
