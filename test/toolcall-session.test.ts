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
    await session.fromClient(
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } },
      (m) => sent.push(m),
      () => undefined,
    );
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
  const server = (m: JsonRpcMessage): void =>
    void session.fromServer(
      { jsonrpc: '2.0', id: m.id!, result: { content: [{ type: 'text', text: 'ok' }] } },
      () => undefined,
    );
  for (const at of [0, 50, 120, 400, 450]) {
    clock = at;
    await session.fromClient(
      { jsonrpc: '2.0', id: at, method: 'tools/call', params: { name: 'x', arguments: { at } } },
      server,
      () => undefined,
    );
  }
  assert.deepEqual(
    plane.records.map((r) => r.task),
    ['task-1', 'task-1', 'task-1', 'task-2', 'task-2'],
  );
  assert.equal(plane.slis().tcaf, 2.5);
});

test('a mutation that changes nothing the client receives is neither injected nor an incorrect call', async () => {
  const plane = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }] }));
  const session = plane.session();
  const answers = new Map<string | number, unknown>([
    // Nothing to cut: one text item of a JSON object without arrays, a structuredContent without arrays.
    [
      1,
      {
        content: [{ type: 'text', text: '{"value":"K","found":true}' }],
        structuredContent: { value: 'K', found: true },
      },
    ],
    // Something to cut: an array.
    [2, { content: [{ type: 'text', text: '{"items":[1,2,3,4]}' }] }],
  ]);
  const received: JsonRpcMessage[] = [];
  for (const id of [1, 2]) {
    await session.fromClient(
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: `t${id}`, arguments: {} } },
      (m) =>
        void session.fromServer(
          { jsonrpc: '2.0', id: m.id!, result: answers.get(m.id!) as Record<string, unknown> },
          () => undefined,
        ),
      (out) => received.push(out),
    );
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(received.find((m) => m.id === 1)!.result, answers.get(1));
  assert.deepEqual(received.find((m) => m.id === 2)!.result, { content: [{ type: 'text', text: '{"items":[1,2]}' }] });
  assert.deepEqual(
    plane.records.map((r) => [r.tool, r.fault, r.correct]),
    [
      ['t1', 'none', true],
      ['t2', 'partial_result', false],
    ],
  );
  assert.deepEqual(plane.slis().injected, { partial_result: 1 });
  session.close();
});

test(
  'a call answered by the proxy counts only the faults that acted: ' +
    'not the mutations it never reached, nor the errors that lost',
  async () => {
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
    await session.fromClient(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } },
      (m) => sent.push(m),
      (m) => received.push(m),
    );
    assert.equal(sent.length, 0, 'answered by the proxy');
    assert.deepEqual(received[0]!.result, { content: [{ type: 'text', text: 'injected error' }], isError: true });
    // A call that reaches the server gets the delay and the drift, which both act.
    const answer = { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } };
    await session.fromClient(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'y', arguments: {} } },
      (m) => void session.fromServer({ jsonrpc: '2.0', id: m.id!, result: answer }, () => undefined),
      () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(
      plane.records.map((r) => [r.tool, r.fault]),
      [
        ['x', 'latency+error_injection'],
        ['y', 'latency+schema_drift'],
      ],
    );
    assert.deepEqual(plane.slis().injected, { latency: 2, error_injection: 1, schema_drift: 1 });
    session.close();
  },
);

/** One call through a session whose server answers `result`; what the client received. */
async function callThrough(plane: ToolPlane, result: Record<string, unknown>): Promise<JsonRpcMessage> {
  const session = plane.session();
  const received: JsonRpcMessage[] = [];
  await session.fromClient(
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: {} } },
    (m) => void session.fromServer({ jsonrpc: '2.0', id: m.id!, result }, () => undefined),
    (out) => received.push(out),
  );
  await new Promise((resolve) => setImmediate(resolve));
  session.close();
  return received[0]!;
}

test('a mutation is judged by meaning: pretty-printed JSON re-serialised compact is not a change', async () => {
  // server-memory's read_graph of an empty graph: pretty-printed text, structuredContent with empty arrays.
  const emptyGraph = {
    content: [{ type: 'text', text: '{\n  "entities": [],\n  "relations": []\n}' }],
    structuredContent: { entities: [], relations: [] },
  };
  const unchanged = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }] }));
  const same = await callThrough(unchanged, emptyGraph);
  assert.deepEqual(same.result, emptyGraph, 'the exact text the server sent');
  assert.deepEqual(
    unchanged.records.map((r) => [r.fault, r.correct]),
    [['none', true]],
  );
  assert.equal(unchanged.slis().tcsr, 1);
  assert.deepEqual(unchanged.slis().injected, {});
  // A change that keeps the layout: the cut text stays pretty-printed, with the server's indentation.
  const plane = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }] }));
  const graph = { entities: [{ name: 'a' }, { name: 'b' }], relations: [] };
  const answer = await callThrough(plane, {
    content: [{ type: 'text', text: JSON.stringify(graph, null, 2) + '\n' }],
    structuredContent: graph,
  });
  const result = answer.result as { content: Array<{ text: string }>; structuredContent: unknown };
  assert.deepEqual(result.structuredContent, { entities: [{ name: 'a' }], relations: [] });
  assert.equal(result.content[0]!.text, JSON.stringify({ entities: [{ name: 'a' }], relations: [] }, null, 2) + '\n');
  assert.deepEqual(
    plane.records.map((r) => [r.fault, r.correct]),
    [['partial_result', false]],
  );
});

