/**
 * The offline demo: an in-process fake MCP server and a scripted agent loop, driven through the
 * same PlaneSession (and so the same fault engine, mutations and SLI arithmetic) as the proxies.
 * No network, no key, deterministic for a seed.
 *
 * Each task fans out to `fanout` calls over five tools. Without resilience a call is made once.
 * With resilience: a retry budget (2 retries per call), graceful degradation (the last 2 calls of
 * a task are non-critical: their failure does not fail the task) and a per-tool circuit breaker
 * (opens when correct/total < 0.5 after ≥ 4 calls; while open every 5th call is let through as a
 * half-open probe, and a correct probe closes it and resets its counters).
 */
import { validatePlan, type Plan } from './plan.js';
import { ToolPlane, type JsonRpcMessage } from './session.js';
import type { Slis } from './metrics.js';

export interface DemoOptions {
  tasks: number;
  fanout: number;
  errorRate: number;
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
  predicted_blast_radius: number;
  runs: DemoRun[];
}

/** The fake server's tools and their baseline latencies (ms), as in mcp-chaos's simulator. */
export const FAKE_TOOLS: Record<string, number> = { get_metrics: 20, get_logs: 35, get_traces: 30, describe_service: 15, check_dependency: 25 };
const OUTPUT_SCHEMA = {
  type: 'object',
  properties: { service: { type: 'string' }, items: { type: 'array', items: { type: 'number' } } },
  required: ['service', 'items'],
};

export const DEMO_LIMITS = { tasks: 100_000, fanout: 100, callsTotal: 2_000_000 };

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const plan =
    options.plan ??
    validatePlan({
      seed: options.seed,
      faults: [options.correlated ? { type: 'burst_error', rate: options.errorRate, burst_len: 8 } : { type: 'error_injection', rate: options.errorRate }],
      deadline_ms: 1000,
    });
  const runs: DemoRun[] = [];
  for (const resilience of [false, true]) runs.push(await simulate(plan, options, resilience));
  const e = options.errorRate;
  const { plan: _plan, ...rest } = options;
  return { options: rest, predicted_blast_radius: round(1 - Math.pow(1 - e, options.fanout)), runs };
}

async function simulate(plan: Plan, options: DemoOptions, resilience: boolean): Promise<DemoRun> {
  let clock = 0;
  const plane = new ToolPlane(plan, { now: () => clock });
  const session = plane.session();
  const names = Object.keys(FAKE_TOOLS);
  let id = 0;
  const fakeServer = (message: JsonRpcMessage): void => {
    if (message.method === 'tools/list') {
      void session.fromServer({ jsonrpc: '2.0', id: message.id!, result: { tools: names.map((name) => ({ name, inputSchema: { type: 'object' }, outputSchema: OUTPUT_SCHEMA })) } }, toClient);
      return;
    }
    const tool = String(message.params?.name);
    clock += FAKE_TOOLS[tool] ?? 10; // the simulated upstream latency
    const structured = { service: 'checkout', items: [1, 2, 3, 4] };
    void session.fromServer({ jsonrpc: '2.0', id: message.id!, result: { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured } }, toClient);
  };
  const toClient = (): void => undefined; // the agent reads outcomes from the journal
  await session.fromClient({ jsonrpc: '2.0', id: ++id, method: 'tools/list', params: {} }, fakeServer, toClient);

  const breaker = new Map<string, { total: number; correct: number; open: boolean; skipped: number }>();
  let skipped = 0;
  const critical = new Map<string, boolean>();
  for (let t = 0; t < options.tasks; t++) {
    const task = `task-${t + 1}`;
    let taskOk = true;
    for (let c = 0; c < options.fanout; c++) {
      const tool = names[c % names.length]!;
      const isCritical = !resilience || c < options.fanout - 2;
      const state = breaker.get(tool) ?? { total: 0, correct: 0, open: false, skipped: 0 };
      breaker.set(tool, state);
      if (resilience && state.open) {
        state.skipped += 1;
        if (state.skipped % 5 !== 0) {
          skipped += 1;
          if (isCritical) taskOk = false;
          continue;
        }
      }
      let ok = false;
      for (let attempt = 0; attempt <= (resilience ? 2 : 0) && !ok; attempt++) {
        const before = plane.records.length;
        await session.fromClient({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: tool, arguments: { call: c }, _meta: { task_id: task } } }, fakeServer, toClient);
        ok = plane.records.length > before && plane.records[plane.records.length - 1]!.success;
        state.total += 1;
        if (ok) state.correct += 1;
        if (state.open && ok) Object.assign(state, { open: false, total: 0, correct: 0 });
        else if (resilience && state.total >= 4 && state.correct / state.total < 0.5) state.open = true;
        if (state.open) break;
      }
      if (!ok && isCritical) taskOk = false;
    }
    critical.set(task, taskOk);
  }
  session.close();
  const slis = plane.slis();
  // Blast radius counts critical failures only (graceful degradation tolerates the others).
  const failed = [...critical.values()].filter((ok) => !ok).length;
  slis.blast_radius = round(options.tasks === 0 ? 0 : failed / options.tasks);
  return { resilience, slis, skipped };
}

export function renderDemo(result: DemoResult): string {
  const o = result.options;
  const lines = [
    `mcp-chaos demo: ${o.tasks} tasks × fanout ${o.fanout}, per-call error rate ${o.errorRate}${o.correlated ? ' (correlated bursts)' : ''}, seed ${o.seed}`,
  ];
  for (const run of result.runs) {
    const s = run.slis;
    lines.push(
      `${run.resilience ? 'with resilience' : 'no resilience  '} TCAF=${s.tcaf.toFixed(1)} TCSR=${s.tcsr.toFixed(2)} ETA=${s.eta.toFixed(2)} blast_radius=${s.blast_radius.toFixed(2)}` +
        (run.resilience ? ` attempts/call=${s.amplification.toFixed(2)} breaker_skips=${run.skipped}` : ''),
    );
  }
  lines.push(`predicted blast radius (independent failures) 1 − (1 − e)^TCAF = ${result.predicted_blast_radius.toFixed(3)}`);
  return lines.join('\n') + '\n';
}

function round(x: number): number {
  return Math.round(x * 10000) / 10000;
}
