// Shared set-up for the `envhook inject` end-to-end tests: a kubelet-like pod with an emptyDir
// `config` (NOT mounted into the container: env files reach it only through envhook), a busybox
// bundle whose config.json carries the runtime's annotations and envhook's, and the CLI run
// with a debug-level log file (so tests can check that no value reaches it).
import tap, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { envhook, makeBundle, makeRootfs } from '../bundle.ts';
import { makePod, rawAnnotations, type Pod } from '../../../scripts/kubelet-pod.ts';

export interface InjectSetup {
  dir: string;
  pod: Pod;
  bundle: string;
  config: string;
  log: string;
  runcRoot: string;
}

let rootfsDir: string | undefined;
/** One busybox rootfs per test process, read-only in every bundle, removed at the end. */
export function sharedRootfs(): string {
  if (rootfsDir) return rootfsDir;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-e2e-'));
  tap.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
  return (rootfsDir = makeRootfs(path.join(tmp, 'rootfs')));
}

/** Annotation values may be given as objects (JSON-encoded here) or as raw text. */
export function setup(t: Test, files: Record<string, string | Buffer>, annotations: Record<string, unknown>, env?: string[]): InjectSetup {
  const dir = t.testdir({});
  const pod = makePod(path.join(dir, 'kubelet'), { emptyDirs: { config: files } });
  const raw = rawAnnotations(annotations);
  const bundle = makeBundle(path.join(dir, 'bundle'), sharedRootfs(), {
    env: env ?? ['PATH=/bin', 'HOME=/'],
    mounts: pod.mounts('app'),
    annotations: { ...pod.annotations('app'), ...raw },
  });
  return {
    dir,
    pod,
    bundle,
    config: path.join(bundle, 'config.json'),
    log: path.join(dir, 'envhook.log'),
    runcRoot: path.join(dir, 'runc-root'),
  };
}

export function inject(s: InjectSetup, ...extra: string[]) {
  return envhook([
    'inject',
    '--bundle',
    s.bundle,
    '--kubelet-root',
    s.pod.kubeletRoot,
    '--log-file',
    s.log,
    '--log-level',
    'debug',
    ...extra,
  ]);
}

export const ref = (key: string, p: string, optional?: boolean) => ({
  fileKeyRef: { volumeName: 'config', path: p, key, ...(optional ? { optional } : {}) },
});
