/**
 * The fault engine, written once and driven by both proxies, the simulator and the MCP tool.
 *
 *   tools/call ──▶ decide(tool, task) ──▶ Decision { delay, shortCircuit?, mutations[] }
 *                                            │            │                 │
 *                                  real sleep│   answered here    applied to the upstream result
 *                                            ▼            ▼                 ▼
 *   tools/list ──▶ listView(tools) — drop_tool and list_changed hide/add tools
 *
 * Faults are evaluated in plan order against one seeded random source per plan, so the same plan
 * and the same traffic give the same injections. Latency adds up; the first short-circuit fault
 * (an error, a hang) wins; result mutations compose in order. Per-fault state (matching-call
 * counts, burst and episode Markov chains, head-of-line slots) lives here, apart from the plan's
 * settings. head_of_line_blocking draws nothing: it only names the slots a call must pass
 * (Decision.gates), which the session holds from the call's arrival to its answer.
 */
import { createRandom, type Random } from '../kernel/random.js';
import { matchesTools, type ErrorShape, type FaultType, type Plan, type PlanFault } from './plan.js';
import { SlotPool } from './slots.js';

export type MutationKind =
  | 'schema_drift'
  | 'partial_result'
  | 'empty_result'
  | 'corrupt'
  | 'prompt_injection'
  | 'oversized';
export interface Mutation {
  kind: MutationKind;
  fault: PlanFault;
}

export interface ShortCircuit {
  /** error: answer with an error now (after the delay); hang: no answer until cancelled or hang_ms. */
  kind: 'error' | 'hang';
  tag: FaultType;
  shape: ErrorShape;
  code: number;
  message: string;
  hangMs: number;
}

export interface Decision {
  tags: FaultType[];
  delayMs: number;
  shortCircuit?: ShortCircuit;
  mutations: Mutation[];
  /** list_changed fired on this call: the client must be sent notifications/tools/list_changed. */
  listChanged: boolean;
  /** head_of_line_blocking slots the call passes through, in plan order (a call that waits is tagged then). */
  gates: SlotPool[];
}

export interface EngineOptions {
  /** The random source; default: faultline's own seeded stream for the plan's seed. */
  random?: Random;
}

interface FaultState {
  matching: number;
  inBurst: boolean | undefined;
  episodeTask: string | undefined;
  inEpisode: boolean | undefined;
  fired: boolean;
}

export class FaultEngine {
  readonly random: Random;
  private readonly state: FaultState[];
  private readonly hidden = new Set<string>();
  private readonly added = new Set<string>();
  private knownTools: string[] = [];
  /** One slot pool per head_of_line_blocking fault, by the fault's index. */
  private readonly pools = new Map<number, SlotPool>();

  constructor(
    readonly plan: Plan,
    options: EngineOptions = {},
  ) {
    this.random =
      options.random ??
      createRandom(plan.seed, 'toolplane' /* the stream's label; changing it changes every seeded run */);
    this.state = plan.faults.map(() => ({
      matching: 0,
      inBurst: undefined,
      episodeTask: undefined,
      inEpisode: undefined,
      fired: false,
    }));
    plan.faults.forEach((fault, index) => {
      if (fault.type === 'head_of_line_blocking') this.pools.set(index, new SlotPool(fault.slots));
    });
  }

  /** Decides what happens to one tools/call of `tool` within task `task`. */
  decide(tool: string, task: string): Decision {
    const decision: Decision = { tags: [], delayMs: 0, mutations: [], listChanged: false, gates: [] };
    if (this.hidden.has(tool) || this.added.has(tool)) {
      decision.tags.push('list_changed');
      decision.shortCircuit = unknownTool(tool, 'list_changed', 'is_error', -32602);
    }
    this.plan.faults.forEach((fault, index) => {
      const pool = this.pools.get(index);
      if (pool) {
        if (targets(fault, tool)) decision.gates.push(pool);
        return;
      }
      const state = this.state[index]!;
      // list_changed's `tools` are the tools it hides; every call counts towards its trigger.
      if (fault.type !== 'list_changed' && !targets(fault, tool)) return;
      state.matching += 1;
      const eligible =
        state.matching > fault.after_calls && (state.matching - fault.after_calls - 1) % fault.every === 0;
      if (!this.fires(fault, state, eligible, task)) return;
      decision.tags.push(fault.type);
      this.apply(fault, state, tool, decision);
    });
    if (decision.shortCircuit) onlyWhatActed(decision, decision.shortCircuit);
    return decision;
  }

