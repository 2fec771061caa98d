/**
 * GET /metrics for a control API: the registry in Prometheus's text format. The caller has
 * already checked the bearer token when its API has one (Prometheus sends it with
 * `authorization: {type: Bearer, credentials: …}` in its scrape config).
 */
import type http from 'node:http';
import type { Registry } from 'prom-client';

export async function sendMetrics(registry: Registry, res: http.ServerResponse): Promise<void> {
  const body = await registry.metrics();
  res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
