// The one place install and uninstall touch the host: a plan is a list of file changes
// computed from what is on disk; applying it takes backups first, then replaces every file
// atomically (temp file in the same directory, fsync, rename, fsync the directory), so a
// crash leaves each file old or new, never torn.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { markIn } from '../version.ts';
import { EnvhookError, errnoReason } from '../errors.ts';
import { backupPath, type Layout } from './layout.ts';
import { unifiedDiff } from './diff.ts';
import { atomicWrite } from '../fs/atomic-write.ts';

export interface Change {
  /** Host path. */
  file: string;
  before: Buffer | undefined;
  /** undefined: remove the file. */
  after: Buffer | undefined;
  mode: number;
  /** Save `before` under the backup directory first (it is the admin's, not ours). */
  backup?: boolean;
  /** Uninstall: the backup has been put back (or is stale): delete it afterwards. */
  dropBackup?: boolean;
  /** A line for the admin, printed with the change. */
  note?: string;
  /** Uninstall: keep `before` (the admin's edit) under this host path, mode 0600, before the change. */
  saveAs?: string;
}

export function readHost(layout: Layout, file: string): Buffer | undefined {
  const real = layout.real(file);
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(real, { throwIfNoEntry: false });
  } catch (cause) {
    throw new EnvhookError(`cannot read ${real}: ${errnoReason(cause)}`, { cause });
  }
  if (!st) return undefined;
  if (!st.isFile()) throw new EnvhookError(`${real}: not a regular file`);
  return fs.readFileSync(real);
}

export function changed(c: Change): boolean {
  if (c.before === undefined || c.after === undefined) return c.before !== c.after || !!c.dropBackup;
  return !c.before.equals(c.after) || !!c.dropBackup;
}

/** Applies the changes in order; returns the backups it created (host paths), for revertChanges. */
export function applyChanges(layout: Layout, changes: Change[]): string[] {
  const created: string[] = [];
  for (const c of changes) {
    if (!changed(c)) continue;
    const real = layout.real(c.file);
    if (c.saveAs && c.before !== undefined) atomicWrite(layout.real(c.saveAs), c.before, { newFileMode: 0o600, mkdir: true });
    if (c.backup && c.before !== undefined) {
      const b = layout.real(backupPath(layout, c.file));
      // the oldest backup is the admin's original: a later install never replaces it
      if (!fs.existsSync(b)) {
        atomicWrite(b, c.before, { newFileMode: 0o600, mkdir: true });
        created.push(backupPath(layout, c.file));
      }
    }
    if (c.after === undefined) fs.rmSync(real, { force: true });
    else if (c.before === undefined || !c.before.equals(c.after)) atomicWrite(real, c.after, { newFileMode: c.mode, mkdir: true });
    if (c.dropBackup) fs.rmSync(layout.real(backupPath(layout, c.file)), { force: true });
  }
  return created;
}

/**
 * Puts back what applyChanges wrote (install only: it drops no backup), last change first, and
 * removes the backups it created, so a failed check leaves every file as it was.
 */
export function revertChanges(layout: Layout, changes: Change[], createdBackups: string[]): void {
  for (const c of [...changes].reverse()) {
    if (!changed(c)) continue;
    if (c.before === undefined) fs.rmSync(layout.real(c.file), { force: true });
    else atomicWrite(layout.real(c.file), c.before, { newFileMode: c.mode });
  }
  for (const b of createdBackups) fs.rmSync(layout.real(b), { force: true });
}

/**
 * One line per change; with `diffs`, below it a unified diff of each text file the admin reads
 * (configs, drop-ins, hooks.d files), and for envhook's own files (ownFiles) their size and
 * sha256: a diff of the front or the bundle says nothing an admin can check.
 */
export function describeChanges(layout: Layout, changes: Change[], { dryRun = false, diffs = false } = {}): string {
  const out: string[] = [];
  for (const c of reportedChanges(changes)) {
    const verb = changeVerb(c);
    const saved = savedAs(layout, c);
    const extra = saved !== undefined ? ` (original saved as ${saved})` : '';
    out.push(`${dryRun ? 'would ' : ''}${verb} ${c.file}${extra}`);
    if (c.note) out.push(`  note: ${c.note}`);
    if (diffs && changed(c)) out.push(ownFiles(layout).includes(c.file) ? ownSummary(c) : diffOf(c));
  }
  return out.filter((l) => l !== '').join('\n');
}

/** The changes install reports: those that change their file, and those kept with a note. */
export function reportedChanges(changes: Change[]): Change[] {
  return changes.filter((c) => changed(c) || c.note);
}

/** Where the admin's original of a change's file is saved first, if it is. */
export function savedAs(layout: Layout, c: Change): string | undefined {
  return c.backup && c.before !== undefined ? backupPath(layout, c.file) : undefined;
}