  private fires(fault: PlanFault, state: FaultState, eligible: boolean, task: string): boolean {
    switch (fault.type) {
      case 'drop_tool':
        return true; // static: the tool is gone for good
      case 'burst_error': {
        // Two-state Markov chain with stationary failure fraction = rate: leave a burst with
        // probability 1/L, enter with r / (L·(1 − r)); advances on every matching call.
        const r = fault.probability;
        const L = fault.burst_len;
        if (state.inBurst === undefined) state.inBurst = this.random.chance(r);
        else
          state.inBurst = state.inBurst
            ? !this.random.chance(1 / L)
            : this.random.chance(r >= 1 ? 1 : r / (L * (1 - r)));
        return eligible && state.inBurst;
      }
      case 'server_degradation': {
        // Episodes advance on task boundaries only: retries within a task see the same outage.
        if (state.episodeTask !== task) {
          state.episodeTask = task;
          const r = fault.episode_rate;
          const L = fault.episode_len;
          if (state.inEpisode === undefined) state.inEpisode = this.random.chance(r);
          else state.inEpisode = state.inEpisode ? !this.random.chance(1 / L) : this.random.chance(r / (L * (1 - r)));
        }
        return eligible && state.inEpisode === true;
      }
      case 'list_changed':
        if (state.fired || !eligible) return false;
        return this.random.chance(fault.probability);
      default:
        return eligible && this.random.chance(fault.probability);
    }
  }

  private apply(fault: PlanFault, state: FaultState, tool: string, d: Decision): void {
    const error = (message: string): void => {
      d.shortCircuit ??= {
        kind: 'error',
        tag: fault.type,
        shape: fault.error_shape,
        code: fault.code,
        message,
        hangMs: 0,
      };
    };
    switch (fault.type) {
      case 'latency':
        d.delayMs += fault.added_ms + (fault.jitter_ms > 0 ? this.random.uniform(0, fault.jitter_ms) : 0);
        return;
      case 'drop_tool':
        d.shortCircuit ??= unknownTool(tool, 'drop_tool', fault.error_shape, fault.code);
        return;
      case 'registry_inconsistency':
        return error(`Tool ${tool} is listed but could not be found (registry inconsistency)`);
      case 'error_injection':
        return error('injected error');
      case 'burst_error':
        return error('injected burst error');
      case 'server_degradation':
        return error(`server hosting '${tool}' degraded`);
      case 'rate_limit':
        return error(`Rate limit exceeded; retry after ${fault.retry_after_s}s`);
      case 'timeout':
        d.shortCircuit ??= {
          kind: 'hang',
          tag: 'timeout',
          shape: fault.error_shape,
          code: fault.code,
          message: `Tool ${tool} timed out after ${fault.hang_ms} ms`,
          hangMs: fault.hang_ms,
        };
        return;
      case 'list_changed':
        state.fired = true;
        d.listChanged = true;
        for (const name of this.knownTools)
          if (fault.tools.length > 0 && matchesTools(fault.tools, name)) this.hidden.add(name);
        if (fault.tools.length > 0 && this.knownTools.length === 0)
          for (const name of fault.tools) if (!/[*?]/.test(name)) this.hidden.add(name);
        for (const name of fault.add) this.added.add(name);
        return;
      default:
        d.mutations.push({ kind: fault.type as MutationKind, fault });
    }
  }

  /** What the client sees of the upstream's tools/list: dropped and hidden tools removed, added ones appended. */
  listView<T extends { name: string }>(tools: T[]): T[] {
    this.knownTools = tools.map((t) => t.name);
    const dropped = this.plan.faults.filter((f) => f.type === 'drop_tool');
    const visible = tools.filter((t) => !this.hidden.has(t.name) && !dropped.some((f) => targets(f, t.name)));
    for (const name of this.added) {
      if (!visible.some((t) => t.name === name))
        visible.push({
          name,
          description: `${name} (added mid-session)`,
          inputSchema: { type: 'object' },
        } as unknown as T);
    }
    return visible;
  }
}

/**
 * A call answered here never reaches the server, so the result mutations that fired never act,
 * and of the faults that would answer only the first does (the first that answers wins): neither
 * is counted as injected. What the client does get stays: the delays, the one answer, a
 * list_changed notice.
 */
function onlyWhatActed(decision: Decision, answered: ShortCircuit): void {
  let answerTagged = false;
  decision.tags = decision.tags.filter((tag) => {
    if (tag === 'latency' || (tag === 'list_changed' && decision.listChanged && tag !== answered.tag)) return true;
    if (tag !== answered.tag || answerTagged) return false;
    answerTagged = true;
    return true;
  });
  decision.mutations = [];
}

/**
 * Whether a fault targets a tool. As in mcp-chaos, drop_tool and registry_inconsistency name
 * their tools: an empty list targets none (for every other fault it targets every tool).
 */
function targets(fault: PlanFault, tool: string): boolean {
  if (fault.tools.length === 0 && (fault.type === 'drop_tool' || fault.type === 'registry_inconsistency')) return false;
  return matchesTools(fault.tools, tool);
}

function unknownTool(tool: string, tag: FaultType, shape: ErrorShape, code: number): ShortCircuit {
  // The SDK's v1 server answers an unknown tool with an isError result saying "Tool X not found";
  // the protocol's own example is JSON-RPC -32602 "Unknown tool: X".
  const message = shape === 'jsonrpc' ? `Unknown tool: ${tool}` : `Tool ${tool} not found`;
  return { kind: 'error', tag, shape, code, message, hangMs: 0 };
}
