/** Consent for the programs a request starts: see policy.ts. */
export { ProgramPolicy, type ProgramRequest, type Verdict } from './policy.js';
export { startProgram } from './start.js';
export { commandAllowance } from './allowance.js';
export { minimalEnvironment } from './environment.js';
