/**
 * The context one probe run gives its checks (checks/check.ts): the bounds, the sessions, what the
 * run has learnt about the server, tool calls that progress keeps alive, and the ledger.
 */
import type { ProgramPolicy } from '../consent/index.js';
import type { LookupFunction } from 'node:net';
import type { ValidateFunction } from 'ajv';
import type { CheckContext, ProbeSettings, SessionStart, TokenUse, ToolCall } from './checks/check.js';
import { ServerGone } from './checks/check.js';
import type { FindingInput, Ledger } from './findings.js';
import { handshake, openPeer, PeerStopped, PROBE_PROTOCOL_VERSION, type Peer, type Target } from './peer/index.js';
import { compileSchema, type ListedTool } from './schema-checks.js';

/** Pages of tools/list read at most. */
const LIST_PAGES = 20;

export class ProbeRun implements CheckContext {
  readonly peers: Peer[] = [];
  readonly timings = new Map<string, { longestMs: number; hung: boolean }>();
  readonly tokens = new Map<string, TokenUse>();
  start!: SessionStart;
  capabilities: Record<string, unknown> = {};
  tools: ListedTool[] = [];
  callable: ListedTool[] = [];
  private main: Peer | undefined;
  private readonly validators = new Map<string, ValidateFunction | undefined>();
  private readonly memos = new Map<string, Promise<unknown>>();
  private tokenCount = 0;

  constructor(
    readonly target: Target,
    readonly settings: ProbeSettings,
    private readonly ledger: Ledger,
    private readonly deadline: number,
    private readonly stop: AbortController,
    readonly lookup: LookupFunction | undefined,
    readonly progress: (message: string) => void,
    private readonly programs: ProgramPolicy,
  ) {}

  get stopSignal(): AbortSignal {
    return this.stop.signal;
  }

  remaining(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  bound(): number {
    return Math.max(100, Math.min(this.settings.callTimeoutMs, this.remaining()));
  }

  timeLeft(): boolean {
    return this.remaining() > 0 && !this.stop.signal.aborted;
  }

  throwIfStopped(): void {
    if (this.stop.signal.aborted) throw new PeerStopped(this.stop.signal.reason);
  }

  open(): Peer {
    this.throwIfStopped();
    const peer = openPeer(this.target, {
      stop: this.stop.signal,
      programs: this.programs,
      ...(this.lookup ? { lookup: this.lookup } : {}),
    });
    this.peers.push(peer);
    return peer;
  }

  async reopen(): Promise<Peer> {
    const peer = this.open();
    await handshake(peer, this.bound());
    return peer;
  }

  /** Makes `peer` the session checks share. */
  useSession(peer: Peer): void {
    this.main = peer;
  }

  current(): Peer | undefined {
    return this.main?.alive() ? this.main : undefined;
  }

  async session(): Promise<Peer> {
    if (!this.main || !this.main.alive()) this.main = await this.reopen();
    return this.main;
  }

  async recover(peer: Peer, after: string): Promise<void> {
    if (this.target.kind !== 'http') return;
    const again = this.open();
    const init = await handshake(again, this.bound(), PROBE_PROTOCOL_VERSION);
    if (!init.message?.result) throw new ServerGone(after);
    if (this.main === peer) this.main = again;
  }

  outputValidator(tool: ListedTool): ValidateFunction | undefined {
    if (tool.outputSchema === undefined) return undefined;
    if (!this.validators.has(tool.name)) this.validators.set(tool.name, compileSchema(tool.outputSchema).validate);
    return this.validators.get(tool.name);
  }

  newToken(tool: string): TokenUse & { token: string } {
    const token = `faultline-probe-${++this.tokenCount}`;
    const use: TokenUse = { tool, startedAt: Date.now() };
    this.tokens.set(token, use);
    return Object.assign(use, { token });
  }

  async callTool(peer: Peer, tool: ListedTool, args: unknown, label: string): Promise<ToolCall> {
    const use = this.newToken(tool.name);
    const from = peer.transcript.length;
    const bound = this.bound();
    const reply = await peer.request('tools/call', { name: tool.name, arguments: args }, bound, {
      progressToken: use.token,
      maxMs: this.remaining(),
    });
    use.answeredAt = Date.now();
    const outcome: ToolCall['outcome'] =
      reply.unreadable !== undefined ? 'unreadable' : reply.message ? 'answered' : reply.timedOut ? 'hung' : 'closed';
    const timing = this.timings.get(tool.name) ?? { longestMs: 0, hung: false };
    timing.longestMs = Math.max(timing.longestMs, reply.ms);
    if (outcome === 'hung') {
      timing.hung = true;
      use.cancelled = true;
      // As a client does when it gives up on a request: the server may stop the work.
      await peer
        .notify('notifications/cancelled', {
          requestId: reply.id,
          reason: `faultline probe: no answer within ${bound} ms (${label})`,
        })
        .catch((error: unknown) => {
          if (error instanceof PeerStopped) throw error;
        });
      peer.abandon(reply.id);
    }
    this.timings.set(tool.name, timing);
    return { tool: tool.name, reply, exchange: peer.excerpt(from, reply.id), outcome };
  }

  async listTools(peer: Peer): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < LIST_PAGES; page++) {
      const reply = await peer.request('tools/list', cursor ? { cursor } : {}, this.bound());
      const res = reply.message?.result as { tools?: ListedTool[]; nextCursor?: string } | undefined;
      if (!res || !Array.isArray(res.tools)) break;
      tools.push(...res.tools.filter((t) => t && typeof t === 'object' && typeof t.name === 'string'));
      if (!res.nextCursor) break;
      cursor = res.nextCursor;
    }
    return tools;
  }

  memo<T>(key: string, make: () => Promise<T>): Promise<T> {
    if (!this.memos.has(key)) this.memos.set(key, make());
    return this.memos.get(key) as Promise<T>;
  }

  wants(leaf: string): boolean {
    return this.ledger.wants(leaf);
  }

  check(leaf: string, n = 1): void {
    this.ledger.check(leaf, n);
  }

  report(finding: FindingInput): void {
    this.ledger.report(finding);
  }

  note(leaf: string, note: string, outcome?: 'inconclusive' | 'untested'): void {
    this.ledger.note(leaf, note, outcome);
  }

  /** Nothing could be probed: every selected leaf is untested, with why. */
  untestedAll(why: string): void {
    this.ledger.untested(why);
  }

  leavesOnlyProbedBy(probes: ReadonlySet<string>): string[] {
    return this.ledger.leavesOnlyProbedBy(probes);
  }
}
