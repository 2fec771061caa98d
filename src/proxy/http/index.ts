/** The HTTP-aware stage and its eight faults; see stage.ts and spec.ts. */
export { classify } from './framing.js';
export { validateHttpFault, type HttpFaultSpec, type ResolvedHttpFault } from './spec.js';
export { HTTP_FAULT_TYPES, globToRegExp, type HttpFaultType, type HttpFaultCounters } from './fault.js';
export { removePath } from './schema-mismatch.js';
