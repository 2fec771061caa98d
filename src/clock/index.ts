/**
 * The process's one clock: `monotonicMs` (the same on every thread) and the wake-up service that
 * calls back at sub-millisecond precision without a busy-wait (wake-ups.ts), one per thread that
 * uses it, on one helper thread per process.
 */
import { warnRealtimeGc } from './realtime.js';

export { monotonicMs } from './monotonic.js';
export { realtimeGcHazard, warnRealtimeGc } from './realtime.js';
export { HELPER_NAME } from './shared.js';
export {
  lendClock,
  MIN_WAKE_GAP_MS,
  shareClock,
  threadWakeUps,
  useSharedClock,
  WakeUps,
  type BackstopTimer,
  type SharedClock,
  type Wake,
  type WakeUpOptions,
} from './wake-ups.js';

// Said as the process loads its clock, before it first waits on another thread (the libuv pool's, a worker):
// under chrt -f a run can hang before it starts a thread of its own (src/clock/realtime.ts).
warnRealtimeGc();
