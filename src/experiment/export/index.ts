/**
 * An experiment, on an engine beyond one machine: Chaos Mesh (a Workflow of NetworkChaos and
 * HTTPChaos steps with status checks), k6 (the load, its windows' thresholds, HTTP checks that
 * abort) or AWS FIS (actions sequenced by startAfter, a stop condition).
 *
 * Each engine carries its own part: Chaos Mesh and FIS inject faults but drive no load; k6 drives
 * the load but injects nothing — that division is said in the document's header. Within its part,
 * whatever the engine cannot express with the same meaning is refused, every such part listed with
 * its reason; with `partial` the document is written without them and the header and the notes
 * list each one that was left out. Nothing is dropped without a word.
 */
import { InputError } from '../../kernel/errors.js';
import type { Experiment } from '../model.js';
import { exportChaosMesh } from './chaos-mesh.js';
import { exportFis } from './fis.js';
import { exportK6 } from './k6.js';

export const EXPERIMENT_EXPORT_TARGETS = ['chaos-mesh', 'k6', 'fis'] as const;
export type ExperimentExportTarget = (typeof EXPERIMENT_EXPORT_TARGETS)[number];

export interface ExperimentExportOptions {
  /** Write what the engine can express and list what it cannot, instead of refusing. */
  partial?: boolean;
  /** chaos-mesh: the pods' namespace (default "default"). */
  namespace?: string;
  /** chaos-mesh: label selectors per mapping name ("*" for every mapping): ["app=weather"]. */
  selectors?: Record<string, string[]>;
  /** fis: ecs (default) or eks network actions. */
  platform?: 'ecs' | 'eks';
  /** fis: target_config as for fault_create_fis_template; `mappings: {name: selection}` selects each dependency's tasks
   * or pods. */
  targetConfig?: Record<string, unknown>;
}

export interface ExperimentExport {
  to: ExperimentExportTarget;
  format: 'yaml' | 'json' | 'javascript';
  document: string;
  notes: string[];
  /** The parts left out (partial), each with why. */
  omitted: string[];
}

/** A part of the experiment the engine cannot express, and why. */
export interface Refusal {
  part: string;
  reason: string;
}

export interface EngineDocument {
  format: ExperimentExport['format'];
  /** The document, given the header lines to put on top (as the format's comments). */
  render(header: string[]): string;
  notes: string[];
  refusals: Refusal[];
  /** What this engine leaves to another one (the load to k6, the faults to chaos-mesh or fis). */
  elsewhere: string[];
  /** Set when nothing of the engine's part is left to write (every fault step refused): even --partial refuses then. */
  empty?: string;
}

export async function exportExperiment(
  experiment: Experiment,
  to: ExperimentExportTarget,
  options: ExperimentExportOptions = {},
): Promise<ExperimentExport> {
  let engine: EngineDocument;
  switch (to) {
    case 'chaos-mesh':
      engine = await exportChaosMesh(experiment, options);
      break;
    case 'k6':
      engine = await exportK6(experiment);
      break;
    case 'fis':
      engine = await exportFis(experiment, options);
      break;
    default:
      throw new InputError(`--to: "${String(to)}" is not one of ${EXPERIMENT_EXPORT_TARGETS.join(', ')}`);
  }
  const refused = engine.refusals.map((refusal) => `${refusal.part}: ${refusal.reason}`);
  if (engine.empty !== undefined && refused.length > 0) {
    throw new InputError(
      `nothing to export to ${to} (${engine.empty}): every fault step ` +
        `was ` +
        `refused:\n${refused.map((line) => `  - ${line}`).join('\n')}\nChange ` +
        `the experiment, or export to another engine.`,
    );
  }
  if (refused.length > 0 && !options.partial) {
    throw new InputError(
      `cannot export "${experiment.title}" to ${to} as it ` +
        `is:\n${refused.map((line) => `  - ${line}`).join('\n')}\nExport ` +
        `with --partial to leave these out (each is listed in the ` +
        `document), or change the experiment.`,
    );
  }
  const header = [
    `faultline experiment "${experiment.title}" for ${to}.`,
    ...engine.elsewhere.map((line) => `Not here: ${line}`),
    ...refused.map((line) => `Left out (--partial): ${line}`),
  ];
  return {
    to,
    format: engine.format,
    document: engine.render(header),
    notes: [...engine.notes, ...refused.map((line) => `left out: ${line}`)],
    omitted: refused,
  };
}
