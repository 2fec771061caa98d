/**
 * The offline demo: an in-process fake MCP server and a scripted agent loop, driven through the
 * same PlaneSession (and so the same fault engine, mutations and SLI arithmetic) as the proxies.
 * No network, no key, deterministic for a seed.
 *
 * It reproduces mcp-chaos's simulator call for call: the fault decisions come from Python's
 * `random.Random(seed)` stream (python-random.ts), one draw per attempt in the same order, so the
 * defaults (200 tasks, fanout 8, e = 0.02, seed 42) print mcp-chaos's published table. Each task
 * fans out to `fanout` calls over five tools, in turn. Without resilience a call is made once.
 * With resilience: a retry budget (2 retries per call), graceful degradation (the last 2 calls of
 * a task are non-critical: their failure does not fail the task) and a per-tool circuit breaker
 * that watches logical calls (opens when correct/total < 0.5 after ≥ 4 of them). Unlike
 * mcp-chaos's default breaker, an open one lets every 5th call through as a half-open probe, and a
 * correct probe closes it, so a burst cannot lock a tool out for good.
 *
 * The injected errors are JSON-RPC errors (no answer), so they count against availability as
 * mcp-chaos counts them; answers a client cannot use (isError results, drifted or partial
 * results) count against correctness.
 */
import { validatePlan, type Plan } from './plan.js';
import { createPythonRandom } from './python-random.js';
import { ToolPlane, type JsonRpcMessage, type PlaneSession } from './session.js';
import type { Slis } from './metrics.js';

export interface DemoOptions {
  tasks: number;
  fanout: number;
  errorRate: number;
  /** An integer or a string, seeded as Python seeds random.Random. */
  seed: number | string;
  correlated: boolean;
  /** A plan to use instead of the error-rate plan. */
  plan?: Plan;
}

export interface DemoRun {
  resilience: boolean;
  slis: Slis;
  /** Calls skipped by an open circuit breaker. */
  skipped: number;
}

export interface DemoResult {
  options: Omit<DemoOptions, 'plan'>;
  /** 1 − (1 − e)^TCAF at the failure rate measured without resilience. */
  predicted_blast_radius: number;
  /** The same at the nominal (injected) rate, for comparison. */
  nominal_predicted_blast_radius: number;
  runs: DemoRun[];
}

/** The fake server's tools and their baseline latencies (ms), as in mcp-chaos's simulator. */
export const FAKE_TOOLS: Record<string, number> = {
  get_metrics: 20,
  get_logs: 35,
  get_traces: 30,
  describe_service: 15,
  check_dependency: 25,
};
const OUTPUT_SCHEMA = {
  type: 'object',
  properties: { service: { type: 'string' }, items: { type: 'array', items: { type: 'number' } } },
  required: ['service', 'items'],
};

export const DEMO_LIMITS = { tasks: 100_000, fanout: 100, callsTotal: 2_000_000 };

/** The last calls of a task that graceful degradation treats as non-critical. */
const NON_CRITICAL_TAIL = 2;
const RETRIES = 2;
const PROBE_EVERY = 5;

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const plan =
    options.plan ??
    validatePlan({
      seed: options.seed,
      faults: [
        options.correlated
          ? { type: 'burst_error', rate: options.errorRate, burst_len: 8, error_shape: 'jsonrpc' }
          : { type: 'error_injection', rate: options.errorRate, error_shape: 'jsonrpc' },
      ],
      deadline_ms: 1000,
    });
  const runs: DemoRun[] = [];
  for (const resilience of [false, true]) runs.push(await simulate(plan, options, resilience));
  const { plan: _plan, ...rest } = options;
  const plain = runs[0]!.slis;
  return {
    options: rest,
    predicted_blast_radius: plain.predicted_blast_radius,
    nominal_predicted_blast_radius: round(1 - Math.pow(1 - options.errorRate, options.fanout)),
    runs,
  };
}

/** A per-tool circuit breaker over logical calls, with half-open probes. */
class Breaker {
  private total = 0;
  private correct = 0;
  private open = false;
  private skips = 0;

  /** Whether the next call may go: always when closed; every PROBE_EVERY-th skipped call when open. */
  admits(): boolean {
    if (!this.open) return true;
    this.skips += 1;
    if (this.skips < PROBE_EVERY) return false;
    this.skips = 0;
    return true;
  }

  observe(correct: boolean): void {
    if (this.open) {
      if (correct) Object.assign(this, { open: false, total: 0, correct: 0 }); // a good probe closes it
      return;
    }
    this.total += 1;
    if (correct) this.correct += 1;
    if (this.total >= 4 && this.correct / this.total < 0.5) this.open = true;
  }
}

/** The in-process fake server behind the session: tools/list with output schemas, each call answered after its baseline
 * latency. */
