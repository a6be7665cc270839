// A node for the e2e files of owned copies: a private containerd 2.1 with NRI whose kubelet
// directory and envhook's run directory are tmpfs, as on a node (the kubelet keeps secret volumes
// on tmpfs, and envhook's run directory is /run), and `envhook nri` registered on it. Stopped
// and unmounted at the test's end.
import type { Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { NRI_CONNECTED, prepareCriContainerd, type CriContainerd } from './containerd.ts';
import { startNriProcess, type NriProcess } from '../nri/process.ts';
import { waitFor } from '../wait.ts';

export interface TmpfsNode {
  c: CriContainerd;
  /** The test's own directory (tmpfs): envhook's run directory goes under it. */
  dir: string;
  /** The kubelet's root (tmpfs). */
  kubeletRoot: string;
  /** Stops containerd once (its result kept for a second call). */
  stop(): ReturnType<CriContainerd['stop']>;
  /** Unmounts both tmpfs (once). */
  unmount(): void;
}

/** Mounts a tmpfs of `size` (mount's `size=`, e.g. 64m) on `dir`, made first. */
function tmpfs(dir: string, size: string): string {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir]);
  return dir;
}

/** Starts the node; each tmpfs `size` big. */
export async function startTmpfsNode(t: Test, size: string): Promise<TmpfsNode> {
  const dir = t.testdir();
  const c = prepareCriContainerd({ version: '2.1', nri: true });
  let stopped: ReturnType<CriContainerd['stop']> | undefined;
  const stop = () => (stopped ??= c.stop());
  t.teardown(stop);
  await c.start();
  const kubeletRoot = path.join(c.dir, 'kubelet');
  const mounted = [tmpfs(kubeletRoot, size), tmpfs(dir, size)];
  const unmount = () => mounted.splice(0).forEach((m) => execFileSync('umount', ['-l', m]));
  t.teardown(unmount);
  return { c, dir, kubeletRoot, stop, unmount };
}

/** `envhook nri` on the node's NRI socket and kubelet root, run directory under its `dir`, with `args` (budgets); resolves once containerd says it connected. */
export async function startEnvhookOn(t: Test, node: TmpfsNode, args: string[]): Promise<NriProcess> {
  const { c, kubeletRoot, dir } = node;
  const from = fs.readFileSync(c.paths.log, 'utf8').length;
  const p = startNriProcess(['--socket', c.paths.nriSocket, '--kubelet-root', kubeletRoot, ...args], { dir });
  t.teardown(() => p.stop());
  await waitFor(() => NRI_CONNECTED.test(fs.readFileSync(c.paths.log, 'utf8').slice(from)), 60_000, 'containerd: plugin connected');
  return p;
}
