// `envhook lint` and `envhook convert` behind one small interface, built as a bundle of its own
// (dist/envhook-tools.cjs; an asset of the single executable): the yaml package and the
// manifest code stay out of the CLI bundle every container start loads and compiles. The
// commands' commander side (src/cli/lint.ts, convert.ts) loads this only when they run.
import { readManifest } from './manifest/read.ts';
import { lintManifest, type Mode } from './lint/lint-manifest.ts';
import { formatFinding, formatJson, summary } from './lint/finding.ts';
import { convertManifest, type Target } from './convert/convert-manifest.ts';
import { formatNote, type Note } from './convert/note.ts';
import { EnvhookError, oneLine } from './errors.ts';

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

export function runConvert(files: string[], opts: { to: Target; write: boolean; json?: boolean }): ToolOutput {
  // Everything converted before anything is written: a bad file leaves all files as they were.
  const results = files.map((f) => {
    const m = readManifest(f);
    return { file: f, json: m.json, ...convertManifest(m, opts.to) };
  });
  const writes = opts.write ? results.filter((r) => r.changed).map((r) => ({ file: r.file, text: r.text })) : [];
  if (opts.json) return { stdout: `${convertJson(results, opts)}\n`, stderr: '', failed: false, writes };
  const stderr = results.flatMap((r) => r.notes.map((n) => `${formatNote(n)}\n`)).join('');
  if (opts.write) return { stdout: '', stderr, failed: false, writes };
  // Several files to stdout: one YAML stream, `---` between them, as kubectl reads it. JSON
  // values cannot be joined into one document.
  const json = results.length > 1 ? results.find((r) => r.json) : undefined;
  if (json)
    throw new EnvhookError(
      `${json.file} is JSON: several files cannot be printed as one; convert it alone, or use --write (in place) or --json`,
    );
  return { stdout: yamlStream(results.map((r) => r.text)), stderr, failed: false, writes };
}

/** `convert --json`: one array, an object a file; `text` is the converted file (null with --write). */
function convertJson(
  results: { file: string; text: string; notes: Note[]; changed: boolean }[],
  opts: { to: Target; write: boolean },
): string {
  return JSON.stringify(
    results.map((r) => ({
      file: r.file,
      to: opts.to,
      changed: r.changed,
      written: opts.write && r.changed,
      notes: r.notes.map((n) => ({
        line: n.line,
        column: n.column,
        annotation: n.annotation,
        path: n.path,
        message: oneLine(n.message),
      })),
      text: opts.write ? null : r.text,
    })),
    null,
    2,
  );
}

function yamlStream(texts: string[]): string {
  return texts
    .map((text, i) => {
      if (i === 0) return text;
      const before = texts[i - 1]!.endsWith('\n') || texts[i - 1] === '' ? '' : '\n';
      return `${before}${/^---(\s|$)/.test(text) ? '' : '---\n'}${text}`;
    })
    .join('');
}
