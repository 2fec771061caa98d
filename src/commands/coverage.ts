export function registerCoverageCommand(..._a: unknown[]): void {}