test(
  'partial_result cuts structuredContent and the text the same way: ' + 'a client reading either sees the fault',
  async () => {
    const file =
      Array.from({ length: 10 }, (_, i) => `line ${i + 1} of a file read by server-filesystem`).join('\n') + '\n';
    const plane = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }] }));
    const answer = await callThrough(plane, {
      content: [{ type: 'text', text: file }],
      structuredContent: { content: file },
    });
    const result = answer.result as { content: Array<{ text: string }>; structuredContent: { content: string } };
    const kept = file.split('\n').slice(0, 5).join('\n') + '\n';
    assert.equal(result.structuredContent.content, kept, 'cut after a line break, within the first half');
    assert.equal(result.content[0]!.text, kept, 'the text mirrors the structure');
    // Text mirroring one member of the structure (server-memory's create_entities) is cut alike.
    const entities = [
      { name: 'a', observations: ['x'] },
      { name: 'b', observations: ['y'] },
      { name: 'c', observations: [] },
      { name: 'd', observations: [] },
    ];
    const plane2 = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }] }));
    const answer2 = await callThrough(plane2, {
      content: [{ type: 'text', text: JSON.stringify(entities, null, 2) }],
      structuredContent: { entities },
    });
    const result2 = answer2.result as { content: Array<{ text: string }>; structuredContent: { entities: unknown[] } };
    assert.deepEqual(
      result2.structuredContent.entities,
      entities
        .slice(0, 2)
        .map((e) => ({ ...e, observations: e.observations.slice(0, Math.floor(e.observations.length / 2)) })),
    );
    assert.deepEqual(JSON.parse(result2.content[0]!.text), result2.structuredContent.entities);
    // A short answer with nothing long to cut is still cut (its strings), the same in both places.
    const plane3 = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }] }));
    const answer3 = await callThrough(plane3, {
      content: [{ type: 'text', text: '[FILE] a.txt' }],
      structuredContent: { content: '[FILE] a.txt' },
    });
    assert.deepEqual(answer3.result, {
      content: [{ type: 'text', text: '[FILE]' }],
      structuredContent: { content: '[FILE]' },
    });
  },
);

test(
  'head_of_line_blocking: a call waits for the slot the call before ' +
    'it holds, in arrival order; its wait is journalled and in the ' +
    'SLIs',
  async () => {
    let clock = 0;
    const plane = new ToolPlane(validatePlan({ faults: [{ type: 'head_of_line_blocking', slots: 1 }] }), {
      now: () => clock,
    });
    const session = plane.session();
    const atServer: JsonRpcMessage[] = [];
    const received: JsonRpcMessage[] = [];
    const call = (id: number, name: string): Promise<void> =>
      session.fromClient(
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } },
        (m) => atServer.push(m),
        (m) => received.push(m),
      );
    const answer = (id: number): Promise<void> =>
      session.fromServer({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `done ${id}` }] } }, (m) =>
        received.push(m),
      );
    await call(1, 'slow');
    const second = call(2, 'fast');
    const third = call(3, 'fast');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      atServer.map((m) => m.id),
      [1],
      'the others wait behind the slow call',
    );
    clock = 250;
    await answer(1);
    await second;
    assert.deepEqual(
      atServer.map((m) => m.id),
      [1, 2],
      'the slot goes to the next in arrival order',
    );
    // The third is cancelled while it waits: it leaves the queue and is recorded unanswered.
    await session.fromClient(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } },
      (m) => atServer.push(m),
      () => undefined,
    );
    await third;
    clock = 300;
    await answer(2);
    assert.deepEqual(
      atServer.map((m) => m.id ?? m.method),
      [1, 2, 'notifications/cancelled'],
    );
    assert.deepEqual(
      plane.records.map((r) => [r.tool, r.fault, r.outcome, r.queued_ms, r.latency_ms, r.upstream_ms]),
      [
        ['slow', 'none', 'ok', 0, 250, 250],
        ['fast', 'head_of_line_blocking', 'no_answer', 250, 250, null],
        ['fast', 'head_of_line_blocking', 'ok', 250, 300, 50],
      ],
    );
    assert.deepEqual(plane.slis().queueing, { queued_attempts: 2, mean_ms: 250, p95_ms: 250, max_ms: 250 });
    // The slot is free again: a new call goes at once.
    await call(4, 'fast');
    assert.equal(atServer[atServer.length - 1]!.id, 4);
    session.close();
  },
);