/** What a change does to its file, as describeChanges and install --json say it. */
export function changeVerb(c: Change): 'create' | 'update' | 'keep' | 'remove' {
  if (c.after === undefined) return 'remove';
  if (c.before === undefined) return 'create';
  return c.before.equals(c.after) ? 'keep' : 'update';
}

/** envhook's own files: the executables install copies (or writes to run the bundle), and its record. */
function ownFiles(layout: Layout): string[] {
  return [layout.bin, layout.front, layout.lib, layout.libMain, layout.state];
}

const sizeAndHash = (b: Buffer) => `${b.length} bytes, sha256 ${sha256(b)}`;

/** What an own file becomes (or, removed, what it was), and what it replaces. */
function ownSummary(c: Change): string {
  if (c.after === undefined) return `  ${sizeAndHash(c.before!)}`;
  const replaced = c.before !== undefined && !c.before.equals(c.after) ? `; replaces ${sizeAndHash(c.before)}` : '';
  // An envhook executable or bundle replaced by another: which build by which (src/version.ts).
  const next = replaced ? markIn(c.after) : undefined;
  const versions = next ? `  envhook ${markIn(c.before!) ?? '(a build without a version mark)'} → ${next}\n` : '';
  return `${versions}  ${sizeAndHash(c.after)}${replaced}`;
}

function diffOf(c: Change): string {
  const texts = [c.before, c.after].map((b) => b ?? Buffer.alloc(0));
  // executables and bundles: a size, not a diff
  if (texts.some((b) => b.includes(0) || b.length > 64 * 1024)) return `  (${(c.after ?? c.before)?.length ?? 0} bytes)`;
  return unifiedDiff(texts[0]!.toString('utf8'), texts[1]!.toString('utf8'), c.file).trimEnd();
}

export function sha256(data: Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** Removes empty directories under `dir` (envhook's prefix), then `dir` itself if empty. */
export function pruneEmptyDirs(layout: Layout, dir: string): void {
  const walk = (real: string): boolean => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(real, { withFileTypes: true });
    } catch {
      return false;
    }
    let empty = true;
    for (const e of entries) {
      if (!(e.isDirectory() && walk(path.join(real, e.name)))) empty = false;
    }
    if (empty) fs.rmdirSync(real);
    return empty;
  };
  walk(layout.real(dir));
}

/** Every directory the changes would create (host paths), deepest first. */
export function createdDirs(layout: Layout, changes: Change[]): string[] {
  const out = new Set<string>();
  for (const c of changes) {
    if (!changed(c) || c.after === undefined) continue;
    for (let d = path.posix.dirname(c.file); d !== '/' && !fs.existsSync(layout.real(d)); d = path.posix.dirname(d)) out.add(d);
  }
  return deepestFirst([...out]);
}

/** Directories (host paths), each before its parent. */
export function deepestFirst(dirs: string[]): string[] {
  const depth = (d: string) => d.split('/').length;
  return [...new Set(dirs)].sort((a, b) => depth(b) - depth(a) || a.localeCompare(b));
}

/**
 * Removes each of `dirs` (deepest first) that is empty; with `dryRun`, removes nothing and
 * counts as gone the files `changes` remove. Returns the directories removed (or that would be).
 */
export function removeEmptyDirs(layout: Layout, dirs: string[], changes: Change[], dryRun: boolean): string[] {
  const gone = new Set(changes.filter((c) => changed(c) && c.after === undefined).map((c) => c.file));
  // the backups uninstall puts back are deleted with their directories under <prefix>/backup
  for (const c of changes) if (c.dropBackup) gone.add(backupPath(layout, c.file));
  const emptied = (d: string): boolean => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(layout.real(d), { withFileTypes: true });
    } catch {
      return false;
    }
    return entries.every((e) => gone.has(path.posix.join(d, e.name)) || (e.isDirectory() && emptied(path.posix.join(d, e.name))));
  };
  const removed: string[] = [];
  for (const d of dirs) {
    if (!fs.existsSync(layout.real(d)) || !emptied(d)) continue;
    if (!dryRun) {
      try {
        fs.rmdirSync(layout.real(d));
      } catch {
        continue; // not empty after all (a nested directory left): kept, not reported
      }
    }
    gone.add(d);
    removed.push(d);
  }
  return removed;
}

/** The outermost directories the changes would create (host paths), so a revert can remove them. */
export function missingDirs(layout: Layout, changes: Change[]): string[] {
  const out = new Set<string>();
  for (const c of changes) {
    if (!changed(c) || c.after === undefined) continue;
    let top: string | undefined;
    for (let d = path.posix.dirname(c.file); d !== '/' && !fs.existsSync(layout.real(d)); d = path.posix.dirname(d)) top = d;
    if (top) out.add(top);
  }
  return [...out];
}
