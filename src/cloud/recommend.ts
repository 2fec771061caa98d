/**
 * Finding → ranked FIS experiments, offline and without a model.
 *
 * The finding's words (finding.ts) give failure modes and services, each service either named
 * ("ECS", "Aurora", a resource ARN) or only hinted at ("database", "function"). Each action
 * (profiles.ts) scores the weights of the failure modes the finding names. Then its service
 * decides whether it is offered at all:
 * - named: offered, with a bonus;
 * - hinted: offered as a plausible platform, with a smaller bonus;
 * - neither, on a finding that names no platform: a compute platform (EC2, ECS, EKS) is offered
 *   as one plausible platform among others, discounted; any other service is not;
 * - neither, on a finding that names a platform: not offered — no service is chosen on a word
 *   that does not name it ("error" is no Aurora DSQL finding, "replica" no S3 one).
 * Actions on the network or account as a whole are offered on their failure modes alone. A
 * finding that names no platform gets one action per plausible platform and a note saying so; a
 * service named with no failure we recognise gets that service's basic fault. Each action once,
 * sorted by score; ties go EC2, ECS, EKS, Lambda, then by name.
 */
import { durationParameter, findAction, type FisAction } from './catalog.js';
import { parseIsoDuration } from './iso-duration.js';
import { evidenceOf, readFinding, servicesOfResources, zonesIn, type Evidence, type Match } from './finding.js';
import { PROFILES, type Profile, type Variant } from './profiles.js';
import { localRehearsal, stopSuggestion, type LocalRehearsal } from './rehearsal.js';
import { suggestParameters } from './suggest.js';
import { COMPUTE_PLATFORMS, PLATFORM_NAMES, SERVICES } from './vocabulary.js';
import { byCodeUnits } from '../order.js';

export { tokenize } from './finding.js';

export interface Recommendation {
  action: string;
  failure: string;
  why: string[];
  confidence: number;
  score: number;
  /** ISO 8601, for the action's duration parameter; null when the action takes none. */
  duration: string | null;
  /** Suggested values (strings, as FIS takes them), the duration excepted. */
  parameters: Record<string, string>;
  /**
   * Required parameters the finding could not fill, and required values inside one
   * (`documentParameters.Port`): set them before building the template.
   */
  parametersToSet: string[];
  targetResourceType: string | null;
  targetKey: string | null;
  stopCondition: { source: 'aws:cloudwatch:alarm'; suggestion: string };
  localRehearsal: LocalRehearsal | null;
}

export interface RecommendationSet {
  recommendations: Recommendation[];
  finding_id: string | null;
  count: number;
  /** Services the finding names (or its resources point at), and the failure modes it names. */
  detected: { services: string[]; failureModes: string[] };
  /** What the list as a whole needs said: no platform named, nothing recognised. */
  notes: string[];
}

export interface RecommendOptions {
  resources?: readonly string[];
  /** Most recommendations returned (default 5). */
  limit?: number;
}

type Standing = 'named' | 'hinted' | 'plausible' | 'generic';

interface Candidate {
  id: string;
  action: FisAction;
  profile: Profile;
  /** The platform the action acts on (its first service), null for a network- or account-wide action. */
  platform: string | null;
  standing: Standing;
  score: number;
  /** The service the action acts on is not named: the recommendation is one guess among others. */
  guess: boolean;
  why: string[];
  variant: Variant | undefined;
}

const NAMED_BONUS = 3;
const HINTED_BONUS = 1.5;
/** An unnamed compute platform is a guess among equals: discounted below a hinted service. */
const PLAUSIBLE_FACTOR = 0.8;
/** The least failure-mode evidence for an action whose service is not named: one clear word. */
const MIN_EVIDENCE = 1;
const MIN_EVIDENCE_NAMED = 0.5;
const PLATFORM_ORDER = ['ec2', 'ecs', 'eks', 'lambda'];

function conceptScore(
  concepts: Readonly<Record<string, number>>,
  evidence: Evidence,
): { score: number; why: string[] } {
  let score = 0;
  const why: string[] = [];
  for (const [concept, weight] of Object.entries(concepts)) {
    const match = evidence.concepts.get(concept);
    if (!match) continue;
    score += weight * match.strength;
    why.push(`${concept.replace(/_/g, ' ')}: "${match.phrases.join('", "')}"`);
  }
  return { score, why };
}

