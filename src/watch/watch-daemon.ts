// `envhook watch`'s loop, for nodes on the shim (no NRI daemon): the records in the run
// directory (one a pod, written by the shim at create) feed the registry. New and changed
// records are picked up by inotify on the records directory, and by a rescan every `rescanMs`
// for anything inotify missed. A pod whose directory is gone is dropped, its record deleted and
// its owned copies removed (`<runDir>/volumes/<pod uid>/`, which the shim made at create and the
// watcher keeps in step): the kubelet removes the directory when the pod's volumes are torn
// down. Copies of a pod with no record whose directory is gone are removed at each rescan too.
import fs from 'node:fs';
import path from 'node:path';
import { describeError, EnvhookError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { podUidOfRecord, readOwnersRecord, watchVolumesOf } from './record.ts';
import { createRegistry, type Registry, type RegistryOptions } from './registry.ts';
import { ensureRunDir } from './run-dir.ts';
import { podsWithCopies, removePodCopies } from '../mirror/remove.ts';

export interface DaemonOptions {
  runDir: string;
  kubeletRoot: string;
  log: Logger;
  /** Rescan of the records and of the pods' directories. Default 5000 ms. */
  rescanMs?: number;
  registry?: Omit<RegistryOptions, 'log' | 'onVolumeGone'>;
}

export interface WatchDaemon {
  registry: Registry;
  /** Reads the records directory now (also runs on its events and every rescanMs). */
  sync(): void;
  stop(): void;
}

interface Known {
  podDir: string;
  /** ino:size:mtime of the record file as last read: a rewrite changes it. */
  version: string;
}

/** Throws EnvhookError when the run directory is not root's alone (run-dir.ts). */
export function startWatchDaemon(opts: DaemonOptions): WatchDaemon {
  const { runDir, log } = opts;
  const dir = ensureRunDir(runDir);
  const known = new Map<string, Known>();
  const refused = new Set<string>(); // record versions already logged as refused
  const registry = createRegistry({ ...opts.registry, log, onVolumeGone: (uid) => checkPod(uid) });

  const drop = (uid: string, why: string): void => {
    known.delete(uid);
    registry.remove(uid);
    log.info({ podUid: uid, why }, 'pod dropped');
  };
  const dropCopies = (uid: string): void => {
    try {
      if (removePodCopies(runDir, uid)) log.info({ podUid: uid }, "pod's owned copies removed");
    } catch (err) {
      log.warn({ podUid: uid, err }, `owned copies not removed: ${describeError(err)}`);
    }
  };
  const checkPod = (uid: string): void => {
    const k = known.get(uid);
    if (!k || fs.existsSync(k.podDir)) return;
    fs.rmSync(path.join(dir, `${uid}.json`), { force: true });
    drop(uid, 'pod directory is gone');
    dropCopies(uid);
  };
  /** Copies whose pod directory is gone (a pod the watcher never knew, or knew before a restart). */
  const sweepCopies = (): void => {
    for (const uid of podsWithCopies(runDir)) {
      if (!known.has(uid) && !fs.existsSync(path.join(opts.kubeletRoot, 'pods', uid))) dropCopies(uid);
    }
  };
  const load = (uid: string, name: string, version: string): void => {
    try {
      const record = readOwnersRecord(runDir, name);
      const expected = path.join(opts.kubeletRoot, 'pods', uid);
      if (record.podDir !== expected)
        throw new EnvhookError(
          `owners record of pod ${JSON.stringify(uid)}: /podDir: is not ${expected} (kubelet root ${opts.kubeletRoot})`,
        );
      registry.add(uid, watchVolumesOf(record, runDir));
      known.set(uid, { podDir: record.podDir, version });
      checkPod(uid);
    } catch (err) {
      if (known.has(uid)) drop(uid, 'record refused');
      if (refused.size > 1024) refused.clear();
      if (!refused.has(`${uid}:${version}`)) log.warn({ podUid: uid, err }, `owners record refused: ${describeError(err)}`);
      refused.add(`${uid}:${version}`);
    }
  };
  const sync = (): void => {
    const seen = new Set<string>();
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch (err) {
      log.warn({ err }, 'cannot read the records directory');
    }
    for (const name of names) {
      const uid = podUidOfRecord(name);
      const st = uid && fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false });
      if (!uid || !st) continue;
      seen.add(uid);
      const version = `${st.ino}:${st.size}:${st.mtimeMs}`;
      if (known.get(uid)?.version !== version && !refused.has(`${uid}:${version}`)) load(uid, name, version);
    }
    for (const uid of [...known.keys()]) if (!seen.has(uid)) drop(uid, 'record removed');
  };

  let pending: NodeJS.Immediate | undefined;
  const onEvent = (): void => {
    pending ??= setImmediate(() => {
      pending = undefined;
      sync();
    });
  };
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(dir, { persistent: false }, onEvent);
    watcher.on('error', () => watcher?.close());
  } catch (err) {
    log.warn({ code: (err as NodeJS.ErrnoException).code }, 'cannot watch the records directory: rescanning only');
  }
  // Ref'd: this timer is what keeps `envhook watch` running.
  const timer = setInterval(() => {
    sync();
    for (const uid of [...known.keys()]) checkPod(uid);
    sweepCopies();
  }, opts.rescanMs ?? 5000);
  sync();
  sweepCopies();
  log.info({ runDir, ...registry.stats() }, 'watching owners records');
  return {
    registry,
    sync,
    stop() {
      clearInterval(timer);
      if (pending) clearImmediate(pending);
      watcher?.close();
      registry.close();
      log.info({ runDir }, 'stopped watching');
    },
  };
}
