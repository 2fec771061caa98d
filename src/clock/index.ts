/**
 * The process's one clock: `monotonicMs` (the same on every thread) and the wake-up service that
 * calls back at sub-millisecond precision without a busy-wait (wake-ups.ts), one per thread that
 * uses it, on one helper thread.
 */
export { monotonicMs } from './monotonic.js';
export { HELPER_NAME } from './shared.js';
export {
  MIN_WAKE_GAP_MS,
  threadWakeUps,
  WakeUps,
  type BackstopTimer,
  type Wake,
  type WakeUpOptions,
} from './wake-ups.js';
