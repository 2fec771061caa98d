/** The HTTP-aware stage and its eight faults; see stage.ts and spec.ts. */
export { classify } from './framing.js';
export { HttpStage, SNIFF_TIMEOUT_MS, MAX_BUFFERED_BODY, type HttpMappingCounters } from './stage.js';
export {
  validateHttpFault,
  validateHttpFaults,
  normalizeHttpFault,
  faultKind,
  type HttpFaultSpec,
  type ResolvedHttpFault,
} from './spec.js';
export { HTTP_FAULT_TYPES, globToRegExp, type HttpFaultType, type HttpFaultCounters } from './fault.js';
export { removePath } from './schema-mismatch.js';
