/**
 * Parsers for commander options: each returns the value or throws InvalidArgumentError naming what
 * is accepted (commander prints it with the flag, exit 2).
 */
import { InvalidArgumentError } from './commander.js';
import { DEFAULT_TOOLSETS, LLM_CLIENT_SPELLINGS, TOOLSETS, type LlmClient, type Toolset } from '../config.js';
import { DURATION_FORMS, parseDuration } from '../duration.js';
import { messageOf } from '../kernel/errors.js';
import { listenPortRefusal, parseAllowTargets } from '../target-policy.js';
import { UsageError } from './run-command.js';

export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError('expected a positive integer');
  }
  return n;
}

export function portNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  const refusal = listenPortRefusal(n);
  if (refusal !== undefined) throw new InvalidArgumentError(refusal);
  return n;
}

export function llmClient(value: string): LlmClient {
  const client = LLM_CLIENT_SPELLINGS[value.trim().toLowerCase()];
  if (!client) throw new InvalidArgumentError(`accepted: ${Object.keys(LLM_CLIENT_SPELLINGS).join(', ')}`);
  return client;
}

export function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('expected an http:// or https:// URL');
  return value;
}

/** `--llm-timeout`: any form the one duration parser accepts (a bare number is seconds). */
export function llmTimeout(value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value, '--llm-timeout');
  } catch {
    throw new InvalidArgumentError(`expected a duration such as ${DURATION_FORMS}`);
  }
  if (!(ms >= 1)) throw new InvalidArgumentError('expected a duration of at least 1 ms');
  return ms;
}

/** Earlier names of a toolset, still accepted. */
const TOOLSET_ALIASES: Record<string, Toolset> = { toolplane: 'toolcall' };

/**
 * `--toolsets code,search`: a comma-separated list of tool families. `all` means every family on
 * by default; an opt-in family (fis-recommender) is added by naming it, with `all` or alone.
 */
export function toolsetList(value: string): Toolset[] {
  const names = value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '')
    .map((name) => TOOLSET_ALIASES[name] ?? name);
  if (names.length === 0) return [...DEFAULT_TOOLSETS];
  const unknown = names.filter((name) => name !== 'all' && !(TOOLSETS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown toolset ${unknown.join(', ')}; accepted: ${TOOLSETS.join(', ')}, all`);
  const chosen = new Set(names.flatMap((name) => (name === 'all' ? DEFAULT_TOOLSETS : [name as Toolset])));
  return TOOLSETS.filter((toolset) => chosen.has(toolset));
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** `--allow-targets 10.0.0.0/8,api.staging.local`: what may be dialled besides loopback. */
export function allowTargetList(value: string, previous: string[] | undefined): string[] {
  try {
    return [...(previous ?? []), ...parseAllowTargets(value, '--allow-targets')];
  } catch (error) {
    throw new InvalidArgumentError(messageOf(error).replace(/^--allow-targets: /, ''));
  }
}

export function number(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a number');
  return n;
}

export function nonNegativeNumber(value: string): number {
  const n = number(value);
  if (n < 0) throw new InvalidArgumentError('expected a number ≥ 0');
  return n;
}

export function integer(value: string): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected an integer');
  return n;
}

/** A whole number in min..max. */
export function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || n < min || n > max)
      throw new InvalidArgumentError(`expected a whole number in ${min}..${max}`);
    return n;
  };
}

/** A number in min..max. */
export function numberIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`expected a number in ${min}..${max}`);
    return n;
  };
}

/** A choice flag that accepts any case (--side Server), as the tools' enum arguments do. */
export function anyCaseChoice(values: readonly string[]) {
  return (value: string): string => {
    const lower = value.trim().toLowerCase();
    if (!values.includes(lower)) throw new InvalidArgumentError(`Allowed choices are ${values.join(', ')}.`);
    return lower;
  };
}

/** `PORT`, `HOST:PORT` or `[v6]:PORT`; the host defaults to loopback. */
export function parseListenAddress(value: string, flag = '--admin'): { host: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):)?(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535)
    throw new UsageError(`${flag} ${value}: expected PORT, HOST:PORT or [IPv6]:PORT, e.g. 9090 or 127.0.0.1:9090`);
  const refusal = listenPortRefusal(port);
  if (refusal !== undefined) throw new UsageError(`${flag} ${value}: ${refusal}`);
  return { host: match[1] ? match[1].replace(/^\[|\]$/g, '') : '127.0.0.1', port };
}
