/** Consent for the programs a request starts: see policy.ts. */
export { ProgramPolicy, ALLOW_HINT, type Asker, type ProgramRequest, type Verdict, type Launch } from './policy.js';
export { startProgram } from './start.js';
export { commandAllowance, ALLOW_COMMANDS_ENV } from './allowance.js';
export { minimalEnvironment, BASE_VARIABLES } from './environment.js';
