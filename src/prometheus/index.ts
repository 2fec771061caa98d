/** A small Prometheus HTTP API client (query, query_range), its credentials and its conditions. Knows nothing of MCP.
 * */
export {
  PrometheusClient,
  interpret,
  seriesName,
  MAX_ANSWER_BYTES,
  DEFAULT_QUERY_TIMEOUT_MS,
  type QueryOutcome,
  type Sample,
  type PrometheusClientOptions,
} from './client.js';
export { authFor, authFromEnv, PROMETHEUS_ENV, type PrometheusAuth } from './auth.js';
export {
  readCondition,
  unmet,
  describeComparison,
  COMPARATOR_CRITERIA,
  type Condition,
  type Comparison,
} from './condition.js';
export { judgeSamples, format as formatValue, type Reading } from './reading.js';
