/**
 * The one consent check for every program a request can make faultline start: an experiment's
 * commands and rollbacks, the MCP server a tool-call or probe step (or tool) spawns. Every such
 * start goes through launch() (start.ts is the only caller of spawnTree), after approve() had the
 * chance to ask a person.
 *
 * Two kinds of policy:
 * - the owner's (the CLI: a person at their own shell): every program runs, with the person's own
 *   environment, as it always did;
 * - an agent's (an MCP call; the client may be a prompt-injected agent): a program runs only when
 *   the server's owner allowed it at start (--allow-commands: any; --allow-command PROG: these
 *   executables, by real path) or a person accepted it when asked (MCP elicitation, when the client
 *   declares it). It gets a minimal environment (environment.ts) and a working directory inside the
 *   client's roots when roots are set.
 *
 * It knows nothing of MCP: the tool layer hands it the roots and a way to ask.
 */
import { realpathSync } from 'node:fs';
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import { CancelledError, InputError, messageOf } from '../kernel/errors.js';
import type { CommandAllowance } from '../config.js';
import { codeLoadingVariable, minimalEnvironment } from './environment.js';
import { findExecutable } from './executable.js';

/** One program a request would start. */
export interface ProgramRequest {
  /** The argument that names it, as the caller was given it: `command`, `experiment.expect[0].command`. */
  argument: string;
  /** argv[0]: a name looked up on PATH, or a path; `/bin/sh` for a shell line. */
  command: string;
  args: readonly string[];
  /** Where it starts; undefined: the first root (an agent's, when roots are set) or the server's own. */
  cwd?: string | undefined;
  /** The variables the request asks for, over the base environment. */
  env?: Readonly<Record<string, string>> | undefined;
  /** Why it would be started, for the person asked and the dry run: "an expectation's command". */
  why: string;
}

/** What is started: exactly what was allowed. */
export interface Launch {
  file: string;
  args: string[];
  cwd: string | undefined;
  env: NodeJS.ProcessEnv;
}

export type Verdict = { status: 'allowed'; by: string } | { status: 'ask' } | { status: 'refused'; reason: string };

/** Asks a person (MCP elicitation): resolves their action; rejects when the signal aborts or asking failed. */
export type Asker = (message: string, signal: AbortSignal) => Promise<'accept' | 'decline' | 'cancel'>;

export interface AgentPolicyOptions {
  allowance: CommandAllowance;
  /** The roots the client works in (configured or the client's own); empty: no working-directory rule. */
  roots: readonly string[];
  /** Present when the client can ask its person (it declared the elicitation capability). */
  ask?: Asker | undefined;
  /** How long a person is given to answer before the answer counts as no. */
  askTimeoutMs: number;
  /** The server's environment the base is taken from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** How the owner allows programs, for every refusal. */
export const ALLOW_HINT = '--allow-commands';

export class ProgramPolicy {
  private readonly grants = new Set<string>();

  private constructor(private readonly agent: AgentPolicyOptions | undefined) {}

  /** The person at their shell: everything runs as asked, with their environment. */
  static owner(): ProgramPolicy {
    return new ProgramPolicy(undefined);
  }

  /** An MCP client: only what the owner allowed or a person accepted. */
  static forAgent(options: AgentPolicyOptions): ProgramPolicy {
    return new ProgramPolicy(options);
  }

  /** What would happen to `request` now: run, ask a person, or refuse (and why). */
  verdict(request: ProgramRequest): Verdict {
    const agent = this.agent;
    if (!agent) return { status: 'allowed', by: 'the person running faultline' };
    const cwd = this.cwdOf(request);
    const outside = outsideRoots(cwd, agent.roots);
    if (outside !== undefined)
      return {
        status: 'refused',
        reason:
          `${request.argument}: not started: its working directory ${outside} ` +
          `is outside the client's roots (${agent.roots.join(', ')})`,
      };
    if (agent.allowance.allowAll) return { status: 'allowed', by: '--allow-commands' };
    if (this.grants.has(grantKey(request, cwd))) return { status: 'allowed', by: 'the person, asked' };
    const file = findExecutable(request.command, (agent.env ?? process.env).PATH, cwd ?? process.cwd());
    const loading = codeLoadingVariable(request.env ?? {});
    if (file !== undefined && agent.allowance.programs.includes(file)) {
      if (loading === undefined) return { status: 'allowed', by: `--allow-command ${file}` };
      if (!agent.ask)
        return {
          status: 'refused',
          reason:
            `${request.argument}: not started: its env sets ${loading}, which ` +
            `can make ${basename(file)} load other code or configuration; ` +
            `--allow-command allows the program, not that (${ALLOW_HINT} ` +
            `allows anything)`,
        };
    }
    if (agent.ask) return { status: 'ask' };
    return { status: 'refused', reason: refusal(request) };
  }

