// <prefix>/state.json: what each runtime's install wrote, so that uninstall removes exactly
// that, a file shared by two runtimes (the executables) stays until the last one goes, and a
// reinstall can tell envhook's previous files (replaced freely) from an admin's (backed up).
import fs from 'node:fs';
import { EnvhookError, errnoReason } from '../errors.ts';
import type { Layout } from './layout.ts';
import type { InstallKey } from './mode.ts';
import type { Change } from './fsops.ts';
import type { KeyEdit } from './key-edit.ts';

export interface RuntimeRecord {
  /** The admin config file install registered in. */
  config: string;
  /** Files envhook wrote whole: host path → sha256 of what it wrote. */
  files: Record<string, string>;
  /** Admin files carrying envhook's block. */
  blocks: string[];
  /** Keys of admin files changed in place (--enable-nri), each put back by uninstall. */
  edits?: KeyEdit[];
  /** Directories install created (host paths): removed by uninstall when they are empty. */
  dirs?: string[];
  /** NRI mode: whether install was asked --nri-required (absent in state files written before it was recorded). */
  nriRequired?: boolean;
  /** NRI mode: --external-plugin, NRI switched on for a plugin run elsewhere; no plugin file. */
  externalPlugin?: boolean;
  /**
   * The runtime's binary install was named with --containerd / --crio (a path of the machine
   * install ran on): status and doctor ask the same one when not named again. Absent: the node's.
   */
  binary?: string;
}

export interface State {
  version: 1;
  runtimes: Partial<Record<InstallKey, RuntimeRecord>>;
}

export function readState(layout: Layout): State {
  let text: string;
  try {
    text = fs.readFileSync(layout.real(layout.state), 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, runtimes: {} };
    throw new EnvhookError(`cannot read ${layout.state}: ${errnoReason(cause)}`, { cause });
  }
  try {
    const state = JSON.parse(text) as State;
    if (state.version !== 1 || typeof state.runtimes !== 'object' || state.runtimes === null) throw new Error('shape');
    if (!Object.values(state.runtimes).every(validRecord)) throw new Error('shape');
    return state;
  } catch (cause) {
    throw new EnvhookError(`${layout.state} is not an envhook install state file`, { cause: new Error('state syntax') });
  }
}

function validRecord(rec: unknown): boolean {
  const r = rec as RuntimeRecord;
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  const edit = (e: KeyEdit) =>
    typeof e?.file === 'string' &&
    strings(e.table) &&
    typeof e.key === 'string' &&
    typeof e.to === 'string' &&
    (e.from === null || typeof e.from === 'string');
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.files === 'object' &&
    r.files !== null &&
    strings(r.blocks) &&
    (r.dirs === undefined || strings(r.dirs)) &&
    (r.nriRequired === undefined || typeof r.nriRequired === 'boolean') &&
    (r.externalPlugin === undefined || typeof r.externalPlugin === 'boolean') &&
    (r.binary === undefined || typeof r.binary === 'string') &&
    (r.edits === undefined || (Array.isArray(r.edits) && r.edits.every(edit)))
  );
}

/** The change that writes `state` (or removes the file when no runtime is left). */
export function stateChange(layout: Layout, state: State, before: Buffer | undefined): Change {
  const empty = Object.keys(state.runtimes).length === 0;
  return { file: layout.state, before, after: empty ? undefined : Buffer.from(JSON.stringify(state, null, 2) + '\n'), mode: 0o644 };
}

/** True when some runtime other than `except` recorded writing `file` with hash `hash` (any hash if omitted). */
export function ownedByOther(state: State, except: InstallKey, file: string): boolean {
  return Object.entries(state.runtimes).some(([r, rec]) => r !== except && rec !== undefined && file in rec.files);
}

export function recordedHash(state: State, file: string): string[] {
  return Object.values(state.runtimes).flatMap((rec) => (rec && rec.files[file] ? [rec.files[file]] : []));
}

/** True when `rec` marks the admin file `file` (its block or an edited key there). */
export function marks(rec: RuntimeRecord, file: string): boolean {
  return rec.blocks.includes(file) || (rec.edits ?? []).some((e) => e.file === file);
}

/** The admin files `rec` marks. */
export function markedFiles(rec: RuntimeRecord): string[] {
  return [...new Set([...rec.blocks, ...(rec.edits ?? []).map((e) => e.file)])];
}
