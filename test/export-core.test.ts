/**
 * One meaning everywhere (issue 39 items 4 and 5): faultline's blackhole holds both ways by
 * default, so a request does not reach the origin (a real HTTP server counting what it is sent),
 * one way when told, and every export keeps that meaning or refuses; an export never changes the
 * protocol (a Redis fault never becomes an HTTPChaos, a k6 threshold keeps its operator).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { makeConfig } from '../src/config.js';
import { readExperiment } from '../src/experiment/index.js';
import { exportExperiment } from '../src/experiment/export/index.js';
import type { SafetyPolicy } from '../src/experiment/adapters/policy.js';
import { startProxy, parseMapping } from '../src/proxy/index.js';
import { exportScenario } from '../src/cloud/index.js';
import { scenarioFromArguments } from '../src/scenario/index.js';

const limits = { ...makeConfig().scenario, allowRemoteTargets: true };
const policy: SafetyPolicy = {
  allowRemoteTargets: true,
  allowNonLoopbackBind: false,
  allowProduction: true,
};

/** An origin that counts the requests it is sent, as its access log would. */
async function countingOrigin(): Promise<{ port: number; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sends one GET through the proxy and waits `ms` (the answer, if any, is not awaited). */
async function sendThrough(port: number, ms: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined);
  socket.write('GET / HTTP/1.1\r\nHost: origin\r\n\r\n');
  await new Promise((resolve) => setTimeout(resolve, ms));
  return socket;
}

