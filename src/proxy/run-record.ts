/**
 * Which faults a proxy really injected, from its own counters, and the run record of a
 * `faultline proxy` session (kind network) that `faultline coverage` reads (probe/record.ts).
 *
 * A fault injected something when it acted on traffic: a fault whose window no request crossed,
 * that never drew, whose every delay was 0 ms, that lost no segment or (HTTP) that left every
 * exchange it met as it was (a cut past the end of every body) did not, and is not listed
 * (coverage would otherwise count leaves nothing tested). Network faults are named by their type
 * (`latency`, `packet_loss`, …, as the taxonomy's `network` injections name them); HTTP faults
 * as `http_<type>`. Faults the admin API set and later cleared count too (the counters keep them).
 */
import { byCodeUnits } from '../order.js';
import { RUN_RECORD_FORMAT, RUN_RECORD_VERSION, type RunRecord } from '../kernel/run-record.js';
import type { FaultCounters } from './faults/fault.js';
import { networkFault } from './faults/declarations.js';
import type { HttpFaultCounters } from './http/fault.js';
import { httpFault } from './http/declarations.js';
import type { ProxyCounters } from './proxy.js';

/** Whether a network fault changed anything: its declaration's rule (delays and losses by a non-zero amount). */
export function networkFaultActed(counters: FaultCounters): boolean {
  return networkFault(counters.type)?.acted(counters) ?? counters.applications > 0;
}

/**
 * Whether an HTTP fault changed at least one exchange: its declaration's rule, on counters whose `applications`
 * are the exchanges it changed (a won draw that changed nothing counts `unchanged`).
 */
export function httpFaultActed(counters: HttpFaultCounters): boolean {
  return httpFault(counters.type)?.acted(counters) ?? counters.applications > 0;
}

/**
 * The requests that met a network fault on a protocol-aware mapping, each count with its unit ("291 Redis commands",
 * "12 HTTP requests"); undefined when none was seen (a plain TCP mapping, or no traffic).
 */
export function requestsMet(counters: FaultCounters): string | undefined {
  const parts: string[] = [];
  const add = (count: number | undefined, unit: string): void => {
    if (count) parts.push(`${count} ${unit}${count === 1 ? '' : 's'}`);
  };
  add(counters.respCommands, 'Redis command');
  add(counters.httpExchanges, 'HTTP request');
  return parts.length > 0 ? parts.join(' and ') : undefined;
}

/** A count with its unit, singular and plural by an s ("HTTP request", "delay"). */
export interface UnitCount {
  count: number;
  unit: string;
}

/**
 * What fault `name` acted on, as one count, the one the experiment reports: an HTTP fault, the requests it
 * acted on (HTTP requests, Redis commands; a stream's messages are "requests"); a network fault on a
 * protocol-aware mapping, the requests that met it (a blackhole "held 291 Redis commands"); on plain TCP, its
 * applications in its declaration's unit (delays, held connections, slices, …). A fault that changed nothing (a
 * latency of 0 ms) counts 0, as it did not act. `mapping`: the index of the mapping it is set on. Undefined when
 * the proxy keeps no counters for it.
 */
export function actedCount(counters: ProxyCounters, name: string, mapping: number): UnitCount | undefined {
  const http = counters.httpFaults?.find((fault) => fault.name === name);
  if (http) {
    const { respConnections = 0, httpConnections = 0 } = counters.mappings[mapping] ?? {};
    const unit = httpConnections > 0 ? 'HTTP request' : respConnections > 0 ? 'Redis command' : 'request';
    return { count: http.applications, unit };
  }
  const network = counters.faults.find((fault) => fault.name === name);
  if (!network) return undefined;
  const { respCommands = 0, httpExchanges = 0 } = network;
  const met = respCommands + httpExchanges;
  const unit =
    met === 0
      ? (networkFault(network.type)?.counts ?? 'action')
      : httpExchanges === 0
        ? 'Redis command'
        : respCommands === 0
          ? 'HTTP request'
          : 'request';
  return { count: !networkFaultActed(network) ? 0 : met || network.applications, unit };
}

/** The faults that acted, by name, sorted. */
export function faultsThatActed(counters: ProxyCounters): string[] {
  const names = new Set<string>();
  for (const fault of counters.faults) if (networkFaultActed(fault)) names.add(fault.type);
  for (const fault of counters.httpFaults ?? []) if (httpFaultActed(fault)) names.add(`http_${fault.type}`);
  return [...names].sort(byCodeUnits);
}

export interface NetworkRunRecord extends RunRecord {
  kind: 'network';
  injected: string[];
  /** The proxy's counters when it stopped (what `faultline proxy` prints). */
  counters: ProxyCounters;
}

export function networkRunRecord(counters: ProxyCounters, name: string, startedAt: Date): NetworkRunRecord {
  return {
    format: RUN_RECORD_FORMAT,
    version: RUN_RECORD_VERSION,
    kind: 'network',
    name: name.slice(0, 200),
    startedAt: startedAt.toISOString(),
    injected: faultsThatActed(counters),
    counters,
  };
}
