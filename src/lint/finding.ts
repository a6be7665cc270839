// One finding of `envhook lint`, and its two output forms. Messages are written by envhook:
// names (containers, volumes), JSON paths and reasons, never a value from the manifest.
import { oneLine } from '../errors.ts';

export type Severity = 'error' | 'warning';

export interface Finding {
  file: string;
  line: number;
  column: number;
  severity: Severity;
  /** The annotation (`envhook.io/env`) or pod field (`spec.runtimeClassName`) concerned. */
  annotation: string;
  /** JSON path inside the annotation's value; '' for the annotation as a whole. */
  path: string;
  message: string;
}

/** `file:line:column: annotation path: problem`; a warning's problem starts with `warning: `. */
export function formatFinding(f: Finding): string {
  const subject = f.path ? `${f.annotation} ${f.path}` : f.annotation;
  return oneLine(`${f.file}:${f.line}:${f.column}: ${subject}: ${f.severity === 'warning' ? 'warning: ' : ''}${f.message}`);
}

export function formatJson(findings: readonly Finding[]): string {
  return JSON.stringify(
    findings.map((f) => ({ ...f, annotation: oneLine(f.annotation), path: oneLine(f.path), message: oneLine(f.message) })),
    null,
    2,
  );
}

export function summary(findings: readonly Finding[]): string {
  const errors = findings.filter((f) => f.severity === 'error').length;
  const warnings = findings.length - errors;
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  return `${n(errors, 'error')}, ${n(warnings, 'warning')}`;
}
