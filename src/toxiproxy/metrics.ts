/**
 * GET /metrics of the Toxiproxy API, in Prometheus text format (prom-client, one Registry):
 * Toxiproxy's own proxy metrics under its names and labels, and faultline's beside them.
 *
 *   toxiproxy_proxy_received_bytes_total{direction,proxy,listener,upstream}  bytes read from the sender
 *   toxiproxy_proxy_sent_bytes_total{direction,proxy,listener,upstream}      bytes written to the receiver
 *   faultline_proxy_connections_total{proxy}, faultline_proxy_active_connections{proxy}
 *   faultline_fault_applications_total{proxy,fault,type}                      times a toxic's fault acted
 *   faultline_fault_bytes_total{proxy,fault,type,direction}                   bytes through a toxic's fault
 *
 * Values are read from the proxies' own counters at each scrape, so they move while a connection
 * is open (Toxiproxy's move when it closes). A proxy deleted takes its series with it.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { ProxyCollection } from './proxies.js';

export interface ToxiproxyMetrics {
  registry: Registry;
  contentType: string;
  render(): Promise<string>;
}

export function toxiproxyMetrics(collection: ProxyCollection): ToxiproxyMetrics {
  const registry = new Registry();
  const linkLabels = ['direction', 'proxy', 'listener', 'upstream'] as const;
  const each = (visit: (proxy: ReturnType<ProxyCollection['all']>[number]) => void): void => {
    for (const proxy of collection.all()) visit(proxy);
  };
  new Counter({
    name: 'toxiproxy_proxy_received_bytes_total',
    help: 'Bytes received by a proxy from the sending side of a link',
    labelNames: linkLabels,
    registers: [registry],
    collect() {
      this.reset();
      each((proxy) => {
        const mapping = proxy.counters()?.mappings[0];
        if (!mapping) return;
        const labels = (direction: string) => ({
          direction,
          proxy: proxy.name,
          listener: proxy.listen,
          upstream: proxy.upstream,
        });
        this.inc(labels('upstream'), mapping.bytesUpstream);
        this.inc(labels('downstream'), mapping.bytesDownstream);
      });
    },
  });
  new Counter({
    name: 'toxiproxy_proxy_sent_bytes_total',
    help: 'Bytes sent by a proxy to the receiving side of a link',
    labelNames: linkLabels,
    registers: [registry],
    collect() {
      this.reset();
      each((proxy) => {
        const mapping = proxy.counters()?.mappings[0];
        if (!mapping) return;
        const labels = (direction: string) => ({
          direction,
          proxy: proxy.name,
          listener: proxy.listen,
          upstream: proxy.upstream,
        });
        this.inc(labels('upstream'), mapping.bytesSentUpstream ?? 0);
        this.inc(labels('downstream'), mapping.bytesSentDownstream ?? 0);
      });
    },
  });
  new Counter({
    name: 'faultline_proxy_connections_total',
    help: 'Client connections a proxy accepted',
    labelNames: ['proxy'],
    registers: [registry],
    collect() {
      this.reset();
      each((proxy) => {
        const mapping = proxy.counters()?.mappings[0];
        if (mapping) this.inc({ proxy: proxy.name }, mapping.connections);
      });
    },
  });
  new Gauge({
    name: 'faultline_proxy_active_connections',
    help: 'Client connections open now',
    labelNames: ['proxy'],
    registers: [registry],
    collect() {
      this.reset();
      each((proxy) => {
        const mapping = proxy.counters()?.mappings[0];
        if (mapping) this.set({ proxy: proxy.name }, mapping.activeConnections);
      });
    },
  });
  new Counter({
    name: 'faultline_fault_applications_total',
    help: "Times a toxic's fault acted (delays, pieces paced or cut, holds, resets, cuts)",
    labelNames: ['proxy', 'fault', 'type'],
    registers: [registry],
    collect() {
      this.reset();
      each((proxy) => {
        const counters = proxy.counters();
        for (const fault of counters?.faults ?? [])
          this.inc({ proxy: proxy.name, fault: fault.name, type: fault.type }, fault.applications);
        for (const fault of counters?.httpFaults ?? [])
          this.inc({ proxy: proxy.name, fault: fault.name, type: `http_${fault.type}` }, fault.applications);
      });
    },
  });
  new Counter({
    name: 'faultline_fault_bytes_total',
    help: "Bytes that went through a toxic's fault, per direction",
    labelNames: ['proxy', 'fault', 'type', 'direction'],
    registers: [registry],
    collect() {
      this.reset();
      each((proxy) => {
        for (const fault of proxy.counters()?.faults ?? []) {
          const labels = { proxy: proxy.name, fault: fault.name, type: fault.type };
          this.inc({ ...labels, direction: 'upstream' }, fault.bytesUpstream);
          this.inc({ ...labels, direction: 'downstream' }, fault.bytesDownstream);
        }
      });
    },
  });
  return { registry, contentType: registry.contentType, render: () => registry.metrics() };
}
