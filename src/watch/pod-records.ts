// The pods the resident NRI plugin watches, kept in `<runDir>/nri-owners/` (one owners record a
// pod, with its sandbox) so that the next plugin process knows them where the runtime tells it
// nothing: containerd 1.7 with NRI 0.6.1 (1.7.24 and earlier) starts its pre-installed plugins
// without a Synchronize, so a plugin started again after a runtime restart would not know the
// running pods. Read back, a record is untrusted input (record.ts) and must name a pod directory
// under the kubelet root that still exists; a record of a pod that is gone is deleted.
import fs from 'node:fs';
import path from 'node:path';
import { describeError, EnvhookError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { podUidOfRecord, readOwnersRecord, recordVolumes, watchVolumesOf, writeOwnersRecord } from './record.ts';
import type { WatchVolume } from './registry.ts';
import { ensureRunDir, NRI_RECORDS, recordsDir } from './run-dir.ts';

interface RestoredPod {
  podUid: string;
  sandbox: string;
  podDir: string;
  volumes: WatchVolume[];
}

export interface PodRecords {
  save(podUid: string, sandbox: string, podDir: string, volumes: readonly WatchVolume[]): void;
  remove(podUid: string): void;
  /** The recorded pods whose directory is still there. */
  load(): RestoredPod[];
  /** The records' pod UIDs, for loadOne() one at a time (the NRI worker's start, in slices). */
  list(): string[];
  /** One recorded pod, or undefined when its record is refused or it is gone (its record then removed). */
  loadOne(podUid: string): RestoredPod | undefined;
}

export function createPodRecords(runDir: string, kubeletRoot: string, log: Logger): PodRecords {
  const dir = recordsDir(runDir, NRI_RECORDS);
  const remove = (podUid: string): void => {
    try {
      fs.rmSync(path.join(dir, `${podUid}.json`), { force: true });
    } catch (err) {
      log.warn({ podUid, err }, `nri: owners record not removed: ${describeError(err)}`);
    }
  };
  const read = (podUid: string, name: string): RestoredPod | undefined => {
    const record = readOwnersRecord(runDir, name, NRI_RECORDS);
    const expected = path.join(kubeletRoot, 'pods', podUid);
    if (record.podDir !== expected)
      throw new EnvhookError(`owners record of pod ${JSON.stringify(podUid)}: /podDir: is not ${expected} (kubelet root ${kubeletRoot})`);
    if (record.sandbox === undefined) throw new EnvhookError(`owners record of pod ${JSON.stringify(podUid)}: no sandbox`);
    if (!fs.existsSync(record.podDir)) return undefined;
    return { podUid, sandbox: record.sandbox, podDir: record.podDir, volumes: watchVolumesOf(record, runDir) };
  };
  const list = (): string[] => {
    let names: string[];
    try {
      // Whoever can write there chooses owners: the directory must be root's alone (run-dir.ts).
      names = fs.readdirSync(ensureRunDir(runDir, NRI_RECORDS));
    } catch (err) {
      log.warn({ err }, `nri: owners records not read: ${describeError(err)}`);
      return [];
    }
    return names.map(podUidOfRecord).filter((uid): uid is string => uid !== undefined);
  };
  const loadOne = (podUid: string): RestoredPod | undefined => {
    try {
      const pod = read(podUid, `${podUid}.json`);
      if (pod) return pod;
      remove(podUid);
      log.info({ podUid }, 'nri: owners record of a pod that is gone removed');
    } catch (err) {
      log.warn({ podUid, err }, `nri: owners record refused: ${describeError(err)}`);
    }
    return undefined;
  };
  return {
    save(podUid, sandbox, podDir, volumes) {
      try {
        writeOwnersRecord(runDir, { podUid, podDir, sandbox, volumes: recordVolumes(volumes) }, NRI_RECORDS);
      } catch (err) {
        // The watch goes on; only a plugin process started after a runtime restart will miss it.
        log.warn({ podUid, err }, `nri: owners record not written: ${describeError(err)}`);
      }
    },
    remove,
    load() {
      const pods: RestoredPod[] = [];
      for (const podUid of list()) {
        const pod = loadOne(podUid);
        if (pod) pods.push(pod);
      }
      return pods;
    },
    list,
    loadOne,
  };
}
