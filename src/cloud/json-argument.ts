import { InputError } from '../kernel/errors.js';

/**
 * Parses an argument given as JSON text (the MCP tools take fis-recommender's object arguments
 * as JSON strings, since input schemas stay flat; the CLI takes them as flag values).
 */
export function jsonArgument(text: string, name: string, allowArray = false): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(`${name}: not JSON text; give a JSON object${allowArray ? ' (or an array of them)' : ''}`);
  }
  const ok =
    (typeof value === 'object' && value !== null && !Array.isArray(value)) || (allowArray && Array.isArray(value));
  if (!ok) throw new InputError(`${name}: must be a JSON object${allowArray ? ' or an array of objects' : ''}`);
  return value;
}