test(
  'a message beyond the bounds is never parsed: fail-safe relays it ' +
    'as it came, strict answers its request with an error',
  async () => {
    const deep = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"v":${'['.repeat(6000)}${']'.repeat(6000)}}}}`;
    for (const strict of [false, true]) {
      const plane = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }, { type: 'schema_drift' }] }), {
        strict,
      });
      const session = plane.session();
      const toClient: JsonRpcMessage[] = [];
      const raw: string[] = [];
      await session.fromClientText(
        JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't', arguments: {} } }),
        () => undefined,
        (m) => toClient.push(m),
        () => undefined,
      );
      await session.fromServerText(
        deep,
        (m) => toClient.push(m),
        (text) => raw.push(text),
      );
      if (strict) {
        assert.deepEqual(raw, []);
        assert.equal(toClient[0]!.id, 7);
        assert.match(
          toClient[0]!.error!.message,
          /the server's answer could not be read: JSON nested deeper than 512 levels/,
        );
        assert.deepEqual(
          plane.records.map((r) => r.outcome),
          ['jsonrpc_error'],
        );
      } else {
        assert.deepEqual(raw, [deep], 'the exact text, once');
        assert.deepEqual(toClient, []);
        assert.deepEqual(
          plane.records.map((r) => [r.outcome, r.responded, r.note]),
          [['unread', true, 'answer relayed unread: JSON nested deeper than 512 levels']],
        );
      }
      assert.equal(plane.internalErrors, 1);
      assert.equal(session.pendingCount, 0);
      session.close();
    }
    // From the client: fail-safe passes it to the server unread; strict answers it here.
    const plane = new ToolPlane(validatePlan({}), { strict: true, maxMessageChars: 100 });
    const session = plane.session();
    const answers: JsonRpcMessage[] = [];
    await session.fromClientText(
      `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"t","arguments":{"x":"${'y'.repeat(200)}"}}}`,
      () => assert.fail('not forwarded'),
      (m) => answers.push(m),
      () => assert.fail('not forwarded'),
    );
    assert.equal(answers[0]!.id, 'big');
    assert.match(answers[0]!.error!.message, /a message of \d+ characters, above the 100 accepted/);
  },
);

test('peekId finds the top-level id without parsing, however deep the rest', async () => {
  const { peekId, createIdScanner } = await import('../src/jsonrpc/peek-id.js');
  const deep = '['.repeat(10_000) + ']'.repeat(10_000);
  assert.equal(peekId(`{"result":{"id":1,"x":${deep}},"jsonrpc":"2.0","id":42}`), 42);
  assert.equal(peekId(`{"jsonrpc":"2.0","id":"a\\"b","result":${deep}}`), 'a"b');
  assert.equal(peekId('{"result":{"id":5}}'), undefined, "an id inside the result is not the message's");
  assert.equal(peekId('{"method":"x","params":{"s":"\\"id\\":3"}}'), undefined, 'nor one inside a string');
  assert.equal(peekId('{"id":null,"error":{}}'), null);
  assert.equal(peekId('[{"id":1}]'), undefined);
  const scanner = createIdScanner();
  for (const piece of ['{"res', 'ult":[1,', '2],"i', 'd":', '12', '3}']) scanner.feed(Buffer.from(piece));
  assert.equal(scanner.id, 123);
});

test("a result is checked against its tool's declared outputSchema; an invalid schema checks nothing", async () => {
  const plane = new ToolPlane(validatePlan({}));
  const session = plane.session();
  const listed: JsonRpcMessage[] = [];
  // The answer to a tracked request goes to the sink its request came with.
  const toClient = (m: JsonRpcMessage): number => listed.push(m);
  await session.fromClient({ jsonrpc: '2.0', id: 'l', method: 'tools/list' }, () => undefined, toClient);
  const count = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
  await session.fromServer(
    {
      jsonrpc: '2.0',
      id: 'l',
      result: {
        tools: [
          { name: 'count', inputSchema: { type: 'object' }, outputSchema: count },
          { name: 'odd', inputSchema: { type: 'object' }, outputSchema: { type: 'no such type' } },
          { name: 'plain', inputSchema: { type: 'object' } },
        ],
      },
    },
    () => undefined,
  );
  assert.equal((listed[0]!.result as { tools: unknown[] }).tools.length, 3, 'the list goes on whatever its schemas');
  let id = 0;
  const call = async (name: string, structuredContent: unknown): Promise<void> => {
    const at = ++id;
    await session.fromClient(
      { jsonrpc: '2.0', id: at, method: 'tools/call', params: { name, arguments: {} } },
      () => undefined,
      () => undefined,
    );
    await session.fromServer(
      { jsonrpc: '2.0', id: at, result: { content: [{ type: 'text', text: '{}' }], structuredContent } },
      () => undefined,
    );
  };
  await call('count', { n: 1 });
  await call('count', { n: 'one' });
  await call('odd', { n: 'one' });
  await call('plain', { anything: true });
  assert.deepEqual(
    plane.records.map((r) => [r.tool, r.schema_ok]),
    [
      ['count', true],
      ['count', false],
      ['odd', true],
      ['plain', true],
    ],
  );
});
