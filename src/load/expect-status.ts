/**
 * Which HTTP statuses count as success (`expect_status`): a comma-separated list of codes
 * ("200"), inclusive ranges ("200-299") and classes ("2xx"), e.g. "2xx,3xx" (the default) or
 * "200-299,404". Anything else is an error of class http_5xx (5xx) or http_status (the rest).
 */
import { InputError } from '../kernel/errors.js';

export const DEFAULT_EXPECTED_STATUS = '2xx,3xx';

/** Inclusive [low, high] ranges of expected statuses. */
export type ExpectedStatus = ReadonlyArray<readonly [number, number]>;

export function parseExpectedStatus(text: string, argument = 'expect_status'): ExpectedStatus {
  const ranges: Array<readonly [number, number]> = [];
  const parts = text.split(',').map((part) => part.trim());
  for (const part of parts) {
    const klass = /^([1-5])xx$/i.exec(part);
    const range = /^(\d{3})\s*-\s*(\d{3})$/.exec(part);
    const code = /^(\d{3})$/.exec(part);
    if (klass) ranges.push([Number(klass[1]) * 100, Number(klass[1]) * 100 + 99]);
    else if (range && Number(range[1]) <= Number(range[2])) ranges.push([Number(range[1]), Number(range[2])]);
    else if (code) ranges.push([Number(code[1]), Number(code[1])]);
    else {
      throw new InputError(
        `${argument}: "${part}" is not a status code (200), a range ` +
          `(200-299) or a class (2xx); give a comma-separated list such as ` +
          `"2xx,3xx" or "200-299,404"`,
      );
    }
  }
  for (const [low, high] of ranges) {
    if (low < 100 || high > 599) throw new InputError(`${argument}: statuses run from 100 to 599, got "${text}"`);
  }
  return ranges;
}

export function isExpectedStatus(expected: ExpectedStatus, status: number): boolean {
  for (const [low, high] of expected) if (status >= low && status <= high) return true;
  return false;
}
