/**
 * JUnit XML for CI: one test case per expectation (passed; failed with its figure and moment;
 * inconclusive and not-checked ones skipped with why), in the Ant/Surefire shape CI systems read
 * (testsuites > testsuite > testcase > failure | skipped, properties, system-out).
 */
import { formatDuration } from '../../duration.js';
import type { ExperimentResult } from '../result.js';

/** Characters XML 1.0 does not allow, even escaped. */
const INVALID_XML = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const escape = (text: string): string =>
  text
    .replace(INVALID_XML, '\uFFFD')
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);

export function renderJunit(result: ExperimentResult): string {
  const seconds = (Date.parse(result.endedAt) - Date.parse(result.startedAt)) / 1000;
  const failures = result.expectations.filter((e) => e.status === 'failed').length;
  const skipped = result.expectations.filter((e) => e.status === 'inconclusive' || e.status === 'not_checked').length;
  const classname = `faultline.experiment.${result.title.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '') || 'experiment'}`;
  const cases = result.expectations.map((e) => {
    const name = escape(`${e.id}: ${e.title}`);
    const head =
      `    <testcase classname="${escape(classname)}" name="${name}" ` +
      `time="${(durationOf(result, e) / 1000).toFixed(3)}">`;
    if (e.status === 'passed') return `${head}\n      <system-out>${escape(e.reason)}</system-out>\n    </testcase>`;
    if (e.status === 'failed') {
      const when = e.atMs === null ? '' : ` at ${formatDuration(e.atMs)}`;
      return (
        `${head}\n      <failure ` +
        `message="${escape(`${e.figure || e.reason}${when}`)}" ` +
        `type="${escape(e.kind)}">${escape(e.reason)}</failure>\n    ` +
        `</testcase>`
      );
    }
    return (
      `${head}\n      <skipped ` +
      `message="${escape(`${e.status === 'not_checked' ? 'not checked' : 'inconclusive'}: ${e.reason}`)}"/>\n ` +
      `   </testcase>`
    );
  });
  const properties = [
    ['verdict', result.verdict],
    ['seed', String(result.seed ?? '')],
    ['aborted', result.aborted ? `${formatDuration(result.aborted.atMs)}: ${result.aborted.rule}` : 'no'],
  ]
    .map(([name, value]) => `      <property name="${escape(name!)}" value="${escape(value!)}"/>`)
    .join('\n');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="faultline experiment" ` +
      `tests="${result.expectations.length}" failures="${failures}" ` +
      `errors="0" skipped="${skipped}" time="${seconds.toFixed(3)}">`,
    `  <testsuite name="${escape(result.title)}" ` +
      `tests="${result.expectations.length}" failures="${failures}" ` +
      `errors="0" skipped="${skipped}" time="${seconds.toFixed(3)}" ` +
      `timestamp="${result.startedAt.replace(/\.\d+Z$/, '')}">`,
    '    <properties>',
    properties,
    '    </properties>',
    ...cases,
    `    <system-out>${escape([`verdict: ${result.verdict}`, ...result.verdictReasons].join('\n'))}</system-out>`,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/**
 * How long an expectation was checked for: a command's own run, else the window its figure was
 * measured over (an SLO's requests, an HTTP check's probes, a step's run); 0 for free text.
 */
function durationOf(result: ExperimentResult, e: ExperimentResult['expectations'][number]): number {
  if (e.kind === 'command') {
    const command = result.commands.find((candidate) => candidate.id === e.id);
    return command ? Math.max(0, command.endedAtMs - command.startedAtMs) : 0;
  }
  return e.window ? Math.max(0, e.window.toMs - e.window.fromMs) : 0;
}