  /**
   * Before anything starts: refuses the first request that may not run, and asks a person (once,
   * for all of them) about those that need asking. Resolves when every request may run.
   */
  async approve(requests: readonly ProgramRequest[], signal?: AbortSignal): Promise<void> {
    const agent = this.agent;
    if (!agent || requests.length === 0) return;
    const asking: ProgramRequest[] = [];
    for (const request of requests) {
      const verdict = this.verdict(request);
      if (verdict.status === 'refused') throw new InputError(verdict.reason);
      if (verdict.status === 'ask') asking.push(request);
    }
    if (asking.length === 0) return;
    const names = asking.map((request) => request.argument).join(', ');
    const bound = AbortSignal.timeout(agent.askTimeoutMs);
    const both = signal ? AbortSignal.any([signal, bound]) : bound;
    let action: 'accept' | 'decline' | 'cancel';
    try {
      action = await agent.ask!(
        askingMessage(asking, (request) => this.cwdOf(request)),
        both,
      );
    } catch (error) {
      if (signal?.aborted) throw new CancelledError();
      if (bound.aborted)
        throw new InputError(
          `${names}: not started: no answer to the request for consent ` +
            `within ${agent.askTimeoutMs / 1000} s; ${ALLOW_HINT} on the ` +
            `server allows programs without asking`,
        );
      throw new InputError(`${names}: not started: consent could not be asked (${messageOf(error)})`);
    }
    if (action !== 'accept')
      throw new InputError(`${names}: not started: the person ${action === 'decline' ? 'declined' : 'cancelled'}`);
    for (const request of asking) this.grants.add(grantKey(request, this.cwdOf(request)));
  }

  /** The program to start for `request`, or an InputError when it may not run (not allowed, not approved). */
  launch(request: ProgramRequest): Launch {
    const agent = this.agent;
    if (!agent)
      return {
        file: request.command,
        args: [...request.args],
        cwd: request.cwd,
        env: { ...process.env, ...request.env },
      };
    const verdict = this.verdict(request);
    if (verdict.status === 'refused') throw new InputError(verdict.reason);
    if (verdict.status === 'ask') throw new InputError(`${refusal(request)} (it was not approved)`);
    const cwd = this.cwdOf(request);
    const env = agent.env ?? process.env;
    // The file found now, not the bare name: the child's PATH cannot pick another program.
    const file = findExecutable(request.command, env.PATH, cwd ?? process.cwd()) ?? request.command;
    return { file, args: [...request.args], cwd, env: minimalEnvironment(request.env, env) };
  }

  private cwdOf(request: ProgramRequest): string | undefined {
    if (request.cwd !== undefined) return resolve(request.cwd);
    return this.agent?.roots[0];
  }
}

/** The refusal naming the argument and how the owner allows it. */
function refusal(request: ProgramRequest): string {
  const name = basename(request.command);
  return (
    `${request.argument}: not started (${shown(request)}): over MCP ` +
    `this server starts no program without its owner's consent. ` +
    `Start it with ${ALLOW_HINT} (any program) or --allow-command ${name} ` +
    `(this one; also FAULTLINE_ALLOW_COMMANDS=${name}), ` +
    'or use a client that supports elicitation, to be asked'
  );
}

/** What the person is shown: each program's exact argv, working directory, variables and why. */
function askingMessage(
  requests: readonly ProgramRequest[],
  cwdOf: (request: ProgramRequest) => string | undefined,
): string {
  const lines = [
    `An MCP client asks faultline to start ${requests.length === 1 ? 'a program' : `${requests.length} programs`}:`,
  ];
  for (const request of requests) {
    lines.push(`- ${request.argument} (${request.why}): ${JSON.stringify([request.command, ...request.args])}`);
    lines.push(`  in ${cwdOf(request) ?? process.cwd()}`);
    const env = Object.keys(request.env ?? {});
    if (env.length > 0)
      lines.push(`  with ${env.map((name) => `${name}=${JSON.stringify(request.env![name])}`).join(' ')}`);
  }
  lines.push('Accept to run exactly these; decline or cancel to refuse.');
  return lines.join('\n');
}

function shown(request: ProgramRequest): string {
  const argv = [request.command, ...request.args].join(' ');
  return argv.length > 200 ? `${argv.slice(0, 200)}…` : argv;
}

function grantKey(request: ProgramRequest, cwd: string | undefined): string {
  const env = Object.entries(request.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([request.command, request.args, cwd ?? '', env]);
}

/** The (real) working directory when it is outside every root, else undefined. */
function outsideRoots(cwd: string | undefined, roots: readonly string[]): string | undefined {
  if (roots.length === 0) return undefined;
  const where = cwd ?? process.cwd();
  let real = where;
  try {
    real = realpathSync(where);
  } catch {
    // Not there: it cannot be entered anyway; judged as written.
  }
  const inside = roots.some((root) => {
    let realRoot = root;
    try {
      realRoot = realpathSync(root);
    } catch {
      // judged as written
    }
    const rel = relative(realRoot, real);
    return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
  });
  return inside ? undefined : where;
}
