/**
 * ISO 8601 durations as FIS writes them (`PT30S`, `PT5M`, `PT1H30M`, `P1D`): parse to
 * milliseconds, and format milliseconds back. Years, months and weeks are refused: their length
 * in time is not fixed, and FIS ranges are hours at most.
 */
const ISO = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Milliseconds, or undefined when `text` is not such a duration. */
export function parseIsoDuration(text: string): number | undefined {
  const match = ISO.exec(text.trim().toUpperCase());
  if (!match || text.trim().toUpperCase() === 'P' || /T$/.test(text.trim().toUpperCase())) return undefined;
  const [, days, hours, minutes, seconds] = match;
  if (days === undefined && hours === undefined && minutes === undefined && seconds === undefined) return undefined;
  return (
    ((Number(days ?? 0) * 24 + Number(hours ?? 0)) * 60 + Number(minutes ?? 0)) * 60_000 +
    Math.round(Number(seconds ?? 0) * 1000)
  );
}

/** `90_000` → `PT1M30S`; whole hours, minutes and (fractional) seconds. */
export function formatIsoDuration(ms: number): string {
  let rest = Math.round(ms);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1000;
  let text = 'PT';
  if (hours) text += `${hours}H`;
  if (minutes) text += `${minutes}M`;
  if (seconds || text === 'PT') text += `${Number(seconds.toFixed(3))}S`;
  return text;
}

/** For error messages: `PT1M` for 60 000 ms. */
export function describeMs(ms: number): string {
  return formatIsoDuration(ms);
}
