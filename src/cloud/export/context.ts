/**
 * What every exporter shares: the options, the result, and one way to refuse — naming the
 * argument as the caller spells it (the tools' `fault_start`, the CLI's `--fault-start`).
 */
import type { EXPORT_TARGETS, FIS_PLATFORMS } from '../export-targets.js';

export type ExportTarget = (typeof EXPORT_TARGETS)[number];
export type FisPlatform = (typeof FIS_PLATFORMS)[number];

export interface ExportOptions {
  /** fis: which network actions (default ecs). */
  platform?: FisPlatform;
  /** fis: target_config as for fault_create_fis_template (roleArn, stopConditionArn, tags …, kubernetesServiceAccount
   * for eks); placeholders fill what is missing. */
  targetConfig?: Record<string, unknown>;
  /** chaos-mesh: namespace of the pods (default "default"). */
  namespace?: string;
  /** chaos-mesh: label selectors "key=value" for the service's pods. */
  selector?: readonly string[];
  /**
   * How an argument is named to the caller, in refusals and notes: the tools' names by default
   * (`fault_start`); the CLI passes its flags (`--fault-start`).
   */
  spell?: (argument: string) => string;
}

export interface ExportResult {
  to: ExportTarget;
  fault: string;
  format: 'json' | 'yaml' | 'javascript';
  document: string;
  /** What to check or set before applying it, and how the engine's behaviour is pinned down. */
  notes: string[];
}

export { asGiven, refuse, type Spell } from '../../export/spell.js';
