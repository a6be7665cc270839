// A volume laid out exactly as the kubelet's atomic writer (pkg/volume/util/atomic_writer.go)
// does it, including updates:
//   ..2026_11_22_03_20_00.123456789/   the real files (mode as given; nested dirs 0755)
//   ..data -> ..2026_11_22_03_20_00.123456789
//   <top-level name> -> ..data/<top-level name>
// An update writes a new timestamped dir, points `..data_tmp` at it, renames it over `..data`,
// removes visible links no longer in the payload, then the old timestamped dir.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Pod } from './kubelet.ts';

export type Projection = string | Buffer | { data: string | Buffer; mode?: number; uid?: number };
export type Plugin = 'configmap' | 'secret' | 'projected' | 'downward-api';

/** `..2006_01_02_15_04_05.<random digits>` as Go's time format and os.MkdirTemp make it. */
export function timestampedName(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const ts = `${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
  return `..${ts}.${crypto.randomInt(1e9)}`;
}

/** Writes `payload` (visible path → content) into `target`; returns the timestamped dir's path. */
export function atomicWrite(target: string, payload: Record<string, Projection>): string {
  fs.mkdirSync(target, { recursive: true });
  const dataLink = path.join(target, '..data');
  const oldTs = fs.lstatSync(dataLink, { throwIfNoEntry: false }) ? fs.readlinkSync(dataLink) : undefined;
  let tsName = timestampedName();
  while (fs.existsSync(path.join(target, tsName))) tsName = timestampedName();
  const tsDir = path.join(target, tsName);
  fs.mkdirSync(tsDir, { mode: 0o755 });
  fs.chmodSync(tsDir, 0o755);
  for (const [rel, proj] of Object.entries(payload)) {
    if (path.isAbsolute(rel) || rel.split('/').includes('..') || rel.startsWith('..')) throw new Error(`invalid path ${rel}`);
    const { data, mode = 0o644, uid } = typeof proj === 'string' || Buffer.isBuffer(proj) ? { data: proj } : proj;
    const file = path.join(tsDir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o777 });
    fs.writeFileSync(file, data);
    fs.chmodSync(file, mode);
    if (uid !== undefined) fs.chownSync(file, uid, 0);
  }
  const visible = new Set(Object.keys(payload).map((rel) => rel.split('/')[0]!));
  for (const name of visible) {
    const link = path.join(target, name);
    if (!fs.lstatSync(link, { throwIfNoEntry: false })) fs.symlinkSync(path.join('..data', name), link);
  }
  const tmpLink = path.join(target, '..data_tmp');
  fs.symlinkSync(tsName, tmpLink);
  fs.renameSync(tmpLink, dataLink);
  if (oldTs !== undefined) {
    for (const name of fs.readdirSync(path.join(target, oldTs))) {
      if (!visible.has(name)) fs.rmSync(path.join(target, name), { force: true });
    }
    fs.rmSync(path.join(target, oldTs), { recursive: true, force: true });
  }
  return tsDir;
}

/** The host directory of atomic-write volume `name` of `pod` (the kubelet's plugin dir). */
export function atomicVolumeDir(pod: Pick<Pod, 'dir'>, plugin: Plugin, name: string): string {
  return path.join(pod.dir, 'volumes', `kubernetes.io~${plugin}`, name);
}

/** Creates the volume as the kubelet would, with files owned by root; returns its directory. */
export function makeAtomicVolume(pod: Pick<Pod, 'dir'>, plugin: Plugin, name: string, payload: Record<string, Projection>): string {
  const dir = atomicVolumeDir(pod, plugin, name);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  atomicWrite(dir, payload);
  return dir;
}
