/** The time now in epoch milliseconds (µs resolution): comparable across threads, where performance.now() alone need not be. */
export function epochNowMs(): number {
  return performance.timeOrigin + performance.now();
}
