/**
 * faultline's own metrics in Prometheus's text format (prom-client): the proxies' faults and
 * traffic (proxy.ts, for every door that holds proxies) and the experiment runner's run
 * (experiment.ts); served as GET /metrics on a control API's port (exposition.ts) or on a
 * listener of its own (server.ts). Knows nothing of MCP.
 */
export { registerProxyMetrics } from './proxy.js';
export { ExperimentMetrics } from './experiment.js';
export { startMetricsServer, type MetricsServer } from './server.js';
