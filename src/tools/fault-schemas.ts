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

function argumentSchema(field: FieldDeclaration, argument: ArgumentDeclaration): z.ZodType {
  const { min, max } = argumentBounds(field, argument);
  let schema: z.ZodType;
  switch (field.kind) {
    case 'number':
    case 'integer': {
      let number = field.kind === 'integer' ? z.number().int() : z.number();
      if (min !== undefined) number = number.min(min);
      if (max !== undefined) number = number.max(max);
      schema = number;
      break;
    }
    case 'boolean':
      schema = z.boolean();
      break;
    case 'enum':
      schema = z.enum(field.values as [string, ...string[]]);
      break;
    case 'string':
      schema = z.string();
      break;
    case 'strings':
      schema = z.array(z.string());
      break;
  }
  return schema.optional().describe(argument.help);
}

function argumentShape(declaration: FaultDeclaration, label: string): z.ZodRawShape {
  const shape: Record<string, z.ZodType> = {};
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
