// "This pod has handed over": a DaemonSet pod's envhook nri that agreed to let a newer one take
// over marks its pod (ENVHOOK_POD_UID, from the downward API) in the run directory,
// `<runDir>/nri-yielded/<pod uid>`. The kubelet may restart that pod's container before the pod
// is deleted (a crash, a liveness failure): the restarted process finds the mark and never
// registers again, so a rollout is never undone by the pod it replaced. Without a pod UID (a
// pre-installed plugin, a process an admin runs) there is no mark: the newest instance wins.
// Marks of pods whose directory the kubelet removed are dropped at each start.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';
import type { Logger } from '../../log.ts';

const POD_UID_ENV = 'ENVHOOK_POD_UID';
const MARKS_DIR = 'nri-yielded';

/** The pod this envhook nri runs in (ENVHOOK_POD_UID), or undefined when not set. */
export function podUidFrom(env: NodeJS.ProcessEnv): string | undefined {
  const v = env[POD_UID_ENV];
  if (v === undefined || v === '') return undefined;
  if (!/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/.test(v))
    throw new EnvhookError(`${POD_UID_ENV} is not a pod UID: set it from the downward API (fieldRef metadata.uid), or leave it unset`);
  return v;
}

export interface YieldMarks {
  has(podUid: string): boolean;
  set(podUid: string): void;
  clear(podUid: string): void;
}

export function yieldMarks(runDir: string, kubeletRoot: string, log: Logger): YieldMarks {
  const dir = path.join(runDir, MARKS_DIR);
  dropGone(dir, kubeletRoot, log);
  return {
    has: (uid) => fs.existsSync(path.join(dir, uid)),
    set(uid) {
      try {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        fs.writeFileSync(path.join(dir, uid), `${process.pid}\n`, { mode: 0o600 });
      } catch (err) {
        log.warn(
          { err, podUid: uid },
          'nri: cannot mark this pod as handed over: a restart of its container before the pod is gone would take the registration back',
        );
      }
    },
    clear: (uid) => fs.rmSync(path.join(dir, uid), { force: true }),
  };
}

/** Marks of pods the kubelet no longer has: those pods are gone, their marks with them. */
function dropGone(dir: string, kubeletRoot: string, log: Logger): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const uid of names) {
    if (fs.existsSync(path.join(kubeletRoot, 'pods', uid))) continue;
    fs.rmSync(path.join(dir, uid), { force: true });
    log.debug({ podUid: uid }, 'nri: hand-over mark of a pod gone removed');
  }
}
