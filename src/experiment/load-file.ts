/**
 * One entry for both doors: an experiment given as a file (the CLI), an object or text (the MCP
 * tool) → a validated Experiment, with the limits and safety policy of the caller.
 */
import { InputError } from '../kernel/errors.js';
import type { ScenarioLimits } from '../config.js';
import type { SafetyPolicy } from './adapters/policy.js';
import type { ControlPlane, Experiment } from './model.js';
import { readExperiment } from './read.js';
import { parseExperimentText, positionOf } from './shape.js';

export interface Source {
  /** An object already parsed, or YAML/JSON text. */
  experiment: unknown;
  /** Relative paths (command cwd) resolve against this. */
  baseDir?: string;
}

export interface Caller {
  limits: ScenarioLimits;
  policy: SafetyPolicy;
  extraProxies?: readonly string[];
  extraControl?: readonly ControlPlane[];
  /** The run's length given on the command line (`run --duration`). */
  durationMs?: number;
  /** A person's command after `--` on the command line: the run lasts while it runs. */
  whileCommand?: readonly string[];
}

export async function experimentFrom(source: Source, caller: Caller, where = 'experiment'): Promise<Experiment> {
  let raw = source.experiment;
  const text = typeof raw === 'string' ? raw : undefined;
  if (text !== undefined) raw = await parseExperimentText(text, where);
  if (raw === undefined || raw === null)
    throw new InputError(`${where}: give the experiment (an object, or its YAML/JSON text)`);
  try {
    return await readFrom(raw, source, caller);
  } catch (error) {
    // Given as text, a refusal also says where in it: the line and column of the field it names.
    if (text === undefined || !(error instanceof InputError)) throw error;
    const position = await positionOf(text, error.message).catch(() => undefined);
    // Nowhere to point (the whole text is wrong: an array, a scalar): the file is named, as a parse error names it.
    if (position === undefined && where !== 'experiment' && error.message.startsWith('experiment: '))
      throw new InputError(`${where}: ${error.message.slice('experiment: '.length)}`);
    if (position === undefined) throw error;
    throw new InputError(`${error.message} (${where === 'experiment' ? '' : `${where} `}${position})`);
  }
}

function readFrom(raw: unknown, source: Source, caller: Caller): Promise<Experiment> {
  return readExperiment(raw, {
    limits: caller.limits,
    policy: caller.policy,
    ...(caller.extraProxies ? { extraProxies: caller.extraProxies } : {}),
    ...(caller.extraControl ? { extraControl: caller.extraControl } : {}),
    ...(source.baseDir ? { baseDir: source.baseDir } : {}),
    ...(caller.durationMs !== undefined ? { durationMs: caller.durationMs } : {}),
    ...(caller.whileCommand !== undefined ? { whileCommand: caller.whileCommand } : {}),
  });
}
