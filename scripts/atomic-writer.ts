// A volume laid out exactly as the kubelet's atomic writer (pkg/volume/util/atomic_writer.go,
// Write) does it, updates included, with the same file operations in the same order:
//   1. readlink ..data (the old timestamped dir); compare the payload with it: nothing to do
//      when every file is the same and no path went away (the visible links are still made);
//   2. mkdir ..<UTC 2006_01_02_15_04_05>.<random> with 0700 (os.MkdirTemp), then chmod 0755;
//   3. for each file: mkdir -p its parent (0777 & umask), create it with its mode, write,
//      close (os.WriteFile), chmod to its mode, and chown when the projection has a user
//      (KEP-5936's FsUser: the group left as is);
//   4. symlink ..data_tmp -> the new dir; rename ..data_tmp over ..data (the atomic swap);
//   5. the visible top-level symlinks <name> -> ..data/<name> that are missing (after the swap:
//      the kubelet makes them last);
//   6. remove the top-level visible names the new payload no longer has;
//   7. rm -rf the old timestamped dir.
// Go iterates the payload map in random order; here files are written in the payload's order.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

export type Projection = string | Buffer | { data: string | Buffer; mode?: number; uid?: number };
export type Plugin = 'configmap' | 'secret' | 'projected' | 'downward-api';

/** Called at the writer's steps, for tests and benchmarks that time them. */
export interface WriteHooks {
  /** The new files are written; ..data still points at the old directory. */
  beforeRename?: (tsDir: string) => void;
  /** ..data points at the new directory; the old one is not yet removed. */
  afterRename?: (tsDir: string) => void;
}

/** `..2006_01_02_15_04_05.<random digits>` as Go's time format and os.MkdirTemp make it. */
export function timestampedName(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const ts = `${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
  return `..${ts}.${crypto.randomInt(2 ** 32 - 1)}`;
}

/** Writes `payload` (visible path → content) into `target`; returns the timestamped dir's path. */
export function atomicWrite(target: string, payload: Record<string, Projection>, hooks: WriteHooks = {}): string {
  const steps = atomicWriteSteps(target, payload);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    hooks[r.value.step === 'written' ? 'beforeRename' : 'afterRename']?.(r.value.tsDir);
  }
}

export interface WriteStep {
  /** 'written': files complete, ..data not yet swapped; 'renamed': ..data swapped. */
  step: 'written' | 'renamed';
  tsDir: string;
}

/** atomicWrite one step at a time: a test may wait (for a watcher) between the steps. */
export function* atomicWriteSteps(target: string, payload: Record<string, Projection>): Generator<WriteStep, string> {
  const files = Object.entries(payload).map(([rel, proj]) => {
    if (path.isAbsolute(rel) || rel.split('/').includes('..') || rel.startsWith('..')) throw new Error(`invalid path ${rel}`);
    const { data, mode = 0o644, uid } = typeof proj === 'string' || Buffer.isBuffer(proj) ? { data: proj } : proj;
    return { rel: path.normalize(rel), data: Buffer.from(data), mode, uid };
  });
  fs.mkdirSync(target, { recursive: true });
  const dataLink = path.join(target, '..data');
  // (1)
  const oldTs = fs.lstatSync(dataLink, { throwIfNoEntry: false }) ? fs.readlinkSync(dataLink) : undefined;
  const visible = new Set(files.map((f) => f.rel.split('/')[0]!));
  let toRemove: string[] = [];
  let tsName = oldTs;
  if (oldTs === undefined || needsWrite(path.join(target, oldTs), files, (toRemove = removedPaths(path.join(target, oldTs), files)))) {
    // (2)
    do tsName = timestampedName();
    while (fs.existsSync(path.join(target, tsName)));
    const tsDir = path.join(target, tsName);
    fs.mkdirSync(tsDir, { mode: 0o700 });
    fs.chmodSync(tsDir, 0o755);
    // (3)
    for (const f of files) {
      const file = path.join(tsDir, f.rel);
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o777 });
      fs.writeFileSync(file, f.data, { mode: f.mode });
      fs.chmodSync(file, f.mode);
      if (f.uid !== undefined) fs.chownSync(file, f.uid, -1);
    }
    // (4)
    yield { step: 'written', tsDir };
    const tmpLink = path.join(target, '..data_tmp');
    fs.symlinkSync(tsName, tmpLink);
    fs.renameSync(tmpLink, dataLink);
    yield { step: 'renamed', tsDir };
  } else {
    toRemove = [];
  }
  // (5)
  for (const name of visible) {
    const link = path.join(target, name);
    if (!fs.lstatSync(link, { throwIfNoEntry: false })) fs.symlinkSync(path.join('..data', name), link);
  }
  // (6) only top-level names: the rest goes with the old directory
  for (const name of toRemove.filter((rel) => !rel.includes('/'))) fs.rmSync(path.join(target, name), { force: true });
  // (7)
  if (oldTs !== undefined && tsName !== oldTs) fs.rmSync(path.join(target, oldTs), { recursive: true, force: true });
  return path.join(target, tsName!);
}

/** Paths of the old directory that the payload no longer has, parents counted (kubelet: pathsToRemove). */
function removedPaths(oldDir: string, files: { rel: string }[]): string[] {
  const keep = new Set<string>();
  for (const f of files) for (let p = f.rel; p !== '.'; p = path.dirname(p)) keep.add(p);
  const old = fs.existsSync(oldDir) ? (fs.readdirSync(oldDir, { recursive: true }) as string[]) : [];
  return old.filter((rel) => !keep.has(rel));
}

/** The kubelet writes when any file differs from the old directory's or a path went away. */
function needsWrite(oldDir: string, files: { rel: string; data: Buffer }[], removed: string[]): boolean {
  if (removed.length > 0) return true;
  return files.some((f) => {
    const old = path.join(oldDir, f.rel);
    return !fs.lstatSync(old, { throwIfNoEntry: false }) || !fs.readFileSync(old).equals(f.data);
  });
}

/** The host directory of atomic-write volume `name` of `pod` (the kubelet's plugin dir). */
export function atomicVolumeDir(pod: { dir: string }, plugin: Plugin, name: string): string {
  return path.join(pod.dir, 'volumes', `kubernetes.io~${plugin}`, name);
}

/** Creates the volume as the kubelet would, with files owned by root; returns its directory. */
export function makeAtomicVolume(pod: { dir: string }, plugin: Plugin, name: string, payload: Record<string, Projection>): string {
  const dir = atomicVolumeDir(pod, plugin, name);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  atomicWrite(dir, payload);
  return dir;
}
