/**
 * Proxies an agent holds across calls (toolset family `proxy`): start one in front of the app's
 * dependencies, change its faults while the user's own tests run, read what happened, stop it.
 * Thin: validation and lifecycle live in src/proxy/control/held.ts.
 */
import * as z from 'zod';
import { InputError } from '../kernel/errors.js';
import type { HeldProxies, HeldStatus } from '../proxy/control/index.js';
import { CONNECTION_FAULT_TYPES, HELD_LIMITS, NETWORK_FAULT_TYPES } from '../proxy/vocabulary.js';
import type { ToolAnnotationsExplicit, ToolRegistry } from './define.js';
import { objectListArgument } from './arguments.js';
import type { ToolContext } from './context.js';

const FAULTS_DESCRIPTION =
  'Fault configs, applied in order. HTTP: ' +
  '{"type":"error","status_code":503}, latency {delay ms}, ' +
  'rate_limit {retry_after s}, ' +
  'timeout {hang ms}, malformed, schema_mismatch ' +
  '{missing_fields:["a.b"]}, connection_refused, connection_drop ' +
  '{after_bytes}; each with optional ' +
  'method ("GET,POST"), path (glob "/api/**"). Network: ' +
  '{"type":"latency","latencyMs":200}, ' +
  `${[...NETWORK_FAULT_TYPES, ...CONNECTION_FAULT_TYPES].filter((type) => type !== 'latency').join(', ')}. ` +
  'camelCase or snake_case.';

/** A held proxy's faults: objects (or JSON text of them), validated by src/proxy/control. */
const faultsArgument = objectListArgument(
  {
    type: z.string(),
    probability: z.number().optional().describe('0..1, default 1'),
    target: z.string().optional().describe('A mapping port or #name (default all)'),
  },
  FAULTS_DESCRIPTION,
);

const statusOutput = {
  id: z.string(),
  listening: z
    .array(z.object({ mapping: z.string(), address: z.string() }))
    .describe('Point the app at these host:port addresses'),
  seed: z.union([z.number(), z.string()]),
  startedAt: z.string(),
  expiresAt: z.string().describe('When the ttl stops it'),
  faults: z.array(z.string()),
  counters: z
    .looseObject({})
    .describe('Per mapping (connections, bytes, httpExchanges) and per fault (applications, passes)'),
  recentEvents: z.array(z.string()),
};

const HELD: ToolAnnotationsExplicit = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

const render = (status: HeldStatus) => ({
  text: JSON.stringify(status),
  structured: status as unknown as z.infer<z.ZodObject<typeof statusOutput>>,
});

export function registerProxyTools(tools: ToolRegistry, ctx: ToolContext): void {
  // The proxy loads on the first call of any of these tools, not when the server starts.
  let proxies: HeldProxies | undefined;
  const heldProxies = async (): Promise<HeldProxies> => {
    const { HeldProxies } = await import('../proxy/control/index.js');
    return (proxies ??= new HeldProxies((line) => ctx.log.info('%s', line)));
  };
  ctx.onClose?.(() => proxies?.stopAll());
  ctx.onHold?.(() => (proxies?.size ?? 0) > 0);
  const id = z.string().describe('The id fault_proxy_start returned');

  // family: proxy
  tools.register(
    {
      name: 'fault_proxy_start',
      toolset: 'proxy',
      title: 'Start a held fault proxy',
      description:
        `Starts a fault proxy that stays up across calls, so the user's ` +
        `own app and tests can run through it. Returns an id and the ` +
        `listening addresses. ` +
        `Every mapping parses HTTP/1.1 (other traffic passes as TCP). ` +
        `Stops after ttl (seconds, default ` +
        `${HELD_LIMITS.defaultTtlMs / 1000}, at most ` +
        `${HELD_LIMITS.maxTtlMs / 1000}) ` +
        `or when the server exits; at most ${HELD_LIMITS.maxHeld} held at ` +
        `once. Refused where the server's environment says production.`,
      input: {
        proxies: z
          .array(z.string())
          .describe(
            'Mappings LOCAL=REMOTE, e.g. "0=127.0.0.1:8080" (ephemeral port), ' +
              '"34000=https://api.example.com#weather" (TLS to the remote, ' +
              '#name for fault targets)',
          ),
        faults: faultsArgument.optional(),
        ttl: z
          .number()
          .optional()
          .describe(
            `Seconds before it stops by itself (default ` +
              `${HELD_LIMITS.defaultTtlMs / 1000}, max ` +
              `${HELD_LIMITS.maxTtlMs / 1000})`,
          ),
        seed: z.number().int().optional().describe('Seed for the random fault decisions (default random, reported)'),
        insecure_tls: z
          .boolean()
          .optional()
          .describe('Accept any certificate from a TLS remote, e.g. a self-signed one (default false)'),
      },
      output: statusOutput,
      annotations: HELD,
    },
    async ({ proxies, faults, ttl, seed, insecure_tls }) => {
      if (ttl !== undefined && (!Number.isFinite(ttl) || ttl <= 0))
        throw new InputError(`ttl: seconds, more than 0 and at most ${HELD_LIMITS.maxTtlMs / 1000}`);
      const held = await heldProxies();
      const { HeldLimitError } = await import('../proxy/control/index.js');
      return render(
        await held
          .start({
            mappings: proxies,
            faults: (faults ?? []).map((fault) => JSON.stringify(fault)),
            ttlMs: ttl === undefined ? undefined : ttl * 1000,
            seed,
            insecureTls: insecure_tls,
            policy: {
              allowRemoteTargets: ctx.config.scenario.allowRemoteTargets,
              allowTargets: ctx.config.scenario.allowTargets,
              allowNonLoopbackBind: ctx.config.scenario.allowNonLoopbackBind === true,
            },
            allowProduction: ctx.config.allowProduction,
          })
          .catch((error: unknown) => {
            throw error instanceof HeldLimitError ? new InputError(`${error.message} with fault_proxy_stop`) : error;
          }),
      );
    },
  );

  // family: proxy
  tools.register(
    {
      name: 'fault_proxy_set_faults',
      toolset: 'proxy',
      title: 'Set the faults of a held proxy',
      description:
        'Replaces the fault list of a held proxy, live on open ' +
        'connections (HTTP faults from the next request). An empty list ' +
        'removes every fault. Returns its status.',
      input: { id, faults: faultsArgument },
      output: statusOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ id, faults }) =>
      render(
        (await heldProxies()).setFaults(
          id,
          faults.map((fault) => JSON.stringify(fault)),
        ),
      ),
  );

  // family: proxy
  tools.register(
    {
      name: 'fault_proxy_status',
      toolset: 'proxy',
      title: 'Read a held proxy',
      description:
        'Counters of a held proxy (per mapping: connections, bytes, HTTP ' +
        'exchanges; per fault: applications, passes) and its recent ' +
        'connection events.',
      input: { id },
      output: statusOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ id }) => render((await heldProxies()).status(id)),
  );

  // family: proxy
  tools.register(
    {
      name: 'fault_proxy_stop',
      toolset: 'proxy',
      title: 'Stop a held proxy',
      description: 'Stops a held proxy: closes its ports and every connection. Returns its final status.',
      input: { id },
      output: statusOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async ({ id }) => {
      const held = await heldProxies();
      const status = await held.stop(id);
      if (!status)
        throw new InputError(
          `id: no held proxy ${JSON.stringify(id)} (it may have reached its ` +
            `ttl); held: ${held.ids().join(', ') || 'none'}`,
        );
      return render(status);
    },
  );
}
