/** PlaneSession unit checks: bounded pending state, task grouping by idle gap. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolPlane, type JsonRpcMessage } from '../src/toolplane/session.js';
import { validatePlan } from '../src/toolplane/plan.js';

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
