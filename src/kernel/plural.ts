/**
 * "1 request", "2 requests": the one way every report and message says a count of things, so none reads
 * "1 requests". For units whose plural is not unit + "s", pass it.
 */
export function plural(count: number, unit: string, units = `${unit}s`): string {
  return `${count} ${count === 1 ? unit : units}`;
}
