// A container's start as the copier gets it (mirror/copy.ts StartJob), from kubelet-laid-out
// volumes on real files: each volume's data directory opened as the plan opens it, closed at the
// test's end.
import type { Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { atomicWrite } from '../../../scripts/kubelet-pod.ts';
import { closeDataDir, openDataDir } from '../../../src/fs/datadir.ts';
import type { CopyBudgets } from '../../../src/mirror/budget.ts';
import type { StartJob } from '../../../src/mirror/copy.ts';

const owners = { defaultOwner: { hostUid: 1000 }, items: new Map<string, { hostUid: number }>() };

/** The kubelet's volume `volume` of pod `podUid` under `dir`, with `files`. */
function kubeletVolume(dir: string, podUid: string, volume: string, files: Record<string, string>): string {
  const kubelet = path.join(dir, 'kubelet', podUid, volume);
  atomicWrite(kubelet, files);
  return kubelet;
}

/** The start job of `volumes` (name: files) of pod `podUid`, copies under `runDir`. */
export function startOf(
  t: Test,
  dir: string,
  runDir: string,
  podUid: string,
  volumes: Record<string, Record<string, string>>,
  budgets?: CopyBudgets,
): StartJob {
  const jobs = Object.entries(volumes).map(([volume, files]) => {
    const data = openDataDir(volume, kubeletVolume(dir, podUid, volume, files));
    t.teardown(() => closeDataDir(data));
    return { place: { runDir, podUid, volume }, data: { fd: data.fd, timestamped: data.timestamped! }, owners };
  });
  return { jobs, budgets };
}

/** A tmpfs of `size` outside the test's directory (which tap removes before a teardown could unmount it). */
export function tinyTmpfs(t: Test, size: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-budget-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  t.teardown(() => {
    execFileSync('umount', ['-l', dir]);
    fs.rmdirSync(dir);
  });
  return dir;
}
