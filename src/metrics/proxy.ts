/**
 * The fault proxy's metrics, from its counters at scrape time: reusable by every door that holds
 * proxies (`faultline proxy`'s admin API, the held proxies, the experiment runner, the Toxiproxy
 * API). `proxy` names the proxy (a held proxy's id, "proxy" for the command's own); `fault` the
 * fault's name (an injected fault's id); `mapping` the mapping as written.
 *
 *   faultline_fault_active{proxy,fault,type,kind}                      1 while in the fault list
 *   faultline_fault_applications_total{proxy,fault,type,kind}          times it acted
 *   faultline_fault_requests_matched_total{proxy,fault,type}           HTTP/Redis requests that reached it and matched
 *   faultline_fault_connections_matched_total{proxy,fault,type}        connections a network fault was attached to
 *   faultline_fault_bytes_total{proxy,fault,type,direction}            bytes through a network fault's stage
 *   faultline_proxy_connections_total{proxy,mapping}                   connections through the TCP path
 *   faultline_proxy_active_connections{proxy,mapping}                  client connections open now
 *   faultline_proxy_connect_failures_total{proxy,mapping}              dependency unreachable
 *   faultline_proxy_bytes_total{proxy,mapping,direction}               upstream from clients, downstream back
 *   faultline_proxy_requests_total{proxy,mapping}                      HTTP requests (and Redis commands) received
 */
import type { Registry } from 'prom-client';
import type { ProxyCounters } from '../proxy/index.js';
import { registerSnapshot, type SnapshotValue } from './snapshot.js';

export interface ProxySource {
  proxy: string;
  counters: ProxyCounters;
}

/** Registers the proxy metrics on `registry`; `sources` is read at each scrape (the proxies running then). */
export function registerProxyMetrics(registry: Registry, sources: () => Iterable<ProxySource>): void {
  const each = <T>(pick: (source: ProxySource) => T[], emit: (source: ProxySource, item: T) => SnapshotValue[]) => {
    return (): SnapshotValue[] => {
      const values: SnapshotValue[] = [];
      for (const source of sources()) for (const item of pick(source)) values.push(...emit(source, item));
      return values;
    };
  };
  const network = (source: ProxySource) => source.counters.faults;
  const http = (source: ProxySource) => source.counters.httpFaults ?? [];
  const mappings = (source: ProxySource) => source.counters.mappings;
  const faultLabels = (source: ProxySource, fault: { name: string; type: string }, kind: string) => ({
    proxy: source.proxy,
    fault: fault.name,
    type: fault.type,
    kind,
  });
  const both =
    (
      emit: (
        source: ProxySource,
        fault: { name: string; type: string; active: boolean; applications: number },
        kind: string,
      ) => SnapshotValue[],
    ) =>
    (): SnapshotValue[] => [
      ...each(network, (s, f) => emit(s, f, 'network'))(),
      ...each(http, (s, f) => emit(s, f, 'http'))(),
    ];
  registerSnapshot(registry, {
    name: 'faultline_fault_active',
    help: "Whether the fault is in the proxy's fault list now (1) or retired (0)",
    type: 'gauge',
    collect: both((s, f, kind) => [{ labels: faultLabels(s, f, kind), value: f.active ? 1 : 0 }]),
  });
  registerSnapshot(registry, {
    name: 'faultline_fault_applications_total',
    help: 'Times the fault acted: requests it answered or changed, delays, stalls, paced pieces, holds',
    type: 'counter',
    collect: both((s, f, kind) => [{ labels: faultLabels(s, f, kind), value: f.applications }]),
  });
  registerSnapshot(registry, {
    name: 'faultline_fault_requests_matched_total',
    help: 'Requests that reached an HTTP or Redis fault and matched its method and path',
    type: 'counter',
    collect: each(http, (s, f) => [{ labels: { proxy: s.proxy, fault: f.name, type: f.type }, value: f.requests }]),
  });
  registerSnapshot(registry, {
    name: 'faultline_fault_connections_matched_total',
    help: 'Connections a network fault was attached to',
    type: 'counter',
    collect: each(network, (s, f) => [
      { labels: { proxy: s.proxy, fault: f.name, type: f.type }, value: f.connections },
    ]),
  });
  registerSnapshot(registry, {
    name: 'faultline_fault_bytes_total',
    help: "Bytes through a network fault's stage, by direction (upstream: client to dependency)",
    type: 'counter',
    collect: each(network, (s, f) => [
      { labels: { proxy: s.proxy, fault: f.name, type: f.type, direction: 'upstream' }, value: f.bytesUpstream },
      { labels: { proxy: s.proxy, fault: f.name, type: f.type, direction: 'downstream' }, value: f.bytesDownstream },
    ]),
  });
  const mappingLabels = (s: ProxySource, m: { mapping: string }) => ({ proxy: s.proxy, mapping: m.mapping });
  registerSnapshot(registry, {
    name: 'faultline_proxy_connections_total',
    help: 'Connections through the TCP path (each with its own connection to the dependency)',
    type: 'counter',
    collect: each(mappings, (s, m) => [{ labels: mappingLabels(s, m), value: m.connections }]),
  });
  registerSnapshot(registry, {
    name: 'faultline_proxy_active_connections',
    help: 'Client connections open now',
    type: 'gauge',
    collect: each(mappings, (s, m) => [{ labels: mappingLabels(s, m), value: m.activeConnections }]),
  });
  registerSnapshot(registry, {
    name: 'faultline_proxy_connect_failures_total',
    help: 'Connections whose dependency could not be reached (refused, DNS, TLS handshake)',
    type: 'counter',
    collect: each(mappings, (s, m) => [{ labels: mappingLabels(s, m), value: m.connectFailures }]),
  });
  registerSnapshot(registry, {
    name: 'faultline_proxy_bytes_total',
    help: 'Bytes read, by direction (upstream: from clients; downstream: from the dependency)',
    type: 'counter',
    collect: each(mappings, (s, m) => [
      { labels: { ...mappingLabels(s, m), direction: 'upstream' }, value: m.bytesUpstream },
      { labels: { ...mappingLabels(s, m), direction: 'downstream' }, value: m.bytesDownstream },
    ]),
  });
  registerSnapshot(registry, {
    name: 'faultline_proxy_requests_total',
    help: 'HTTP requests and Redis commands received',
    type: 'counter',
    collect: each(mappings, (s, m) => [
      { labels: mappingLabels(s, m), value: (m.httpExchanges ?? 0) + (m.respCommands ?? 0) },
    ]),
  });
}
