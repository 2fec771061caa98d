/**
 * The live control plane: mcp-chaos-monkey's admin payloads verbatim against a running proxy,
 * auth, expiry, caps, the production guard, and `faultline chaos` in one process reaching a
 * `faultline proxy --admin` running in another.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { describe, it } from 'node:test';
import { startProxy, validateFault } from '../src/proxy/index.js';
import { FAULT_ARGUMENT_DEFAULTS } from '../src/scenario/defaults.js';
import { FaultRegistry, MAX_ACTIVE_FAULTS, startAdmin } from '../src/proxy/control/index.js';
import { refuseInProduction } from '../src/production.js';
import { tokensMatch } from '../src/jsonrpc/bearer.js';
import { injectConfig, registerChaosCommand } from '../src/commands/chaos.js';
import { FaultlineCommand } from '../src/commands/faultline-command.js';
import { UsageError } from '../src/commands/run-command.js';
import { portNumber } from '../src/commands/parsers.js';
import { CONNECTION_FAULT_TYPES, HTTP_FAULT_TYPES, NETWORK_FAULT_TYPES } from '../src/proxy/vocabulary.js';
import { MAX_RETIRED_FAULTS } from '../src/proxy/retired.js';
import {
  connect,
  echo,
  handleCounts,
  readBytes,
  settledHandles,
  startServer,
  waitClose,
} from './fixtures/proxy/net.js';
import { startUpstream } from './fixtures/http/upstream.js';
import { cliPath } from './helpers/repo.js';
import { runCliBatch, type CliInvocation } from './helpers/cli-batch.js';
import type { CliOutcome } from './helpers/processes.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TOKEN = 'test-token-123';

/**
 * Command lines refused before anything starts or is sent, by name. They need main() and not a
 * process each: they run once, in one process (helpers/cli-batch.ts, whose hang guard ends a
 * `faultline proxy` that serves instead of refusing), for the tests that read them.
 */
const REFUSALS: Record<string, CliInvocation> = {
  bogus: { args: ['chaos', 'inject', 'api', 'bogus'], env: { FAULTLINE_ADMIN_URL: '', FAULTLINE_ADMIN_TOKEN: '' } },
  'admin 80': {
    args: ['proxy', '--proxy', '0=127.0.0.1:9', '--admin', '80'],
    env: { FAULTLINE_ADMIN_TOKEN: TOKEN, NODE_ENV: '' },
  },
  'admin 443': {
    args: ['proxy', '--proxy', '0=127.0.0.1:9', '--admin', '127.0.0.1:443'],
    env: { FAULTLINE_ADMIN_TOKEN: TOKEN, NODE_ENV: '' },
  },
  'http-fault target': {
    args: [
      'proxy',
      '--proxy',
      '0=127.0.0.1:9#api',
      '--http-fault',
      '{"type":"latency","latencyMs":5}',
      '--http-fault',
      '{"type":"error","target":"apj"}',
    ],
    env: { NODE_ENV: '' },
  },
  'network fault flags': {
    args: [
      'chaos',
      'inject',
      'api',
      'jitter',
      '--config',
      '{"amplitudeMs":5,"frequencyHz":5}',
      '--method',
      'POST',
      '--probability',
      '0.5',
      '--admin',
      '127.0.0.1:9',
      '--token',
      TOKEN,
    ],
  },
  production: {
    args: ['proxy', '--proxy', '0=127.0.0.1:9', '--admin', '0'],
    env: { FAULTLINE_ADMIN_TOKEN: TOKEN, NODE_ENV: 'PROD' },
  },
  'no token': {
    args: ['proxy', '--proxy', '0=127.0.0.1:9', '--admin', '0'],
    env: { FAULTLINE_ADMIN_TOKEN: '', NODE_ENV: '' },
  },
  'admin 0.0.0.0': {
    args: ['proxy', '--proxy', '0=127.0.0.1:9', '--admin', '0.0.0.0:0'],
    env: { FAULTLINE_ADMIN_TOKEN: TOKEN, NODE_ENV: '' },
  },
};
let refusals: Promise<Map<string, CliOutcome>> | undefined;

function refusal(name: keyof typeof REFUSALS): Promise<CliOutcome> {
  const names = Object.keys(REFUSALS);
  refusals ??= runCliBatch(Object.values(REFUSALS)).then(
    (outcomes) => new Map(names.map((key, i) => [key, outcomes[i]!])),
  );
  return refusals.then((all) => all.get(name)!);
}

type AdminApi = (
  method: string,
  path: string,
  payload?: unknown,
  token?: string | null,
) => Promise<{ status: number; json: Record<string, unknown> }>;

/**
 * An HTTP proxy (one mapping per name, all to one upstream) with its admin API, torn down after
 * `body`, which then must have left no handle behind.
 */