/** The action's failure-mode score: its own concepts, or its best variant's. */
function bestFit(profile: Profile, evidence: Evidence): { score: number; why: string[]; variant: Variant | undefined } {
  if (!profile.variants) return { ...conceptScore(profile.concepts, evidence), variant: undefined };
  let best: { score: number; why: string[]; variant: Variant | undefined } = { score: 0, why: [], variant: undefined };
  for (const variant of profile.variants) {
    const fit = conceptScore(variant.concepts, evidence);
    if (fit.score > best.score) best = { ...fit, variant };
  }
  return best;
}

/** Offered as plausible when the finding names no platform. */
const isComputePlatform = (service: string): boolean => (COMPUTE_PLATFORMS as readonly string[]).includes(service);
/** Where the workload runs: naming one rules out the others a generic word hints at. */
const isCompute = (service: string): boolean => isComputePlatform(service) || service === 'lambda';

function standingOf(
  profile: Profile,
  evidence: Evidence,
  platformNamed: boolean,
): { standing: Standing; service: string | undefined } | undefined {
  const named = profile.services.find((service) => evidence.named.has(service));
  if (named) return { standing: 'named', service: named };
  if (profile.generic) return { standing: 'generic', service: undefined };
  const hinted = profile.services.find((service) => evidence.hinted.has(service));
  if (hinted) return { standing: 'hinted', service: hinted };
  if (!platformNamed && profile.services.some(isComputePlatform))
    return { standing: 'plausible', service: profile.services[0] };
  return undefined;
}

function phrasesOf(match: Match): string {
  return `"${match.phrases.join('", "')}"`;
}

function candidates(evidence: Evidence, platformNamed: boolean): Candidate[] {
  const out: Candidate[] = [];
  for (const [id, profile] of Object.entries(PROFILES)) {
    const fit = bestFit(profile, evidence);
    const place = standingOf(profile, evidence, platformNamed);
    if (!place || fit.score === 0) continue;
    if (fit.score < (place.standing === 'named' ? MIN_EVIDENCE_NAMED : MIN_EVIDENCE)) continue;
    let score = fit.score;
    let guess = place.standing === 'hinted';
    const why = [...fit.why];
    if (place.standing === 'named') {
      const match = evidence.named.get(place.service!)!;
      score += NAMED_BONUS * Math.min(1, match.strength);
      why.push(`service ${place.service}: ${phrasesOf(match)}`);
    } else if (place.standing === 'hinted') {
      const match = evidence.hinted.get(place.service!)!;
      score += HINTED_BONUS * Math.min(1, match.strength);
      why.push(
        `plausible platform ` +
          `${PLATFORM_NAMES[place.service!] ?? place.service}: ${phrasesOf(match)} ` +
          `suggests it, without naming it`,
      );
    } else if (place.standing === 'plausible') {
      score *= PLAUSIBLE_FACTOR;
      guess = true;
      why.push(`plausible platform ${PLATFORM_NAMES[place.service!] ?? place.service}: the finding names no platform`);
    } else if (profile.services.length > 0) {
      // A network-wide cut when the finding names no part of the network: as much a guess as a
      // platform it does not name.
      score *= PLAUSIBLE_FACTOR;
      guess = true;
    }
    out.push({
      id,
      action: findAction(id)!,
      profile,
      platform: profile.generic ? null : (profile.services[0] ?? null),
      standing: place.standing,
      score,
      guess,
      why,
      variant: fit.variant,
    });
  }
  return out;
}

/** A named service none of whose failures the finding describes: its basic fault, at a low score. */
function serviceDefaults(evidence: Evidence, found: readonly Candidate[]): Candidate[] {
  const out: Candidate[] = [];
  for (const [service, match] of evidence.named) {
    if (found.some((c) => c.profile.services.includes(service) && c.standing === 'named')) continue;
    for (const [id, profile] of Object.entries(PROFILES)) {
      if (!profile.default || profile.services[0] !== service) continue;
      out.push({
        id,
        action: findAction(id)!,
        profile,
        platform: service,
        standing: 'named',
        score: 0.5,
        guess: false,
        why: [`service ${service}: ${phrasesOf(match)}; no failure mode of it recognised, so its basic fault`],
        variant: undefined,
      });
    }
  }
  return out;
}

function platformRank(platform: string | null): number {
  const at = platform === null ? -1 : PLATFORM_ORDER.indexOf(platform);
  return at === -1 ? PLATFORM_ORDER.length : at;
}

function byScore(a: Candidate, b: Candidate): number {
  return b.score - a.score || platformRank(a.platform) - platformRank(b.platform) || byCodeUnits(a.id, b.id);
}

