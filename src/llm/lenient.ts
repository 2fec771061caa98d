/**
 * Readings of a model's JSON that are unambiguous though not what the schema asked for: a number
 * sent as a string ("0.8"), an explanation sent as a list of sentences, a list sent bare where
 * the object holding it was asked for. Accepting them saves a repair round-trip. Each wraps the
 * strict schema in a zod preprocess, whose JSON Schema is the strict one's: the endpoint and the
 * prompt still ask for the strict shape.
 */
import { z } from 'zod';

const NUMERIC = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

/** A number, or a string holding only a number. */
export function lenientNumber<T extends z.core.$ZodType>(schema: T) {
  return z.preprocess((value) => (typeof value === 'string' && NUMERIC.test(value) ? Number(value) : value), schema);
}

/** A string, or a list of strings (joined with spaces). */
export function lenientText<T extends z.core.$ZodType>(schema: T) {
  return z.preprocess((value) => (isStringList(value) ? value.join(' ') : value), schema);
}

/** A list of strings; a lone string is a list of one, and null or an empty string an empty list. */
export function lenientStringList<T extends z.core.$ZodType>(schema: T) {
  return z.preprocess((value) => {
    if (value === null || value === '') return [];
    return typeof value === 'string' ? [value] : value;
  }, schema);
}

/** An object `{[key]: list}`, or the list alone. */
export function lenientWrappedList<T extends z.core.$ZodType>(key: string, schema: T) {
  return z.preprocess((value) => (Array.isArray(value) ? { [key]: value } : value), schema);
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string');
}