async function withAdmin(
  body: (
    api: AdminApi,
    proxyUrl: string,
    received: string[],
    context: { ports: readonly number[]; registry: FaultRegistry },
  ) => Promise<void>,
  mappingNames: string[] = ['weather-api'],
): Promise<void> {
  const baseline = handleCounts();
  const upstream = await startUpstream();
  const proxy = await startProxy({
    mappings: mappingNames.map((name) => `0=127.0.0.1:${upstream.port}#${name}`),
    http: true,
    seed: 3,
  });
  const registry = new FaultRegistry(proxy);
  const admin = await startAdmin({ host: '127.0.0.1', port: 0, token: TOKEN, registry });
  const api = async (method: string, path: string, payload?: unknown, token: string | null = TOKEN) => {
    const response = await fetch(`${admin.url}${path}`, {
      method,
      headers: { ...(token !== null ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
      ...(payload !== undefined ? { body: JSON.stringify(payload) } : {}),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  try {
    await body(api, `http://127.0.0.1:${proxy.ports[0]}`, upstream.received, { ports: proxy.ports, registry });
  } finally {
    await admin.close();
    registry.dispose();
    await proxy.stop();
    await upstream.close();
  }
  assert.deepEqual(await settledHandles(baseline), baseline);
}

describe('admin API (mcp-chaos-monkey routes)', () => {
  it('takes its payloads verbatim: inject, status, clear, clear-all', async () => {
    await withAdmin(async (api, proxyUrl) => {
      const injected = await api('POST', '/chaos/inject', {
        target: 'weather-api',
        config: { type: 'error', statusCode: 503 },
      });
      assert.equal(injected.status, 200);
      const id = injected.json['faultId'] as string;
      assert.match(id, /^weather-api-\d+-[0-9a-z]{6}$/);
      assert.equal((await fetch(`${proxyUrl}/`)).status, 503);
      const status = await api('GET', '/chaos/status');
      assert.deepEqual(status.json, {
        faults: [{ id, target: 'weather-api', type: 'error', requestCount: 1, unit: 'HTTP request' }],
      });
      assert.deepEqual((await api('POST', '/chaos/clear', { faultId: id })).json, { cleared: id });
      assert.equal((await fetch(`${proxyUrl}/`)).status, 200);
      const unknown = await api('POST', '/chaos/clear', { faultId: id });
      assert.equal(unknown.status, 404);

      const limited = await api('POST', '/chaos/inject', {
        target: 'weather-api',
        config: { type: 'rate-limit', retryAfterSeconds: 5 },
      });
      const response = await fetch(`${proxyUrl}/`);
      assert.equal(response.status, 429);
      assert.equal(response.headers.get('retry-after'), '5');
      await api('POST', '/chaos/clear', { faultId: limited.json['faultId'] });

      await api('POST', '/chaos/inject', {
        target: 'weather-api',
        config: { type: 'schema-mismatch', missingFields: ['data.user'] },
      });
      assert.deepEqual(Object.keys((await (await fetch(`${proxyUrl}/json`)).json()) as object), [
        'id',
        'data',
        'items',
      ]);
      assert.deepEqual(((await (await fetch(`${proxyUrl}/json`)).json()) as { data: object }).data, {});
      assert.deepEqual((await api('POST', '/chaos/clear-all')).json, { cleared: 'all' });
      assert.deepEqual((await api('GET', '/chaos/status')).json, { faults: [] });
    });
  });

  it('counts a network fault as the experiment does: the HTTP requests that met it, not its delays', async () => {
    await withAdmin(async (api, proxyUrl) => {
      const inject = async (config: object) =>
        (await api('POST', '/chaos/inject', { target: 'weather-api', config })).json['faultId'] as string;
      // Both ways: each request and each answer is delayed, two delays per request.
      const latency = await inject({ type: 'latency', latencyMs: 5, direction: 'both' });
      const inert = await inject({ type: 'latency', latencyMs: 0 });
      for (let i = 0; i < 3; i++) assert.equal((await fetch(`${proxyUrl}/`)).status, 200);
      const faults = (await api('GET', '/chaos/status')).json['faults'] as Array<Record<string, unknown>>;
      const count = (id: string) => {
        const { requestCount, unit } = faults.find((fault) => fault['id'] === id)!;
        return { requestCount, unit };
      };
      assert.deepEqual(count(latency), { requestCount: 3, unit: 'HTTP request' });
      assert.deepEqual(count(inert), { requestCount: 0, unit: 'HTTP request' }, 'a 0 ms latency changed nothing');
    });
  });

  it("counts a network fault on plain TCP in its declaration's unit: delays, stream resets", async () => {
    const baseline = handleCounts();
    const server = await startServer(echo);
    const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}#tcp`], seed: 3 });
    const registry = new FaultRegistry(proxy);
    try {
      const latency = registry.inject('tcp', { type: 'latency', latencyMs: 1, direction: 'both' });
      const client = await connect(proxy.ports[0]!);
      for (const word of ['ping', 'pong']) {
        client.write(word);
        assert.equal((await readBytes(client, 4)).toString(), word);
      }
      const delays = proxy.counters().faults.find((fault) => fault.name === latency)!.applications;
      assert.ok(delays >= 4, `${delays} delays: each word both ways`);
      assert.deepEqual(registry.status()[0], {
        id: latency,
        target: 'tcp',
        type: 'latency',
        requestCount: delays,
        unit: 'delay',
      });
      client.destroy();
      registry.clearAll();
      const reset = registry.inject('tcp', { type: 'reset_peer', afterMs: 0 });
      const doomed = await connect(proxy.ports[0]!);
      doomed.write('ping');
      await waitClose(doomed);
      assert.deepEqual(registry.status()[0], {
        id: reset,
        target: 'tcp',
        type: 'reset_peer',
        requestCount: 1,
        unit: 'stream reset',
      });
    } finally {
      registry.dispose();
      await proxy.stop();
      await server.close();
    }
    assert.deepEqual(await settledHandles(baseline), baseline);
  });

  it('refuses a misspelt key in a payload, naming it, rather than leaving a fault on for good', async () => {
    await withAdmin(async (api, proxyUrl) => {
      const misspelt = await api('POST', '/chaos/inject', {
        target: 'weather-api',
        config: { type: 'error', statusCode: 503 },
        duration: 5000,
      });
      assert.equal(misspelt.status, 400);
      assert.match(
        String(misspelt.json['error']),
        /unknown field "duration" \(accepted: target, config, durationMs, duration_ms\)/,
      );
      assert.deepEqual((await api('GET', '/chaos/status')).json, { faults: [] });
      assert.equal((await fetch(`${proxyUrl}/`)).status, 200);
      const clear = await api('POST', '/chaos/clear', { id: 'x' });
      assert.equal(clear.status, 400);
      assert.match(String(clear.json['error']), /unknown field "id"/);
    });
  });

  it(
    'refuses a config whose own target names another mapping than the ' + "body's target, naming config.target",
    async () => {
      await withAdmin(
        async (api, _proxyUrl, _received, { ports, registry }) => {
          const inject = (payload: unknown) => api('POST', '/chaos/inject', payload);
          for (const own of ['#b', 'b', String(ports[1]), 'nowhere']) {
            const conflict = await inject({ target: 'a', config: { type: 'error', statusCode: 503, target: own } });
            assert.equal(conflict.status, 400, JSON.stringify(own));
            assert.ok(
              String(conflict.json['error']).startsWith(
                `config.target: ${JSON.stringify(own)} conflicts with target "a"`,
              ),
              String(conflict.json['error']),
            );
          }
          assert.deepEqual(registry.status(), [], 'nothing was injected');
          assert.equal((await fetch(`http://127.0.0.1:${ports[0]}/`)).status, 200);
          assert.equal((await fetch(`http://127.0.0.1:${ports[1]}/`)).status, 200);
          // The same mapping in another spelling agrees, and the fault goes there only.
          const agreeing = await inject({
            target: 'a',
            config: { type: 'error', statusCode: 503, target: String(ports[0]) },
          });
          assert.equal(agreeing.status, 200, JSON.stringify(agreeing.json));
          assert.equal((await fetch(`http://127.0.0.1:${ports[0]}/`)).status, 503);
          assert.equal((await fetch(`http://127.0.0.1:${ports[1]}/`)).status, 200);
        },
        ['a', 'b'],
      );
    },
  );

  it('takes a jitter without frequencyHz, with the default every other door applies', async () => {
    assert.equal(
      (validateFault({ type: 'jitter', amplitudeMs: 5 }) as { frequencyHz?: number }).frequencyHz,
      FAULT_ARGUMENT_DEFAULTS['frequency'],
    );
    await withAdmin(async (api, proxyUrl) => {
      for (const config of [
        { type: 'jitter', amplitudeMs: 5 },
        { type: 'jitter', amplitude_ms: 5 },
      ]) {
        const injected = await api('POST', '/chaos/inject', { target: 'weather-api', config });
        assert.equal(injected.status, 200, JSON.stringify(injected.json));
        assert.equal((await fetch(`${proxyUrl}/`)).status, 200);
        const status = (await api('GET', '/chaos/status')).json['faults'] as Array<{
          id: string;
          type: string;
          requestCount: number;
        }>;
        const mine = status.find((fault) => fault.id === injected.json['faultId'])!;
        assert.equal(mine.type, 'jitter');
        assert.ok(mine.requestCount > 0, 'the jitter acted on the request');
        await api('POST', '/chaos/clear-all');
      }
      // A bad frequency is still refused, naming the field.
      const bad = await api('POST', '/chaos/inject', {
        target: 'weather-api',
        config: { type: 'jitter', amplitudeMs: 5, frequencyHz: 0 },
      });
      assert.equal(bad.status, 400);
      assert.match(String(bad.json['error']), /frequencyHz/);
    });
  });

  it(
    'keeps the counters of at most MAX_RETIRED_FAULTS cleared faults, ' + 'however many a long-lived proxy sees',
    async () => {
      const baseline = handleCounts();
      const upstream = await startUpstream();
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${upstream.port}#api`], http: true });
      const registry = new FaultRegistry(proxy);
      try {
        const rounds = MAX_RETIRED_FAULTS + 100;
        let last = '';
        for (let i = 0; i < rounds; i++) {
          registry.clear(registry.inject('api', { type: 'error', statusCode: 503 }));
          last = registry.inject('api', { type: 'latency', latencyMs: 1 });
          registry.clear(last);
        }
        const kept = registry.inject('api', { type: 'rate-limit', retryAfterSeconds: 1 });
        const counters = proxy.counters();
        assert.equal(counters.httpFaults!.length, MAX_RETIRED_FAULTS + 1);
        assert.equal(counters.faults.length, MAX_RETIRED_FAULTS);
        assert.ok(counters.httpFaults!.some((c) => c.name === kept && c.active));
        assert.equal(counters.faults.at(-1)!.name, last, 'the most recent retired ones are kept');
      } finally {
        registry.dispose();
        await proxy.stop();
        await upstream.close();
      }
      assert.deepEqual(await settledHandles(baseline), baseline);
    },
  );

  it('accepts snake_case configs and network faults; targets by port too', async () => {
    await withAdmin(async (api, proxyUrl) => {
      const port = new URL(proxyUrl).port;
      const snake = await api('POST', '/chaos/inject', {
        target: port,
        config: { type: 'error', status_code: 502, probability: 1 },
        duration_ms: 60_000,
      });
      assert.equal(snake.status, 200);
      assert.equal((await fetch(`${proxyUrl}/`)).status, 502);
      await api('POST', '/chaos/clear-all');
      const network = await api('POST', '/chaos/inject', {
        target: 'weather-api',
        config: { type: 'latency', latencyMs: 150 },
      });
      assert.equal(network.status, 200);
      const started = performance.now();
      await (await fetch(`${proxyUrl}/`)).text();
      assert.ok(performance.now() - started >= 140);
      const [fault] = (await api('GET', '/chaos/status')).json['faults'] as Array<{ requestCount: number }>;
      assert.ok(fault!.requestCount >= 1);
    });
  });

  it('refuses bad tokens, bad configs and unknown targets with the right status', async () => {
    await withAdmin(async (api, _proxyUrl, received) => {
      assert.equal((await api('GET', '/chaos/status', undefined, null)).status, 401);
      // A wrong token is answered as a missing one (jsonrpc/bearer.ts): 401 with WWW-Authenticate.
      assert.equal((await api('GET', '/chaos/status', undefined, 'wrong')).status, 401);
      const bad = await api('POST', '/chaos/inject', {
        target: 'weather-api',
        config: { type: 'error', statusCode: 99 },
      });
      assert.equal(bad.status, 400);
      assert.match(bad.json['error'] as string, /status_code must be an HTTP status in 400\.\.599/);
      const target = await api('POST', '/chaos/inject', { target: 'nope', config: { type: 'error' } });
      assert.equal(target.status, 400);
      assert.match(target.json['error'] as string, /names no mapping.*accepted: \d+, weather-api/);
      assert.equal((await api('GET', '/chaos/inject')).status, 405);
      assert.equal((await api('GET', '/nope')).status, 404);
      assert.deepEqual(received, []);
    });
  });

  it('expires a fault after durationMs, not before', async () => {
    await withAdmin(async (api, proxyUrl) => {
      // Long enough that the first request comes before it ends, however busy the machine.
      const injected = performance.now();
      await api('POST', '/chaos/inject', { target: 'weather-api', config: { type: 'error' }, durationMs: 3000 });
      assert.equal((await fetch(`${proxyUrl}/`)).status, 500);
      while ((await fetch(`${proxyUrl}/`)).status === 500 && performance.now() - injected < 30_000) await sleep(50);
      assert.ok(performance.now() - injected >= 3000, `expired ${performance.now() - injected} ms after the inject`);
      assert.equal((await fetch(`${proxyUrl}/`)).status, 200);
      assert.deepEqual((await api('GET', '/chaos/status')).json, { faults: [] });
    });
  });

  it(`caps active faults at ${MAX_ACTIVE_FAULTS}`, async () => {
    const proxy = await startProxy({ mappings: ['0=127.0.0.1:9#x'], http: true });
    const events: string[] = [];
    const registry = new FaultRegistry(proxy, undefined, (event) => events.push(event.type));
    try {
      for (let i = 0; i < MAX_ACTIVE_FAULTS; i++) registry.inject('x', { type: 'latency', delayMs: 1 });
      assert.throws(() => registry.inject('x', { type: 'latency', delayMs: 1 }), /at most 1000 faults/);
      assert.equal(registry.clearAll(), MAX_ACTIVE_FAULTS);
      assert.equal(events.filter((e) => e === 'inject').length, MAX_ACTIVE_FAULTS);
    } finally {
      registry.dispose();
      await proxy.stop();
    }
  });

  it('lists base faults first, then the injected in order; a refused inject changes nothing', async () => {
    const proxy = await startProxy({
      mappings: ['0=127.0.0.1:9#x'],
      http: true,
      faults: [{ type: 'latency', latencyMs: 1, name: 'base-net' }],
      httpFaults: [{ type: 'latency', delay_ms: 1, name: 'base-http' }],
    });
    // Another owner's fault: the registry's first change sets the lists whole (base and injected).
    proxy.setFaults([
      { type: 'latency', latencyMs: 1, name: 'base-net' },
      { type: 'jitter', amplitudeMs: 1, name: 'stray' },
    ]);
    const events: string[] = [];
    let next = 0;
    const ids = ['a', 'b', 'c', 'd', 'base-net', 'e'];
    const registry = new FaultRegistry(
      proxy,
      {
        network: [{ type: 'latency', latencyMs: 1, name: 'base-net' }],
        http: [{ type: 'latency', delay_ms: 1, name: 'base-http' }],
      },
      (event) => events.push(`${event.type} ${event.id}`),
      () => ids[next++]!,
    );
    const on = (): string[][] => {
      const counters = proxy.counters();
      return [counters.faults, counters.httpFaults!].map((list) => list.filter((f) => f.active).map((f) => f.name));
    };
    try {
      registry.inject('x', { type: 'latency', latencyMs: 2 });
      registry.inject('x', { type: 'error', statusCode: 503 });
      registry.inject('#x', { type: 'stall', timeoutMs: 1000 });
      registry.inject('x', { type: 'latency', delayMs: 2 });
      assert.deepEqual(on(), [
        ['base-net', 'a', 'c'],
        ['base-http', 'b', 'd'],
      ]);
      const before = JSON.stringify(proxy.counters());
      assert.throws(
        () => registry.inject('x', { type: 'jitter', amplitudeMs: 1 }),
        /^InputError: config: two faults are named "base-net"; give each fault/,
      );
      assert.throws(() => registry.inject('x', { type: 'error', statusCode: 99 }), /^InputError: config: error fault/);
      assert.equal(JSON.stringify(proxy.counters()), before, 'a refused inject leaves the proxy as it was');
      assert.equal(registry.clear('b'), true);
      assert.equal(registry.clear('a'), true);
      assert.equal(registry.clear('a'), false);
      registry.inject('x', { type: 'latency', latencyMs: 3 });
      assert.deepEqual(on(), [
        ['base-net', 'c', 'e'],
        ['base-http', 'd'],
      ]);
      assert.deepEqual(
        registry.status().map((fault) => fault.id),
        ['c', 'd', 'e'],
      );
      assert.equal(registry.clearAll(), 3);
      assert.deepEqual(on(), [['base-net'], ['base-http']]);
      const retired = proxy
        .counters()
        .faults.filter((f) => !f.active)
        .map((f) => f.name);
      assert.deepEqual(retired.sort(), ['a', 'c', 'e', 'stray']);
      assert.deepEqual(events, [
        'inject a',
        'inject b',
        'inject c',
        'inject d',
        'clear b',
        'clear a',
        'inject e',
        'clear *',
      ]);
    } finally {
      registry.dispose();
      await proxy.stop();
    }
  });

  it('adds and removes one fault of a list by name, on a live connection too', async () => {
    const server = await startServer(echo);
    const proxy = await startProxy({
      mappings: [`0=127.0.0.1:${server.port}#x`],
      faults: [{ type: 'latency', latencyMs: 1, name: 'base' }],
    });
    try {
      const client = await connect(proxy.ports[0]!);
      client.write('a');
      assert.equal((await readBytes(client, 1)).toString(), 'a');
      proxy.addFault({ type: 'blackhole', name: 'hole', target: '#x' } as never);
      client.write('held');
      for (let waited = 0; proxy.counters().mappings[0]!.bytesQueued < 4; waited += 20) {
        assert.ok(waited < HANG_GUARD_MS, 'the blackhole added live holds what the client sends');
        await sleep(20);
      }
      const listed = (): string => JSON.stringify(proxy.counters().faults.map((f) => [f.name, f.type, f.active]));
      const before = listed();
      assert.throws(
        () => proxy.addFault({ type: 'blackhole', name: 'hole' }),
        /^InputError: two faults are named "hole"/,
      );
      assert.throws(() => proxy.addFault({ type: 'latency', latencyMs: -1 }), /latencyMs/);
      assert.throws(() => proxy.addFault({ type: 'latency', latencyMs: 1, target: '#y' } as never), /#y/);
      assert.throws(() => proxy.addHttpFault({ type: 'error' }), /does not parse HTTP/);
      proxy.removeFaults(['nothing']);
      assert.equal(listed(), before, 'refusals and an unknown name change nothing');
      proxy.removeFaults(['hole']);
      assert.equal((await readBytes(client, 4)).toString(), 'held');
      assert.deepEqual(
        proxy.counters().faults.map((f) => [f.name, f.active]),
        [
          ['base', true],
          ['hole', false],
        ],
      );
      client.destroy();
      await waitClose(client);
    } finally {
      await proxy.stop();
      await server.close();
    }
  });

  it('compares tokens in constant time and guards production', () => {
    assert.equal(tokensMatch('a', 'a'), true);
    assert.equal(tokensMatch('a', 'ab'), false);
    assert.equal(tokensMatch('', ''), false);
    for (const value of ['production', 'PROD', 'prd', 'Live']) {
      assert.throws(
        () => refuseInProduction('start a fault proxy', false, { NODE_ENV: value }),
        /^InputError: refused to start a fault proxy: NODE_ENV=.* says this is production$/,
      );
      assert.throws(() => refuseInProduction('x', false, { ENVIRONMENT: value }), /ENVIRONMENT/);
    }
    refuseInProduction('x', true, { NODE_ENV: 'production' });
    refuseInProduction('x', false, { NODE_ENV: 'production', FAULTLINE_ALLOW_PRODUCTION: 'yes' });
    refuseInProduction('x', false, { NODE_ENV: 'staging' });
  });

  it("maps mcp-chaos-monkey's CLI flags to configs", () => {
    assert.deepEqual(injectConfig('latency', { delay: 500 }), { type: 'latency', delayMs: 500 });
    assert.deepEqual(injectConfig('timeout', {}), { type: 'timeout', hangMs: 1000 });
    assert.deepEqual(injectConfig('error', { probability: 0.5 }), { type: 'error', statusCode: 503, probability: 0.5 });
    assert.deepEqual(injectConfig('rate-limit', { retryAfter: 5 }), { type: 'rate-limit', retryAfterSeconds: 5 });
    assert.deepEqual(injectConfig('schema-mismatch', { fields: 'a.b, c' }), {
      type: 'schema-mismatch',
      missingFields: ['a.b', 'c'],
    });
    assert.deepEqual(injectConfig('latency', { config: '{"latencyMs":200}' }), { type: 'latency', latencyMs: 200 });
    assert.deepEqual(injectConfig('packet_loss', { config: '{"rate":0.1}' }), { type: 'packet-loss', rate: 0.1 });
  });

  it("derives inject's flags from the HTTP fault declarations; a --config field wins over a flag default", () => {
    const program = new FaultlineCommand('faultline');
    registerChaosCommand(program);
    const inject = program.commands.find((c) => c.name() === 'chaos')!.commands.find((c) => c.name() === 'inject')!;
    const flags = inject.options.map((option) => option.long);
    for (const flag of ['--status', '--delay', '--retry-after', '--fields', '--after-bytes', '--probability', '--path'])
      assert.ok(flags.includes(flag), `${flag} in ${flags.join(' ')}`);
    assert.deepEqual(injectConfig('latency', { config: '{"delayMs":50}' }), { type: 'latency', delayMs: 50 });
    assert.deepEqual(injectConfig('schema-mismatch', { config: '{"missing_fields":["a"]}' }), {
      type: 'schema-mismatch',
      missing_fields: ['a'],
    });
    assert.throws(() => injectConfig('schema-mismatch', { fields: ' , ' }), /schema-mismatch needs --fields a,b/);
  });

  it("takes the connection faults, their fields by `faultline proxy`'s flags", () => {
    const program = new FaultlineCommand('faultline');
    registerChaosCommand(program);
    const inject = program.commands.find((c) => c.name() === 'chaos')!.commands.find((c) => c.name() === 'inject')!;
    const flags = inject.options.map((option) => option.long);
    for (const flag of ['--stall', '--reset-peer', '--slow-close', '--slicer', '--slicer-delay', '--limit-data'])
      assert.ok(flags.includes(flag), `${flag} in ${flags.join(' ')}`);
    assert.deepEqual(injectConfig('stall', { stall: 0 }), { type: 'stall', timeoutMs: 0 });
    assert.deepEqual(injectConfig('reset_peer', { resetPeer: 10 }), { type: 'reset-peer', afterMs: 10 });
    assert.deepEqual(injectConfig('slicer', { slicer: 64, slicerDelay: 100, config: '{"sizeVariation":4}' }), {
      type: 'slicer',
      averageSize: 64,
      delayUs: 100,
      sizeVariation: 4,
    });
    assert.throws(
      () => injectConfig('stall', { limitData: 5 }),
      /--limit-data: applies to limit-data faults, not stall/,
    );
    assert.throws(() => injectConfig('error', { stall: 5 }), /--stall: applies to stall faults, not error/);
  });

  it(
    'every --port (mcp --http, mcp-chaos proxy http) refuses a ' + 'privileged port, as --admin and the mappings do',
    () => {
      assert.equal(portNumber('0'), 0);
      assert.equal(portNumber('1024'), 1024);
      for (const port of ['1', '80', '1023'])
        assert.throws(
          () => portNumber(port),
          /port \d+ is privileged; use 0 \(ephemeral\) or a port from 1024 to 65535/,
        );
    },
  );

  it('refuses an unknown fault type itself, naming every type the admin API accepts', () => {
    for (const [type, options] of [
      ['bogus', {}],
      ['error', { config: '{"type":"nah"}' }],
    ] as const) {
      assert.throws(
        () => injectConfig(type, options),
        (error: unknown) => {
          assert.ok(error instanceof UsageError);
          assert.match(error.message, /fault type "(bogus|nah)" is unknown; accepted: /);
          for (const accepted of [...HTTP_FAULT_TYPES, ...NETWORK_FAULT_TYPES, ...CONNECTION_FAULT_TYPES])
            assert.ok(error.message.includes(accepted.replace(/_/g, '-')), accepted);
          return true;
        },
      );
    }
  });
});

/** Spawns the built CLI; resolves when it exits. */
function cli(
  args: string[],
  env: Record<string, string> = {},
): {
  child: ChildProcess;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  stderrLines: string[];
} {
  const child = spawn(process.execPath, [cliPath, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const stderrLines: string[] = [];
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    stderrLines.splice(0, stderrLines.length, ...stderr.split('\n'));
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done, stderrLines };
}

describe('faultline chaos ↔ faultline proxy --admin, two processes', () => {
  it('injects into the running proxy, lists, expires on time, refuses an unknown id', async () => {
    const upstream = await startUpstream();
    const proxy = cli(['proxy', '--proxy', `0=127.0.0.1:${upstream.port}#api`, '--admin', '0'], {
      FAULTLINE_ADMIN_TOKEN: TOKEN,
      NODE_ENV: 'test',
      ENVIRONMENT: '',
    });
    let exit: { code: number | null; stdout: string; stderr: string };
    try {
      // A bound on a start, not a figure: a process start has taken over 20 s at a load of 28.
      const deadline = Date.now() + HANG_GUARD_MS;
      let adminUrl: string | undefined;
      let proxyPort: string | undefined;
      while (!adminUrl && Date.now() < deadline && proxy.child.exitCode === null) {
        await sleep(50);
        adminUrl = proxy.stderrLines.map((l) => /admin API on (http:\/\/\S+)/.exec(l)?.[1]).find(Boolean);
        proxyPort = proxy.stderrLines.map((l) => /listening on 127\.0\.0\.1:(\d+)/.exec(l)?.[1]).find(Boolean);
      }
      assert.ok(adminUrl && proxyPort, proxy.stderrLines.join('\n'));
      const env = { FAULTLINE_ADMIN_URL: adminUrl, FAULTLINE_ADMIN_TOKEN: TOKEN };
      const injected = await cli(['chaos', 'inject', 'api', 'error', '--status', '503'], env).done;
      assert.equal(injected.code, 0, injected.stderr);
      const id = injected.stdout.trim();
      assert.match(id, /^api-\d+-/);
      assert.equal((await fetch(`http://127.0.0.1:${proxyPort}/`)).status, 503);
      // status then clear, through main() in one child (helpers/cli-batch.ts; a process start costs ~0.3 s of
      // CPU): still a process apart from the proxy's, reaching it over its admin API.
      const [status, cleared] = await runCliBatch([
        { args: ['chaos', 'status'], env },
        { args: ['chaos', 'clear', id], env },
      ]);
      assert.equal(status!.stdout.trim(), `${id} → api [error] (1 HTTP request)`);
      assert.equal(cleared!.code, 0, cleared!.stderr);
      assert.equal((await fetch(`http://127.0.0.1:${proxyPort}/`)).status, 200);
      // Expiry: off once its duration is over, never before (whatever a busy machine costs the CLI).
      const injecting = Date.now();
      const expiring = await cli(['chaos', 'inject', 'api', 'error', '--status', '503', '--duration', '1.5'], env).done;
      assert.equal(expiring.code, 0, expiring.stderr);
      while ((await fetch(`http://127.0.0.1:${proxyPort}/`)).status === 503 && Date.now() - injecting < 30_000)
        await sleep(100);
      assert.ok(
        Date.now() - injecting >= 1500,
        `expired ${Date.now() - injecting} ms after the inject command started`,
      );
      assert.equal((await fetch(`http://127.0.0.1:${proxyPort}/`)).status, 200);
      const [none, unknown, wrongToken] = await runCliBatch([
        { args: ['chaos', 'status'], env },
        { args: ['chaos', 'clear', id], env },
        { args: ['chaos', 'status'], env: { ...env, FAULTLINE_ADMIN_TOKEN: 'nope' } },
      ]);
      assert.equal(none!.stdout.trim(), 'No active faults');
      assert.match(proxy.stderrLines.join('\n'), new RegExp(`admin: expire ${expiring.stdout.trim()}`));
      assert.equal(unknown!.code, 2);
      assert.match(unknown!.stderr, /404/);
      // A refused token is not a usage error (2): the command was right and the admin API said no (1).
      assert.equal(wrongToken!.code, 1, wrongToken!.stderr);
      assert.match(wrongToken!.stderr, /admin API answered 401.*check --token/);
    } finally {
      // Only the teardown here: an assertion thrown from finally would hide the body's first error.
      proxy.child.kill('SIGTERM');
      exit = await proxy.done;
      await upstream.close();
    }
    assert.equal(exit.code, 0, exit.stderr);
    assert.ok(JSON.parse(exit.stdout).httpFaults.length >= 1);
  });

  it('refuses an unknown fault type before any request, and a privileged --admin port', async () => {
    // No admin URL at all: the type is judged first, so nothing could have been sent.
    const bogus = await refusal('bogus');
    assert.equal(bogus.code, 2);
    assert.match(bogus.stderr, /fault type "bogus" is unknown; accepted: latency, error, .*blackhole/);
    assert.equal(bogus.stdout, '');
    for (const [name, admin] of [
      ['admin 80', '80'],
      ['admin 443', '127.0.0.1:443'],
    ] as const) {
      const privileged = await refusal(name);
      assert.equal(privileged.code, 2, privileged.stderr);
      assert.match(
        privileged.stderr,
        new RegExp(`--admin ${admin}: port \\d+ is privileged; use 0 \\(ephemeral\\) or a port from 1024 to 65535`),
      );
    }
  });

  it('refuses an --http-fault whose target names no mapping, naming which --http-fault', async () => {
    const refused = await refusal('http-fault target');
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /--http-fault #2: fault target "apj" names no mapping; accepted: #api/);
    assert.equal(refused.stdout, '');
  });

  it(
    'refuses --method, --path and --probability on a network fault ' +
      'instead of dropping them (which would widen the fault)',
    async () => {
      assert.throws(
        () => injectConfig('latency', { config: '{"latencyMs":200}', path: '/api/**' }),
        /--path: only HTTP faults take this; the network fault latency acts on all the traffic of its target/,
      );
      const refused = await refusal('network fault flags');
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /--method, --probability: only HTTP faults take these; the network fault jitter/);
      assert.equal(refused.stdout, '');
    },
  );

  it('refuses --admin in production unless --allow-production, and without a token', async () => {
    const prod = await refusal('production');
    assert.equal(prod.code, 2);
    assert.match(
      prod.stderr,
      /refused to start a fault proxy: NODE_ENV=PROD says this is production; pass --allow-production to allow it/,
    );
    const noToken = await refusal('no token');
    assert.equal(noToken.code, 2);
    assert.match(noToken.stderr, /--admin needs a token/);
    // The control plane binds loopback like the mappings, unless non-loopback binds are allowed.
    const exposed = await refusal('admin 0.0.0.0');
    assert.equal(exposed.code, 2);
    assert.match(
      exposed.stderr,
      /--admin 0\.0\.0\.0:0: the admin API listens only on loopback .* --allow-non-loopback-bind/,
    );
    assert.equal(exposed.stdout, '');
  });
});
