/** A small Prometheus HTTP API client (query, query_range), its credentials and its conditions. Knows nothing of MCP.
 * */
export { PrometheusClient, seriesName, type QueryOutcome } from './client.js';
export { authFor, authFromEnv, PROMETHEUS_ENV } from './auth.js';
export { readCondition, unmet, type Condition } from './condition.js';
export { judgeSamples, format as formatValue } from './reading.js';