describe('blackhole', () => {
  test('both ways by default: the origin logs no request while it is on; one way when told', async () => {
    const origin = await countingOrigin();
    const sockets: net.Socket[] = [];
    const through = async (port: number, ms: number) => {
      const socket = await sendThrough(port, ms);
      sockets.push(socket);
      return socket;
    };
    try {
      for (const http of [false, true]) {
        const proxy = await startProxy({
          mappings: [parseMapping(`0=${http ? 'http' : 'tcp'}://127.0.0.1:${origin.port}`)],
          faults: [{ type: 'blackhole' }],
          http,
        });
        try {
          const before = origin.requests();
          await through(proxy.ports[0]!, 600);
          assert.equal(origin.requests(), before, `no request reached the origin (${http ? 'http' : 'tcp'} mapping)`);
          // Off: what was held flows on, intact.
          await proxy.setFaults([]);
          const deadline = Date.now() + 10_000;
          while (origin.requests() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          assert.equal(origin.requests(), before + 1, 'the held request arrives once the blackhole ends');
          // direction ingress (the answers only), on a connection already open: its request reaches the origin and
          // the answer is held.
          const open = await through(proxy.ports[0]!, 0);
          const answered = new Promise<void>((resolve) => open.once('data', () => resolve()));
          await answered;
          await proxy.setFaults([{ type: 'blackhole', direction: 'ingress' }]);
          let answers = 0;
          open.on('data', () => answers++);
          open.write('GET / HTTP/1.1\r\nHost: origin\r\n\r\n');
          const until = Date.now() + 10_000;
          while (origin.requests() === before + 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
          assert.equal(origin.requests(), before + 3, 'direction ingress holds only the answers');
          assert.equal(answers, 0, 'the answer is held');
          // A connection opened while it is on is not dialled, as a SYN-ACK tc drops never completes a handshake.
          await through(proxy.ports[0]!, 300);
          assert.equal(origin.requests(), before + 3, 'a new connection does not reach the origin');
        } finally {
          for (const socket of sockets.splice(0)) socket.destroy();
          await proxy.stop();
        }
      }
    } finally {
      // A failed assertion must not leave the file's process alive on an open server.
      await origin.close();
    }
  });

  test('every export keeps that meaning or refuses', async () => {
    const base = { url: 'http://127.0.0.1:8000/', duration: '20s', rps: 5 };
    const both = await scenarioFromArguments('blackhole', base, limits);
    const fis = JSON.parse((await exportScenario(both, 'fis')).document);
    const action = Object.values(
      fis.actions as Record<string, { actionId: string; parameters: Record<string, string> }>,
    )
      .map((a) => a)
      .find((a) => a.actionId.endsWith('blackhole-port'))!;
    assert.equal(action.parameters.trafficType, 'ingress', 'the port drops what arrives: nothing reaches the service');
    const mesh = parse((await exportScenario(both, 'chaos-mesh')).document);
    assert.deepEqual([mesh.spec.action, mesh.spec.direction], ['partition', 'both']);
    // The answers only: Chaos Mesh partitions that way ("to": the selected pods' packets out); FIS cannot.
    const answers = await scenarioFromArguments('blackhole', { ...base, direction: 'ingress' }, limits);
    assert.equal(parse((await exportScenario(answers, 'chaos-mesh')).document).spec.direction, 'to');
    await assert.rejects(
      exportScenario(answers, 'fis'),
      /direction: cannot export to fis: the blackhole holds only the answers/,
    );
  });
});

describe('an export never changes the protocol', () => {
  const redis = (fault: Record<string, unknown>) =>
    readExperiment(
      {
        title: 'cache slow',
        load: { url: 'http://127.0.0.1:8000/', rps: 10, duration: '20s' },
        proxies: ['0=redis://127.0.0.1:6379#cache'],
        method: [{ name: 'cache', at: '5s', for: '5s', fault: { target: 'cache', ...fault } }],
        expect: ['errors < 5%'],
      },
      { limits, policy },
    );

  test(
    'a RESP latency is a NetworkChaos delay, never an HTTPChaos; a ' + "RESP error is refused without HTTP's forward",
    async () => {
      const slow = await exportExperiment(await redis({ type: 'latency', delayMs: 50 }), 'chaos-mesh');
      const workflow = parse(slow.document) as { spec: { templates: Array<Record<string, unknown>> } };
      const kinds = workflow.spec.templates.map((t) => t.templateType);
      assert.ok(!kinds.includes('HTTPChaos'), kinds.join(', '));
      const chaos = workflow.spec.templates.find((t) => t.templateType === 'NetworkChaos')!;
      assert.deepEqual(chaos.networkChaos, {
        selector: { namespaces: ['default'], labelSelectors: { app: 'REPLACE_WITH_CACHE_LABEL' } },
        mode: 'all',
        action: 'delay',
        direction: 'to',
        delay: { latency: '50ms', jitter: '0ms', correlation: '0' },
      });
      assert.equal(chaos.deadline, '5s');
      const refused = exportExperiment(await redis({ type: 'error' }), 'chaos-mesh', { partial: true });
      await assert.rejects(refused, (error: Error) => {
        assert.match(
          error.message,
          /error on a Redis mapping \(RESP\) answers in the dependency's place per command; HTTPChaos acts on HTTP only/,
        );
        assert.doesNotMatch(error.message, /forward/);
        return true;
      });
      // FIS keeps the network meaning too: a latency action, not "an HTTP fault".
      const fis = JSON.parse((await exportExperiment(await redis({ type: 'latency', delayMs: 50 }), 'fis')).document);
      const action = (fis as { actions: Record<string, { actionId: string; parameters: Record<string, string> }> })
        .actions['step-1']!;
      assert.equal(action.actionId, 'aws:ecs:task-network-latency');
      assert.equal(action.parameters.delayMilliseconds, '50');
      await assert.rejects(
        exportExperiment(await redis({ type: 'timeout' }), 'fis'),
        /timeout on a Redis mapping \(RESP\) holds each command .*FIS has no HTTP action/,
      );
    },
  );

  test('k6 keeps the operator an SLO was written with', async () => {
    const experiment = await readExperiment(
      {
        title: 't',
        load: { url: 'http://127.0.0.1:8000/', rps: 10, duration: '20s' },
        steady_state: ['p95 < 200ms', 'p(99) <= 500', '99% @ 2s', 'errors < 1%'],
        method: [{ at: '5s', for: '5s', fault: { type: 'latency', latency_ms: 10 } }],
      },
      { limits, policy },
    );
    const script = (await exportExperiment(experiment, 'k6')).document;
    const options = JSON.parse(/export const options = (\{[\s\S]*?\n\});/.exec(script)![1]!) as {
      thresholds: Record<string, string[]>;
    };
    assert.deepEqual(options.thresholds['http_req_duration{w0:in}'], ['p(95)<200', 'p(99)<=500', 'p(99)<=2000']);
    assert.deepEqual(options.thresholds['http_req_failed{w0:in}'], ['rate<0.01']);
  });
});
