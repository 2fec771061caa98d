/**
 * The docs' fault tables, generated from the declarations: docs/network.md and docs/http-faults.md
 * hold them between `<!-- fault-table:network -->` and `<!-- /fault-table:network -->` (http
 * likewise), and test/fault-declarations.test.ts holds the docs equal to this.
 * Regenerate: `node scripts/fault-tables.mjs` (after `npm run build`).
 */
import { camelCase, snakeCase, type FaultDeclaration, type FieldDeclaration } from './declaration.js';
import { LIST_FAULTS } from './declarations.js';
import { HTTP_FAULTS } from '../http/declarations.js';

function range(field: FieldDeclaration): string {
  if (field.kind === 'enum') return (field.values ?? []).map((value) => `\`${value}\``).join(', ');
  if (field.kind !== 'number' && field.kind !== 'integer') return '';
  const low = field.above !== undefined ? `> ${field.above}` : field.min !== undefined ? String(field.min) : '';
  const high = field.max !== undefined ? String(field.max) : '';
  if (field.above !== undefined) return high ? `${low}, ≤ ${high}` : low;
  return low || high ? `${low}..${high}` : '';
}

function spellings(field: FieldDeclaration): string {
  const other = new Set([camelCase(field.key), snakeCase(field.key), ...(field.aliases ?? [])]);
  other.delete(field.key);
  return [`\`${field.key}\``, ...[...other].map((name) => `\`${name}\``)].join(' ');
}

function row(fault: FaultDeclaration, field: FieldDeclaration | undefined): string {
  if (!field) return `| \`${fault.type}\` | — | | | | ${fault.help} |`;
  const fallback = field.default === undefined ? (field.required ? 'required' : '') : `\`${field.default}\``;
  const argumentDefault =
    field.argument?.default !== undefined && field.argument.default !== field.default
      ? `, default ${field.argument.default}`
      : '';
  const doors = [
    field.argument ? `argument \`${field.argument.name}\`${argumentDefault}` : '',
    field.flag ? `\`--${field.flag}\`` : '',
    field.toxic ? `Toxiproxy \`${fault.toxic?.type}\`'s \`${field.toxic.attribute}\`` : '',
  ].filter(Boolean);
  const help = `${field.help}${doors.length ? ` (${doors.join(', ')})` : ''}`;
  const names = field.argumentOnly ? '— (an argument only)' : spellings(field);
  return `| \`${fault.type}\` | ${names} | ${field.unit ?? ''} | ${fallback} | ${range(field)} | ${help} |`;
}

/** The markdown table of one plane's faults and their fields. */
export function faultTable(plane: 'network' | 'http'): string {
  const faults: readonly FaultDeclaration[] = plane === 'network' ? LIST_FAULTS : HTTP_FAULTS;
  const lines = ['| fault | field (spellings) | unit | default | range | what it does |', '|---|---|---|---|---|---|'];
  for (const fault of faults) {
    if (fault.fields.length === 0) lines.push(row(fault, undefined));
    for (const field of fault.fields) lines.push(row(fault, field));
  }
  return lines.join('\n');
}

/** `text` with the table between its markers replaced by the generated one (text unchanged without markers). */
export function withFaultTable(text: string, plane: 'network' | 'http'): string {
  const start = `<!-- fault-table:${plane} -->`;
  const end = `<!-- /fault-table:${plane} -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) return text;
  return `${text.slice(0, from + start.length)}\n${faultTable(plane)}\n${text.slice(to)}`;
}
