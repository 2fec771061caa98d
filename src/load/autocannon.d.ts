// The part of autocannon 9's API that capacity.ts uses (the package ships no types).
declare module 'autocannon' {
  export interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    servername?: string;
    /** Milliseconds between samples; autocannon notices its end only at one. */
    sampleInt?: number;
    /** Requests per second over all connections (a cap). */
    overallRate?: number;
    /** Requests to make in all; autocannon then ignores duration. */
    amount?: number;
    /** With a rate: record each latency as measured, without autocannon's expected-interval correction. */
    ignoreCoordinatedOmission?: boolean;
  }
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p2_5: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
    total: number;
  }
  export interface AutocannonResult {
    latency: Histogram & { p25?: number; p75?: number; p95?: number };
    requests: Histogram & { sent: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    mismatches: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
    /** Seconds. */
    duration: number;
  }
  export interface Instance {
    stop(): void;
    on(event: 'response', listener: (client: unknown, statusCode: number) => void): Instance;
    on(event: 'reqError', listener: (error: Error) => void): Instance;
  }
  function autocannon(
    options: AutocannonOptions,
    callback: (error: Error | null, result: AutocannonResult) => void,
  ): Instance;
  export default autocannon;
}
