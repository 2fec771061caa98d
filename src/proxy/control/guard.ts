/**
 * The production guard of the admin API and held proxies: the one detector in src/production.ts,
 * shared by every path that injects faults.
 */
export { productionRefusal, productionSignal } from '../../production.js';