function fakeServer(session: PlaneSession, advance: (ms: number) => void): (message: JsonRpcMessage) => void {
  const names = Object.keys(FAKE_TOOLS);
  const toClient = (): void => undefined; // the agent reads outcomes from the journal
  return (message) => {
    if (message.method === 'tools/list') {
      void session.fromServer(
        {
          jsonrpc: '2.0',
          id: message.id!,
          result: {
            tools: names.map((name) => ({ name, inputSchema: { type: 'object' }, outputSchema: OUTPUT_SCHEMA })),
          },
        },
        toClient,
      );
      return;
    }
    advance(FAKE_TOOLS[String(message.params?.name)] ?? 10);
    const structured = { service: 'checkout', items: [1, 2, 3, 4] };
    void session.fromServer(
      {
        jsonrpc: '2.0',
        id: message.id!,
        result: { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured },
      },
      toClient,
    );
  };
}

async function simulate(plan: Plan, options: DemoOptions, resilience: boolean): Promise<DemoRun> {
  let clock = 0;
  const plane = new ToolPlane(plan, { now: () => clock, random: createPythonRandom(options.seed) });
  const session = plane.session();
  const server = fakeServer(session, (ms) => (clock += ms));
  const names = Object.keys(FAKE_TOOLS);
  let id = 0;
  const send = (message: Omit<JsonRpcMessage, 'jsonrpc' | 'id'>): Promise<void> =>
    session.fromClient({ jsonrpc: '2.0', id: ++id, ...message }, server, () => undefined);
  await send({ method: 'tools/list', params: {} });
  /** One logical call with its retries; whether it ended correct and in time. */
  const call = async (tool: string, task: string, index: number): Promise<boolean> => {
    for (let attempt = 0; attempt <= (resilience ? RETRIES : 0); attempt++) {
      const before = plane.records.length;
      await send({
        method: 'tools/call',
        params: { name: tool, arguments: { call: index }, _meta: { task_id: task } },
      });
      if (plane.records.length > before && plane.records[plane.records.length - 1]!.success) return true;
    }
    return false;
  };

  const breakers = new Map(names.map((name) => [name, new Breaker()]));
  let skipped = 0;
  let failedTasks = 0;
  for (let t = 0; t < options.tasks; t++) {
    const task = `task-${t + 1}`;
    let taskOk = true;
    for (let c = 0; c < options.fanout; c++) {
      const tool = names[c % names.length]!;
      const tolerated = resilience && c >= options.fanout - NON_CRITICAL_TAIL; // graceful degradation
      const breaker = breakers.get(tool)!;
      if (resilience && !breaker.admits()) {
        skipped += 1;
        if (!tolerated) taskOk = false;
        continue;
      }
      const ok = await call(tool, task, c);
      if (resilience) breaker.observe(ok);
      if (!ok && !tolerated) taskOk = false;
    }
    if (!taskOk) failedTasks += 1;
  }
  session.close();
  const slis = plane.slis();
  // Blast radius counts critical failures only (graceful degradation tolerates the others).
  slis.blast_radius = round(options.tasks === 0 ? 0 : failedTasks / options.tasks);
  return { resilience, slis, skipped };
}

/** The demo as text: mcp-chaos's two rows, exactly as it prints them, then what they are made of. */
export function renderDemo(result: DemoResult): string {
  const o = result.options;
  const fixed = (x: number, width: number, digits: number): string => x.toFixed(digits).padStart(width);
  const label = (run: DemoRun): string => (run.resilience ? 'with resilience' : 'no resilience').padEnd(16);
  const lines = [
    `mcp-chaos demo: ${o.tasks} tasks × fanout ${o.fanout}, injected ` +
      `per-call error rate ` +
      `${o.errorRate}${o.correlated ? ' (correlated bursts, mean length 8)' : ''}, ` +
      `seed ${o.seed}`,
    '',
  ];
  for (const run of result.runs) {
    const s = run.slis;
    lines.push(
      `${label(run)} TCAF=${s.tcaf.toFixed(1)}  TCSR=${fixed(s.tcsr, 5, 2)} ` +
        ` ETA=${fixed(s.eta, 5, 2)}  blast_radius=${fixed(s.blast_radius, 5, 2)}`,
    );
  }
  lines.push('');
  for (const run of result.runs) {
    const s = run.slis;
    lines.push(
      `${label(run)} A=${s.availability.toFixed(2)}  C=${s.correctness.toFixed(2)} ` +
        ` attempts/call=${s.amplification.toFixed(2)}  breaker_skips=${run.skipped}`,
    );
  }
  const plain = result.runs[0]!.slis;
  lines.push(
    '',
    'Availability A counts calls that got no answer: the injected ' +
      'errors here (JSON-RPC errors, as mcp-chaos counts them), hangs, ' +
      'calls',
    'nobody answered. Correctness C counts answers a client cannot ' +
      'use: isError results, drifted schemas, partial results. ETA = A ' +
      '× C.',
    `Predicted blast radius for independent failures, 1 − (1 − ` +
      `e)^TCAF at the measured e = ${plain.error_rate.toFixed(4)}: ${result.predicted_blast_radius.toFixed(3)}` +
      ` (at the nominal e = ${o.errorRate}: ${result.nominal_predicted_blast_radius.toFixed(3)})`,
  );
  return lines.join('\n') + '\n';
}

function round(x: number): number {
  return Math.round(x * 10000) / 10000;
}
