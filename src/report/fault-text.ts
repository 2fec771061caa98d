/**
 * How fault's report describes a fault, so its users recognise the table: the scope glyphs, the
 * description strings (with fault's spellings kept where scripts may match on them, e.g.
 * "Frequence"), and the ten-slot timeline cell.
 */
import type { Direction, FaultSpec, Side } from '../proxy/index.js';
import { NETWORK_FAULT_DEFAULTS } from '../proxy/vocabulary.js';

/** fault's glyphs: server side ➡️ ingress, ⬅️ egress, ↔️ both, then 🖧; client side 🖥️ then ⬅️/➡️/↔️. */
export function scopeGlyphs(side: Side = 'server', direction: Direction = 'ingress'): string {
  if (side === 'server') {
    const arrow = direction === 'ingress' ? '➡️' : direction === 'egress' ? '⬅️' : '↔️';
    return `${arrow}🖧`;
  }
  const arrow = direction === 'ingress' ? '⬅️' : direction === 'egress' ? '➡️' : '↔️';
  return `🖥️${arrow}`;
}

export function describeFault(fault: FaultSpec): string {
  const scope = scopeGlyphs(fault.side, fault.direction);
  switch (fault.type) {
    case 'latency':
      return (
        `Latency: ${scope}, Per Read/Write Op.: ${fault.perOp ?? false}, Distribution: ${fault.distribution ?? 'normal'}, ` +
        `Mean: ${fault.latencyMs.toFixed(2)} ms, Stddev: ${(fault.deviationMs ?? 0).toFixed(2)} ms`
      );
    case 'jitter':
      return `Jitter: ${scope}Amplitude: ${fault.amplitudeMs.toFixed(2)}ms, Frequence ${(fault.frequencyHz ?? NETWORK_FAULT_DEFAULTS.jitterFrequencyHz).toFixed(2)}Hz`;
    case 'bandwidth':
      return `Bandwidth: ${scope}Rate: ${Math.round(fault.bytesPerSecond)}Bps${fault.scope === 'shared' ? ' (shared)' : ''}`;
    case 'packet_loss': {
      const model = fault.model ?? 'bernoulli';
      return `Packet Loss: ${scope}Rate: ${((fault.lossRate ?? 0.05) * 100).toFixed(2)}%, Model: ${model}`;
    }
    case 'blackhole':
      return `Blackhole: ${scope}`;
    case 'stall':
      return `Stall: ${scope}Timeout: ${fault.timeoutMs} ms`;
    case 'reset_peer':
      return `Reset Peer: ${scope}After: ${fault.afterMs} ms`;
    case 'slow_close':
      return `Slow Close: ${scope}Delay: ${fault.delayMs} ms`;
    case 'slicer':
      return `Slicer: ${scope}Average Size: ${fault.averageSize} B, Variation: ${fault.sizeVariation ?? 0} B, Delay: ${fault.delayUs ?? 0} µs`;
    case 'limit_data':
      return `Limit Data: ${scope}Bytes: ${fault.bytes}`;
  }
}

/**
 * fault's timeline cell: ten slots, slot i (at i/10 of the run) is `x` when the fault is active
 * there — `0% \`.xx.......\` 100%` for a fault from 10% to 30%.
 */
export function timelineCell(startFraction: number, endFraction: number): string {
  let slots = '';
  for (let i = 0; i < 10; i += 1) {
    const position = i / 10;
    slots += position >= startFraction - 1e-9 && position < endFraction - 1e-9 ? 'x' : '.';
  }
  return `0% \`${slots}\` 100%`;
}
