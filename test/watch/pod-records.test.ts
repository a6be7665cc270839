// The NRI plugin's records of the pods it watches: written, read back by the next process while
// the pod directory is there, deleted once it is gone, refused when they name another place.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createPodRecords } from '../../src/watch/pod-records.ts';
import { createLogger } from '../../src/log.ts';
import { normalize } from '../../src/ownership/annotation.ts';
import { NRI_RECORDS, recordsDir } from '../../src/watch/run-dir.ts';
import { atomicVolumeDir, makePod, POD_UID } from '../../scripts/kubelet-pod.ts';

function setup(t: Test) {
  const dir = t.testdir();
  const kubeletRoot = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const pod = makePod(kubeletRoot, { atomic: [{ plugin: 'secret', name: 'keys', payload: { key: 'K' } }] });
  const volume = {
    dir: atomicVolumeDir(pod, 'secret', 'keys'),
    owners: normalize([{ volume: 'keys', defaultUser: 1000, items: [{ path: 'key', user: 1001 }] }])[0]!,
    uidMapping: { kind: 'none' as const },
  };
  const logFile = path.join(dir, 'log');
  const records = createPodRecords(runDir, kubeletRoot, createLogger(logFile, 'debug'));
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  const messages = () =>
    log()
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
  const file = path.join(recordsDir(runDir, NRI_RECORDS), `${POD_UID}.json`);
  return { kubeletRoot, runDir, pod, volume, records, log, messages, file };
}

t.test('saved, then loaded by another instance as the same pod and volumes', async (t) => {
  const s = setup(t);
  s.records.save(POD_UID, 'sandbox-1', s.pod.dir, [s.volume]);
  const again = createPodRecords(s.runDir, s.kubeletRoot, createLogger(undefined, 'silent'));
  const [restored, ...rest] = again.load();
  t.same(rest, []);
  t.equal(restored!.podUid, POD_UID);
  t.equal(restored!.sandbox, 'sandbox-1');
  t.equal(restored!.podDir, s.pod.dir);
  t.same(restored!.volumes, [s.volume]);
});

t.test('removed: no longer loaded', async (t) => {
  const s = setup(t);
  s.records.save(POD_UID, 'sandbox-1', s.pod.dir, [s.volume]);
  s.records.remove(POD_UID);
  t.same(s.records.load(), []);
  t.notOk(fs.existsSync(s.file));
  s.records.remove(POD_UID);
  t.notMatch(s.log(), /not removed/, 'removing twice is no error');
});

t.test('a pod whose directory is gone: its record deleted at load', async (t) => {
  const s = setup(t);
  s.records.save(POD_UID, 'sandbox-1', s.pod.dir, [s.volume]);
  fs.rmSync(s.pod.dir, { recursive: true });
  t.same(s.records.load(), []);
  t.notOk(fs.existsSync(s.file));
  t.match(s.log(), /"msg":"nri: owners record of a pod that is gone removed"/);
});

t.test('a record naming a pod directory outside the kubelet root, or without a sandbox: refused', async (t) => {
  const s = setup(t);
  s.records.save(POD_UID, 'sandbox-1', s.pod.dir, [s.volume]);
  const elsewhere = createPodRecords(s.runDir, '/var/lib/other-kubelet', createLogger(undefined, 'silent'));
  t.same(elsewhere.load(), [], 'another kubelet root');
  t.ok(fs.existsSync(s.file), 'kept: it is not known to be gone');
  const record = JSON.parse(fs.readFileSync(s.file, 'utf8'));
  delete record.sandbox;
  fs.writeFileSync(s.file, JSON.stringify(record));
  t.same(s.records.load(), []);
  t.ok(s.messages().includes(`nri: owners record refused: owners record of pod "${POD_UID}": no sandbox`), s.log());
});

t.test('files that are not records are skipped; a run directory others can write is not read', async (t) => {
  const s = setup(t);
  s.records.save(POD_UID, 'sandbox-1', s.pod.dir, [s.volume]);
  fs.writeFileSync(path.join(path.dirname(s.file), 'notes.txt'), 'x');
  t.equal(s.records.load().length, 1);
  fs.chmodSync(path.dirname(s.file), 0o777);
  t.same(s.records.load(), []);
  t.match(s.log(), /"msg":"nri: owners records not read: /);
});

t.test('a record that cannot be written: logged, nothing thrown (the watch goes on)', async (t) => {
  const s = setup(t);
  fs.mkdirSync(path.dirname(s.runDir), { recursive: true });
  fs.writeFileSync(s.runDir, 'a file where the run directory belongs');
  s.records.save(POD_UID, 'sandbox-1', s.pod.dir, [s.volume]);
  t.match(s.log(), /"msg":"nri: owners record not written: /);
});
