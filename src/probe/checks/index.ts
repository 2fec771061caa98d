/**
 * Every probe check, in the order a run makes them: the protocol on the fresh session, then what
 * the tool list shows, then the calls (valid, hostile, traversal, cancellation), then what the
 * calls changed (a second session, the list again), the HTTP transport's own checks, and last
 * what every session showed along the way (stdout, unreadable messages).
 */
import type { ProbeCheck } from './check.js';
import { annotationsCheck, capabilitiesCheck, listChangedCheck } from './config.js';
import { portabilityCheck } from './provider.js';
import { PROTO_CHECKS, unreadableCheck } from './proto.js';
import { schemaCompileCheck, validCallCheck } from './schema.js';
import { descriptionCheck, httpHeaderCheck, traversalCheck } from './security.js';
import { staleSessionCheck, twoSessionsCheck } from './state.js';
import { cancelCheck, progressCheck } from './timeout.js';
import { hostileArgumentsCheck, stdoutCheck } from './tool.js';

export const CHECKS: readonly ProbeCheck[] = [
  ...PROTO_CHECKS,
  capabilitiesCheck,
  portabilityCheck,
  descriptionCheck,
  schemaCompileCheck,
  validCallCheck,
  hostileArgumentsCheck,
  traversalCheck,
  cancelCheck,
  progressCheck,
  twoSessionsCheck,
  listChangedCheck,
  annotationsCheck,
  staleSessionCheck,
  httpHeaderCheck,
  stdoutCheck,
  unreadableCheck,
];

export type { ProbeCheck } from './check.js';
export { ServerGone } from './check.js';
