/**
 * The one duration parser. Accepts what fault's `duration` accepted (the parse_duration crate)
 * in the forms people write: `500ms`, `10s`, `1m`, `1m30s`, `1h`, `1.5s`, `2 minutes`, `90`
 * (a bare number is seconds). Returns milliseconds; throws an InputError naming the argument.
 */
import { InputError } from './kernel/errors.js';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  msec: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
};

export const DURATION_FORMS = '500ms, 10s, 1m, 1m30s, 1h, 2 minutes, or a number of seconds';

export function parseDuration(text: string, what = 'duration'): number {
  const input = String(text).trim().toLowerCase();
  if (input === '') throw new InputError(`${what}: empty; write a duration such as ${DURATION_FORMS}`);
  if (/^\d+(\.\d+)?$/.test(input)) return Number(input) * 1000;
  const part = /(\d+(?:\.\d+)?)\s*([a-z]+)\s*/y;
  let total = 0;
  let index = 0;
  while (index < input.length) {
    part.lastIndex = index;
    const match = part.exec(input);
    const unit = match ? UNIT_MS[match[2]!] : undefined;
    if (!match || unit === undefined) {
      throw new InputError(`${what}: "${text}" is not a duration; write one such as ${DURATION_FORMS}`);
    }
    total += Number(match[1]) * unit;
    index = part.lastIndex;
  }
  return total;
}

/** Formats milliseconds the way people write them: 500ms, 10s, 1m30s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(3)}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = +((ms % 60_000) / 1000).toFixed(3);
  return seconds === 0 ? `${minutes}m` : `${minutes}m${seconds}s`;
}
