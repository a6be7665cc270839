// `envhook watch`'s loop, for nodes on the shim (no NRI daemon): the records in the run
// directory (one a pod, written by the shim at create) feed the registry. New and changed
// records are picked up by inotify on the records directory, and by a rescan every `rescanMs`
// for anything inotify missed. A pod whose directory is gone is dropped, its record deleted and
// its owned copies removed (`<runDir>/volumes/<pod uid>/`, which the shim made at create and the
// watcher keeps in step): the kubelet removes the directory when the pod's volumes are torn
// down. At each rescan, copies whose pod directory or kubelet volume directory is gone are removed
// too (a pod with no record, a terminated pod whose volumes the kubelet tore down), and at the
// start, the partial copies a killed process left (leftover-sweep.ts).
import fs from 'node:fs';
import path from 'node:path';
import { describeError, EnvhookError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { podUidOfRecord, readOwnersRecord, watchVolumesOf } from './record.ts';
import { createRegistry, type Registry, type RegistryOptions } from './registry.ts';
import { ensureRunDir } from './run-dir.ts';
import { removePodCopies } from '../mirror/remove.ts';
import { sweepAtStart, sweepGoneCopies } from './leftover-sweep.ts';

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

/** What the daemon's steps share: the records it knows, those it refused, and the registry. */
interface DaemonState {
  opts: DaemonOptions;
  /** The records directory (run-dir.ts). */
  dir: string;
  known: Map<string, Known>;
  /** Record versions already logged as refused. */
  refused: Set<string>;
  registry: Registry;
}

/** Throws EnvhookError when the run directory is not root's alone (run-dir.ts). */
export function startWatchDaemon(opts: DaemonOptions): WatchDaemon {
  const { runDir, log } = opts;
  const daemon: DaemonState = {
    opts,
    dir: ensureRunDir(runDir),
    known: new Map<string, Known>(),
    refused: new Set<string>(),
    registry: createRegistry({ ...opts.registry, log, onVolumeGone: (uid) => checkPod(daemon, uid) }),
  };
  const sync = (): void => syncRecords(daemon);
  const events = watchRecordsDir(daemon.dir, log, sync);
  // Ref'd: this timer is what keeps `envhook watch` running.
  const timer = setInterval(() => {
    sync();
    for (const uid of [...daemon.known.keys()]) checkPod(daemon, uid);
    sweepCopies(daemon);
  }, opts.rescanMs ?? 5000);
  sync();
  // After the records: a copy being taken over is one whose kubelet volume is still there.
  const startSweep = sweepAtStart({ runDir, kubeletRoot: opts.kubeletRoot, log });
  log.info({ runDir, ...daemon.registry.stats() }, 'watching owners records');
  return {
    registry: daemon.registry,
    sync,
    stop() {
      clearInterval(timer);
      startSweep.close();
      events.close();
      daemon.registry.close();
      log.info({ runDir }, 'stopped watching');
    },
  };
}

/** Reads the records directory: new and rewritten records are loaded, removed ones dropped. */
function syncRecords(daemon: DaemonState): void {
  const { dir, known, refused } = daemon;
  const seen = new Set<string>();
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    daemon.opts.log.warn({ err }, 'cannot read the records directory');
  }
  for (const name of names) {
    const uid = podUidOfRecord(name);
    const st = uid && fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false });
    if (!uid || !st) continue;
    seen.add(uid);
    const version = `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (known.get(uid)?.version !== version && !refused.has(`${uid}:${version}`)) load(daemon, uid, name, version);
  }
  for (const uid of [...known.keys()]) if (!seen.has(uid)) drop(daemon, uid, 'record removed');
}

/** One record into the registry; a refused one is logged once per version (and its pod dropped). */
function load(daemon: DaemonState, uid: string, name: string, version: string): void {
  const { opts, known, refused } = daemon;
  try {
    const record = readOwnersRecord(opts.runDir, name);
    const expected = path.join(opts.kubeletRoot, 'pods', uid);
    if (record.podDir !== expected)
      throw new EnvhookError(`owners record of pod ${JSON.stringify(uid)}: /podDir: is not ${expected} (kubelet root ${opts.kubeletRoot})`);
    daemon.registry.add(uid, watchVolumesOf(record, opts.runDir));
    known.set(uid, { podDir: record.podDir, version });
    checkPod(daemon, uid);
  } catch (err) {
    if (known.has(uid)) drop(daemon, uid, 'record refused');
    if (refused.size > 1024) refused.clear();
    if (!refused.has(`${uid}:${version}`)) opts.log.warn({ podUid: uid, err }, `owners record refused: ${describeError(err)}`);
    refused.add(`${uid}:${version}`);
  }
}

/** A known pod whose directory is gone: its record deleted, the pod dropped, its copies removed. */
function checkPod(daemon: DaemonState, uid: string): void {
  const k = daemon.known.get(uid);
  if (!k || fs.existsSync(k.podDir)) return;
  fs.rmSync(path.join(daemon.dir, `${uid}.json`), { force: true });
  drop(daemon, uid, 'pod directory is gone');
  dropCopies(daemon, uid);
}

function drop(daemon: DaemonState, uid: string, why: string): void {
  daemon.known.delete(uid);
  daemon.registry.remove(uid);
  daemon.opts.log.info({ podUid: uid, why }, 'pod dropped');
}

/** Copies whose pod or kubelet volume directory is gone (a pod the watcher never knew, or knew before a restart). */
function sweepCopies({ opts: { runDir, kubeletRoot, log } }: DaemonState): void {
  sweepGoneCopies({ runDir, kubeletRoot, log });
}

function dropCopies({ opts: { runDir, log } }: DaemonState, uid: string): void {
  try {
    if (removePodCopies(runDir, uid)) log.info({ podUid: uid }, "pod's owned copies removed");
  } catch (err) {
    log.warn({ podUid: uid, err }, `owned copies not removed: ${describeError(err)}`);
  }
}

/** inotify on the records directory: its events run `sync` once per turn; without it, the rescan does. */
function watchRecordsDir(dir: string, log: Logger, sync: () => void): { close(): void } {
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
  return {
    close() {
      if (pending) clearImmediate(pending);
      watcher?.close();
    },
  };
}
