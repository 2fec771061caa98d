/**
 * The fault taxonomy: 8 families, leaves `FAULT-<FAMILY>-<NAME>`, the probes that exercise each
 * leaf, and which leaves each injectable fault (tool-call plane, network) exercises. It is data
 * (taxonomy.json, shipped with the package) so that it can be versioned and replaced with
 * `--registry FILE` without a release.
 */
import { readFile } from 'node:fs/promises';
import { InputError, messageOf } from '../kernel/errors.js';

export const FAMILY_IDS = ['PROTO', 'TOOL', 'SCHEMA', 'STATE', 'PROVIDER', 'SECURITY', 'TIMEOUT', 'CONFIG'] as const;
export type FamilyId = (typeof FAMILY_IDS)[number];

export interface Family {
  id: FamilyId;
  name: string;
  description: string;
  /** Applies only when a suite drives agents (PROVIDER); otherwise n/a unless a run exercised it. */
  needsAgents?: boolean;
}

export interface Leaf {
  id: string;
  description: string;
  why: string;
  probes: string[];
}

export interface Taxonomy {
  format: 'faultline-taxonomy';
  version: string;
  families: Family[];
  leaves: Leaf[];
  /** kind ("toolcall", "network") → fault name → the leaves it exercises. */
  injections: Record<string, Record<string, string[]>>;
  /** Other tools' probe names → ours, for `coverage --no-suite --probe` (mcptest's `fuzz`, say). */
  probeAliases?: Record<string, string[]>;
}

/** The shipped registry: src/probe/taxonomy.json (dist/src/probe → three levels up). */
export const DEFAULT_TAXONOMY_URL = new URL('../../../src/probe/taxonomy.json', import.meta.url);

const LEAF_ID = /^FAULT-([A-Z]+)-[A-Z0-9]+(?:-[A-Z0-9]+)*$/;

export function familyOf(leafId: string): FamilyId | undefined {
  const family = LEAF_ID.exec(leafId)?.[1];
  return (FAMILY_IDS as readonly string[]).includes(family ?? '') ? (family as FamilyId) : undefined;
}

/** Loads and checks a registry; `file` undefined means the shipped one. */
export async function loadTaxonomy(file?: string): Promise<Taxonomy> {
  const where = file ?? DEFAULT_TAXONOMY_URL;
  let data: unknown;
  try {
    data = JSON.parse(await readFile(where, 'utf8'));
  } catch (error) {
    throw new InputError(
      `registry: cannot read ${String(file ?? 'the shipped taxonomy')} as JSON: ${messageOf(error)}`,
    );
  }
  return checkTaxonomy(data);
}

/** Validates a registry's shape and cross-references; every problem is named. */
export function checkTaxonomy(data: unknown): Taxonomy {
  const problems: string[] = [];
  const t = data as Partial<Taxonomy> | null;
  if (!t || typeof t !== 'object') throw new InputError('registry: expected a JSON object');
  if (t.format !== 'faultline-taxonomy') problems.push('format must be "faultline-taxonomy"');
  if (typeof t.version !== 'string' || t.version === '') problems.push('version must be a non-empty string');
  const families = Array.isArray(t.families) ? t.families : [];
  if (!Array.isArray(t.families)) problems.push('families must be an array');
  const familyIds = new Set<string>();
  for (const f of families) {
    if (!f || !(FAMILY_IDS as readonly string[]).includes(f.id))
      problems.push(`family id ${JSON.stringify(f?.id)} is not one of ${FAMILY_IDS.join(', ')}`);
    else familyIds.add(f.id);
    if (typeof f?.name !== 'string' || typeof f?.description !== 'string')
      problems.push(`family ${String(f?.id)} needs a name and a description`);
  }
  const leaves = Array.isArray(t.leaves) ? t.leaves : [];
  if (!Array.isArray(t.leaves)) problems.push('leaves must be an array');
  const leafIds = new Set<string>();
  for (const leaf of leaves) {
    const family = leaf && typeof leaf.id === 'string' ? familyOf(leaf.id) : undefined;
    if (!family) problems.push(`leaf id ${JSON.stringify(leaf?.id)} is not FAULT-<FAMILY>-<NAME>`);
    else if (!familyIds.has(family))
      problems.push(`leaf ${leaf.id} names family ${family}, which the registry does not define`);
    if (leafIds.has(leaf?.id)) problems.push(`leaf ${leaf.id} is defined twice`);
    leafIds.add(leaf?.id);
    if (typeof leaf?.description !== 'string' || typeof leaf?.why !== 'string' || !Array.isArray(leaf?.probes)) {
      problems.push(`leaf ${String(leaf?.id)} needs description, why and probes`);
    }
  }
  const injections = t.injections && typeof t.injections === 'object' ? t.injections : {};
  for (const [kind, faults] of Object.entries(injections)) {
    for (const [fault, ids] of Object.entries(faults ?? {})) {
      if (!Array.isArray(ids)) problems.push(`injections.${kind}.${fault} must be an array of leaf ids`);
      else
        for (const id of ids)
          if (!leafIds.has(id)) problems.push(`injections.${kind}.${fault} names unknown leaf ${id}`);
    }
  }
  const probes = new Set(leaves.flatMap((leaf) => (Array.isArray(leaf?.probes) ? leaf.probes : [])));
  const aliases = t.probeAliases && typeof t.probeAliases === 'object' ? t.probeAliases : {};
  for (const [alias, targets] of Object.entries(aliases)) {
    if (!Array.isArray(targets) || targets.length === 0)
      problems.push(`probeAliases.${alias} must be a non-empty array of probe names`);
    else
      for (const probe of targets)
        if (!probes.has(probe)) problems.push(`probeAliases.${alias} names unknown probe ${probe}`);
  }
  if (problems.length > 0) throw new InputError(`registry: ${problems.slice(0, 10).join('; ')}`);
  return {
    format: 'faultline-taxonomy',
    version: t.version!,
    families,
    leaves,
    injections,
    probeAliases: aliases,
  } as Taxonomy;
}
