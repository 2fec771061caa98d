/**
 * The scenario arguments' defaults, quoted by the tools' descriptions and applied by input.ts and
 * http-fault.ts: a leaf module (type imports, and the proxy's leaf vocabulary), so the MCP server can describe its
 * scenario
 * tools without loading the scenario runner, the proxy or the load generator.
 */
import type { FieldDeclaration } from '../proxy/faults/declaration.js';
import type { Direction, Side } from '../proxy/index.js';
import { NETWORK_FAULTS } from '../proxy/faults/declarations.js';

/**
 * Each network fault argument's default (`latency` 100, `deviation` 0, `unit` bps …), from the
 * faults' declarations: the argument's own default, else its field's.
 */
export const FAULT_ARGUMENT_DEFAULTS: Readonly<Record<string, number | string | boolean | undefined>> =
  Object.fromEntries(
    NETWORK_FAULTS.flatMap((fault) => fault.fields as readonly FieldDeclaration[]).flatMap((field) =>
      field.argument ? [[field.argument.name, field.argument.default ?? field.default]] : [],
    ),
  );

export const SCENARIO_DEFAULTS = {
  method: 'GET',
  duration: '10s',
  // 20 requests/s over 10 connections: each connection is busy a fifth of the time even with a
  // 100 ms fault, so the default run measures the fault, not a queue for connections.
  num_clients: 10,
  rps: 2,
  timeout: 10,
  direction: 'ingress' as Direction,
  side: 'server' as Side,
} as const;

/** The HTTP scenario's own defaults; each HTTP fault's arguments default as its declaration says. */
export const HTTP_SCENARIO_DEFAULTS = {
  http_fault: 'error',
  probability: 1,
} as const;