/** One action per platform (the best), each network- or account-wide action on its own. */
function onePerPlatform(ranked: readonly Candidate[]): Candidate[] {
  const seen = new Set<string>();
  return ranked.filter((c) => {
    if (c.platform === null) return true;
    if (seen.has(c.platform)) return false;
    seen.add(c.platform);
    return true;
  });
}

function recommendationOf(
  candidate: Candidate,
  text: string,
  evidence: Evidence,
  resources: readonly string[],
): Recommendation {
  const { action, profile, variant } = candidate;
  const durationSpec = durationParameter(action);
  const duration = durationSpec ? (profile.duration ?? 'PT5M') : null;
  const concepts = new Set(evidence.concepts.keys());
  const suggestion = suggestParameters(action, {
    text,
    concepts,
    resources,
    durationMs: duration === null ? undefined : parseIsoDuration(duration),
    document: variant?.document,
  });
  const why = [...candidate.why];
  if (variant?.document) why.push(`SSM document ${variant.document}`);
  for (const [concept, note] of Object.entries(profile.note ?? {})) if (concepts.has(concept)) why.push(note);
  why.push(...suggestion.notes);
  const parametersToSet = [
    ...action.parameters
      .filter((p) => p.required && p !== durationSpec && suggestion.parameters[p.name] === undefined)
      .map((p) => p.name),
    ...suggestion.toSet,
  ];
  return {
    action: action.id,
    failure: action.failure,
    why,
    confidence: 0,
    score: Math.round(candidate.score * 100) / 100,
    duration,
    parameters: suggestion.parameters,
    parametersToSet,
    targetResourceType: action.resourceType,
    targetKey: action.targetKey,
    stopCondition: { source: 'aws:cloudwatch:alarm', suggestion: stopSuggestion(action.id) },
    localRehearsal: localRehearsal(action, suggestion.parameters),
  };
}

export function recommendExperiments(input: unknown, options: RecommendOptions = {}): RecommendationSet {
  const finding = readFinding(input);
  const resources = options.resources ?? [];
  const evidence = evidenceOf(finding.text);
  const zones = zonesIn(finding.text);
  const zoneNames = [...zones.ids, ...zones.names];
  if (zoneNames.length > 0 && !evidence.concepts.has('az'))
    evidence.concepts.set('az', { strength: 1, phrases: zoneNames });
  for (const [service, match] of servicesOfResources(resources, new Set(Object.keys(SERVICES)))) {
    evidence.named.set(service, match);
    evidence.hinted.delete(service);
  }
  // "container" hints at ECS and EKS alike: once the finding names its compute platform, such a
  // word does not bring in another one.
  if ([...evidence.named.keys()].some(isCompute))
    for (const service of [...evidence.hinted.keys()]) if (isCompute(service)) evidence.hinted.delete(service);
  const platformNamed = evidence.named.size > 0;
  const found = candidates(evidence, platformNamed);
  let ranked = [...found, ...serviceDefaults(evidence, found)].sort(byScore);
  const notes: string[] = [];
  if (!platformNamed && ranked.length > 0) {
    ranked = onePerPlatform(ranked);
    const platforms = [...new Set(ranked.map((c) => c.platform).filter((p): p is string => p !== null))];
    if (platforms.length > 0) {
      notes.push(
        `the finding names no platform: one action for each plausible one ` +
          `(${platforms.map((p) => PLATFORM_NAMES[p] ?? p).join(', ')}); ` +
          `name it, or give its resources, to rank for it`,
      );
    }
  }
  if (ranked.length === 0)
    notes.push(
      'no FIS action matches: name the failure (latency, packet loss, ' +
        'failover, throttling, CPU, memory, …) or the service',
    );
  const limit = options.limit ?? 5;
  const top = ranked[0]?.score ?? 0;
  const recommendations = ranked.slice(0, limit).map((candidate) => {
    const recommendation = recommendationOf(candidate, finding.text, evidence, resources);
    // Relative to the best match and to how much evidence there is: one weak word never gets 0.9;
    // a platform the finding does not name is a guess, and says so in its confidence.
    const guess = candidate.guess ? 0.7 : 1;
    recommendation.confidence =
      Math.round(Math.min(0.95, (candidate.score / (candidate.score + 3)) * (candidate.score / top) * guess) * 100) /
      100;
    return recommendation;
  });
  return {
    recommendations,
    finding_id: finding.id,
    count: recommendations.length,
    detected: { services: [...evidence.named.keys()], failureModes: [...evidence.concepts.keys()] },
    notes,
  };
}
