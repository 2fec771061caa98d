/** PlaneSession unit checks: bounded pending state, task grouping by idle gap. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolPlane, type JsonRpcMessage } from '../src/toolcall/session.js';
import { validatePlan } from '../src/toolcall/plan.js';

test('pending requests are bounded: the oldest is evicted and counted', async () => {
  const plane = new ToolPlane(validatePlan({}), { maxPending: 2 });
  const session = plane.session();
  const sent: JsonRpcMessage[] = [];
  for (let id = 1; id <= 5; id++) {
    await session.fromClient({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } }, (m) => sent.push(m), () => undefined);
  }
  assert.equal(sent.length, 5);
  assert.equal(session.pendingCount, 2);
  assert.equal(plane.evicted, 3);
  // An answer to an evicted request still reaches the client, unchanged.
  const got: JsonRpcMessage[] = [];
  await session.fromServer({ jsonrpc: '2.0', id: 1, result: { content: [] } }, (m) => got.push(m));
  assert.equal(got.length, 1);
  session.close();
});

test('calls without a task id are grouped by the idle gap', async () => {
  let clock = 0;
  const plane = new ToolPlane(validatePlan({ task_idle_ms: 100 }), { now: () => clock });
  const session = plane.session();
  const server = (m: JsonRpcMessage): void => void session.fromServer({ jsonrpc: '2.0', id: m.id!, result: { content: [{ type: 'text', text: 'ok' }] } }, () => undefined);
  for (const at of [0, 50, 120, 400, 450]) {
    clock = at;
    await session.fromClient({ jsonrpc: '2.0', id: at, method: 'tools/call', params: { name: 'x', arguments: { at } } }, server, () => undefined);
  }
  assert.deepEqual(plane.records.map((r) => r.task), ['task-1', 'task-1', 'task-1', 'task-2', 'task-2']);
  assert.equal(plane.slis().tcaf, 2.5);
});

test('a mutation that changes nothing the client receives is neither injected nor an incorrect call', async () => {
  const plane = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }] }));
  const session = plane.session();
  const answers = new Map<string | number, unknown>([
    // Nothing to cut: one text item of a JSON object without arrays, a structuredContent without arrays.
    [1, { content: [{ type: 'text', text: '{"value":"K","found":true}' }], structuredContent: { value: 'K', found: true } }],
    // Something to cut: an array.
    [2, { content: [{ type: 'text', text: '{"items":[1,2,3,4]}' }] }],
  ]);
  const received: JsonRpcMessage[] = [];
  for (const id of [1, 2]) {
    await session.fromClient(
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: `t${id}`, arguments: {} } },
      (m) => void session.fromServer({ jsonrpc: '2.0', id: m.id!, result: answers.get(m.id!) as Record<string, unknown> }, () => undefined),
      (out) => received.push(out),
    );
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(received.find((m) => m.id === 1)!.result, answers.get(1));
  assert.deepEqual(received.find((m) => m.id === 2)!.result, { content: [{ type: 'text', text: '{"items":[1,2]}' }] });
  assert.deepEqual(plane.records.map((r) => [r.tool, r.fault, r.correct]), [['t1', 'none', true], ['t2', 'partial_result', false]]);
  assert.deepEqual(plane.slis().injected, { partial_result: 1 });
  session.close();
});

test('a call answered by the proxy counts only the faults that acted: not the mutations it never reached, nor the errors that lost', async () => {
  const plane = new ToolPlane(
    validatePlan({
      faults: [
        { type: 'latency', added_ms: 1 },
        { type: 'schema_drift' },
        { type: 'error_injection', rate: 1, tools: ['x'] },
        { type: 'rate_limit', tools: ['x'] },
      ],
    }),
  );
  const session = plane.session();
  const sent: JsonRpcMessage[] = [];
  const received: JsonRpcMessage[] = [];
  await session.fromClient({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } }, (m) => sent.push(m), (m) => received.push(m));
  assert.equal(sent.length, 0, 'answered by the proxy');
  assert.deepEqual(received[0]!.result, { content: [{ type: 'text', text: 'injected error' }], isError: true });
  // A call that reaches the server gets the delay and the drift, which both act.
  const answer = { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } };
  await session.fromClient({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'y', arguments: {} } }, (m) => void session.fromServer({ jsonrpc: '2.0', id: m.id!, result: answer }, () => undefined), () => undefined);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(plane.records.map((r) => [r.tool, r.fault]), [['x', 'latency+error_injection'], ['y', 'latency+schema_drift']]);
  assert.deepEqual(plane.slis().injected, { latency: 2, error_injection: 1, schema_drift: 1 });
  session.close();
});
