// Reading Kubernetes manifests for `envhook lint` and `envhook convert`: YAML or JSON, several
// documents a file, positions kept (LineCounter) so that findings name file:line:column.
// Parsed as YAML 1.1, as Kubernetes reads manifests (sigs.k8s.io/yaml): `0400` is octal 256
// there, and YAML 1.2 would read it as 400 and write it back without its leading zero.
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { EnvhookError } from '../errors.ts';
import { readStdin } from '../fs/stdin.ts';
import { readRegularFile } from '../fs/read-regular.ts';

/** Far beyond any manifest; kubectl's own limit for a request body is 3 MiB. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

export interface Manifest {
  /** The name findings are reported under (`-` is `<stdin>`). */
  file: string;
  text: string;
  docs: Document.Parsed[];
  lines: LineCounter;
  /** The text is one JSON value (starts with `{` or `[`): convert writes JSON back. */
  json: boolean;
}

export interface Position {
  line: number;
  column: number;
}

export function readManifest(file: string): Manifest {
  const text = file === '-' ? readStdin(MAX_MANIFEST_BYTES, 'manifest') : readFile(file);
  return parseManifest(file === '-' ? '<stdin>' : file, text);
}

export function parseManifest(file: string, text: string): Manifest {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, version: '1.1', prettyErrors: false, uniqueKeys: true });
  // parseAllDocuments returns an EmptyStream (no documents) for empty input.
  return { file, text, docs: Array.isArray(docs) ? docs : [], lines, json: /^\s*[[{]/.test(text) };
}

/** 1-based line and column of a source offset. */
export function positionAt(m: Manifest, offset: number): Position {
  const { line, col } = m.lines.linePos(offset);
  return { line, column: col };
}

function readFile(file: string): string {
  const bytes = readRegularFile(file, MAX_MANIFEST_BYTES + 1);
  if (bytes.length > MAX_MANIFEST_BYTES) throw new EnvhookError(`${file}: larger than ${MAX_MANIFEST_BYTES} bytes`);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
}
