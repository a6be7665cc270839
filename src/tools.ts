// `envhook lint` and `envhook convert` behind one small interface, built as a bundle of its own
// (dist/envhook-tools.cjs; an asset of the single executable): the yaml package and the
// manifest code stay out of the CLI bundle every container start loads and compiles. The
// commands' commander side (src/cli/lint.ts, convert.ts) loads this only when they run.
import { readManifest } from './manifest/read.ts';
import { lintManifest, type Mode } from './lint/lint-manifest.ts';
import { formatFinding, formatJson, summary } from './lint/finding.ts';
import { convertManifest, type Target } from './convert/convert-manifest.ts';
import { formatNote } from './convert/note.ts';

export interface ToolOutput {
  stdout: string;
  stderr: string;
  /** lint found an error (exit status 1). */
  failed: boolean;
  /** convert --write: files to replace, with their new text (only those that changed). */
  writes: { file: string; text: string }[];
}

export function runLint(files: string[], opts: { format: 'text' | 'json'; mode: Mode }): ToolOutput {
  // Every file read first: a missing file fails the run before any output.
  const manifests = files.map(readManifest);
  const findings = manifests.flatMap((m) => lintManifest(m, { mode: opts.mode }));
  const failed = findings.some((f) => f.severity === 'error');
  if (opts.format === 'json') return { stdout: `${formatJson(findings)}\n`, stderr: '', failed, writes: [] };
  return { stdout: findings.map((f) => `${formatFinding(f)}\n`).join(''), stderr: `${summary(findings)}\n`, failed, writes: [] };
}

export function runConvert(files: string[], opts: { to: Target; write: boolean }): ToolOutput {
  // Everything converted before anything is written: a bad file leaves all files as they were.
  const results = files.map((f) => ({ file: f, ...convertManifest(readManifest(f), opts.to) }));
  const stderr = results.flatMap((r) => r.notes.map((n) => `${formatNote(n)}\n`)).join('');
  if (!opts.write) return { stdout: results.map((r) => r.text).join(''), stderr, failed: false, writes: [] };
  return { stdout: '', stderr, failed: false, writes: results.filter((r) => r.changed).map((r) => ({ file: r.file, text: r.text })) };
}
