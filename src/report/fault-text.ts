/**
 * How fault's report describes a fault, so its users recognise the table: the scope glyphs, the
 * description strings (with fault's spellings kept where scripts may match on them, e.g.
 * "Frequence"), and the ten-slot timeline cell.
 */
import type { Direction, ResolvedFault, Side } from '../proxy/index.js';
import { networkFault } from '../proxy/faults/declarations.js';

/** fault's glyphs: server side ➡️ ingress, ⬅️ egress, ↔️ both, then 🖧; client side 🖥️ then ⬅️/➡️/↔️. */
export function scopeGlyphs(side: Side = 'server', direction: Direction = 'ingress'): string {
  if (side === 'server') {
    const arrow = direction === 'ingress' ? '➡️' : direction === 'egress' ? '⬅️' : '↔️';
    return `${arrow}🖧`;
  }
  const arrow = direction === 'ingress' ? '⬅️' : direction === 'egress' ? '➡️' : '↔️';
  return `🖥️${arrow}`;
}

/** fault's report line for a validated network fault: its declaration's, after the scope glyphs. */
export function describeFault(fault: ResolvedFault): string {
  return networkFault(fault.type)?.describe?.(fault, scopeGlyphs(fault.side, fault.direction)) ?? fault.type;
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
