/**
 * The scenario tools' fault arguments as zod shapes, derived from the faults' declarations
 * (src/proxy/faults/declaration.ts): each field's `argument` gives the name and description, the
 * field its kind, values and range. Leaf imports only, so listing the tools loads no proxy code.
 */
import * as z from 'zod';
import type { ArgumentDeclaration, FaultDeclaration, FieldDeclaration } from '../proxy/faults/declaration.js';

/** The published bounds of an argument: its own, else its field's (an exclusive bound is published as inclusive). */
export function argumentBounds(field: FieldDeclaration, argument: ArgumentDeclaration): { min?: number; max?: number } {
  if (argument.unitArgument !== undefined) return { min: argument.min, max: argument.max };
  return { min: argument.min ?? field.min ?? field.above, max: argument.max ?? field.max };
}

// Typed by zod's core interface: relating a zod schema to the classic z.ZodType class costs the type
// checker about a second of the build, paid by the first such site (src/tools/arguments.ts has the same note).
function argumentSchema(field: FieldDeclaration, argument: ArgumentDeclaration): z.core.$ZodType {
  const { min, max } = argumentBounds(field, argument);
  switch (field.kind) {
    case 'number':
    case 'integer': {
      let number = field.kind === 'integer' ? z.number().int() : z.number();
      if (min !== undefined) number = number.min(min);
      if (max !== undefined) number = number.max(max);
      return number.optional().describe(argument.help);
    }
    case 'boolean':
      return z.boolean().optional().describe(argument.help);
    case 'enum':
      return z
        .enum(field.values as [string, ...string[]])
        .optional()
        .describe(argument.help);
    case 'string':
      return z.string().optional().describe(argument.help);
    case 'strings':
      return z.array(z.string()).optional().describe(argument.help);
  }
}

function argumentShape(declaration: FaultDeclaration, label: string): z.ZodRawShape {
  const shape: Record<string, z.core.$ZodType> = {};
  for (const field of declaration.fields) {
    if (field.argument)
      shape[field.argument.name] = argumentSchema(field, { ...field.argument, help: label + field.argument.help });
  }
  return shape;
}

/** A fault's own arguments, in declaration order. */
export const faultArgumentShape = (declaration: FaultDeclaration): z.ZodRawShape => argumentShape(declaration, '');

/** The same, each description starting with the fault's type (`latency: …`): for a schema taking every fault's. */
export const labelledArgumentShape = (declaration: FaultDeclaration): z.ZodRawShape =>
  argumentShape(declaration, `${declaration.type}: `);
