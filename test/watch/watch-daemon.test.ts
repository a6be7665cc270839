// The run-directory loop of `envhook watch`, in process: records in, watched pods out.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { startWatchDaemon } from '../../src/watch/watch-daemon.ts';
import { writeOwnersRecord, type OwnersRecord } from '../../src/watch/record.ts';
import { createLogger } from '../../src/log.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';
import { atomicWrite, makeAtomicVolume } from '../../scripts/kubelet-pod.ts';
import { contentAndOwner } from '../helpers/watch/volume-reader.ts';
import { waitFor } from '../helpers/wait.ts';

function setup(t: Test, uid = '11111111-2222-3333-4444-555555555555') {
  const dir = t.testdir({});
  const pod = makePod(path.join(dir, 'kubelet'), {}, uid);
  const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: 'CANARY-daemon', mode: 0o400 } });
  const runDir = path.join(dir, 'run');
  const logFile = path.join(dir, 'log');
  const record: OwnersRecord = {
    podUid: uid,
    podDir: pod.dir,
    volumes: [{ volume: 'keys', dir: vol, defaultUser: 1000, uidMapping: { kind: 'none' } }],
  };
  const start = () => {
    const d = startWatchDaemon({ runDir, kubeletRoot: pod.kubeletRoot, log: createLogger(logFile, 'debug'), rescanMs: 50 });
    t.teardown(() => d.stop());
    return d;
  };
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  const owner = () => fs.lstatSync(path.join(vol, '..data/key')).uid;
  return { dir, pod, vol, runDir, record, start, log, owner };
}

t.test('a record written after the start is picked up; rewrites are owned; the pod going away ends it', async (t) => {
  const s = setup(t);
  const d = s.start();
  t.same(d.registry.stats().pods, 0);
  const file = writeOwnersRecord(s.runDir, s.record);
  await waitFor(() => s.owner() === 1000, 5000, 'owned');
  atomicWrite(s.vol, { key: { data: 'CANARY-daemon-2', mode: 0o400 } });
  await waitFor(() => s.owner() === 1000, 5000, 'rewrite owned');
  writeOwnersRecord(s.runDir, { ...s.record, volumes: [{ ...s.record.volumes[0]!, defaultUser: 1234 }] });
  await waitFor(() => s.owner() === 1234, 5000, 'a changed record is read again');
  fs.rmSync(s.pod.dir, { recursive: true });
  await waitFor(() => d.registry.stats().pods === 0 && !fs.existsSync(file), 5000, 'pod dropped');
  t.match(s.log(), '"why":"pod directory is gone"');
  t.notMatch(s.log(), 'CANARY');
});

t.test('records already there at start; a removed record stops the watch', async (t) => {
  const s = setup(t);
  const file = writeOwnersRecord(s.runDir, s.record);
  const d = s.start();
  t.same(d.registry.stats().pods, 1, 'read at start');
  await waitFor(() => s.owner() === 1000);
  fs.rmSync(file);
  await waitFor(() => d.registry.stats().pods === 0, 5000, 'dropped');
  t.match(s.log(), '"why":"record removed"');
});

t.test('refused records are logged once and never stop the others', async (t) => {
  const s = setup(t);
  // A record for a pod outside this node's kubelet root.
  const pod = makePod(path.join(s.dir, 'other-kubelet'), {}, '99999999-2222-3333-4444-555555555555');
  const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: 'K' });
  writeOwnersRecord(s.runDir, {
    podUid: pod.uid,
    podDir: pod.dir,
    volumes: [{ volume: 'keys', dir: vol, defaultUser: 1000, uidMapping: { kind: 'none' } }],
  });
  fs.writeFileSync(path.join(s.runDir, 'owners', 'broken.json'), '{');
  writeOwnersRecord(s.runDir, s.record);
  const d = s.start();
  await waitFor(() => s.owner() === 1000);
  d.sync();
  d.sync();
  t.equal(d.registry.stats().pods, 1);
  t.equal(fs.lstatSync(path.join(vol, '..data/key')).uid, 0, "the other pod's volume is not touched");
  const lines = s.log().split('\n');
  t.equal(lines.filter((l) => l.includes('is not ' + path.join(s.pod.kubeletRoot, 'pods'))).length, 1, 'logged once');
  t.equal(lines.filter((l) => l.includes('broken.json: not valid JSON')).length, 1);
});

t.test('a run directory others can write is refused', async (t) => {
  const s = setup(t);
  fs.mkdirSync(s.runDir, { mode: 0o700 });
  fs.chmodSync(s.runDir, 0o770);
  t.throws(() => s.start(), { message: `run directory ${s.runDir} must be owned by root and not writable by group or others` });
});

t.test("a copied volume: each rewrite copied with its owners, the kubelet's files left alone; the copies go with the pod", async (t) => {
  const s = setup(t);
  const copy = path.join(s.runDir, 'volumes', s.pod.uid, 'keys');
  const orphan = path.join(s.runDir, 'volumes', '99999999-2222-3333-4444-555555555555', 'keys');
  fs.mkdirSync(orphan, { recursive: true, mode: 0o700 });
  writeOwnersRecord(s.runDir, { ...s.record, volumes: [{ ...s.record.volumes[0]!, copy: true, inPlace: false }] });
  const d = s.start();
  const view = () => contentAndOwner(path.join(copy, 'key'));
  await waitFor(() => view() === 'CANARY-daemon:1000', 5000, 'copied at start');
  t.notOk(fs.existsSync(path.dirname(orphan)), 'the copies of a pod whose directory is gone are removed at start');
  for (let i = 1; i <= 5; i++) {
    atomicWrite(s.vol, { key: { data: `CANARY-daemon-${i}`, mode: 0o400 } });
    await waitFor(() => view() === `CANARY-daemon-${i}:1000`, 5000, `rewrite ${i} copied`);
  }
  t.equal(s.owner(), 0, "the kubelet's file is left root's");
  t.match(d.registry.stats(), { copies: 1, volumes: 1 });
  fs.rmSync(s.pod.dir, { recursive: true });
  await waitFor(() => !fs.existsSync(path.dirname(copy)), 5000, "the pod's copies removed");
  t.match(s.log(), '"why":"pod directory is gone"');
  t.notMatch(s.log(), 'CANARY');
});

// A completed Job or an evicted pod: the kubelet tears its volumes down and keeps the pod
// directory until the pod object is deleted. The copy goes with the kubelet's volume directory.
t.test(
  'a copied volume whose kubelet directory goes while the pod directory stays: its copy is removed, live and at a restart',
  async (t) => {
    const s = setup(t);
    const copy = path.join(s.runDir, 'volumes', s.pod.uid, 'keys');
    writeOwnersRecord(s.runDir, { ...s.record, volumes: [{ ...s.record.volumes[0]!, copy: true, inPlace: false }] });
    const d = s.start();
    await waitFor(() => fs.existsSync(path.join(copy, 'key')), 5000, 'copied at start');
    fs.rmSync(s.vol, { recursive: true });
    await waitFor(() => !fs.existsSync(path.dirname(copy)), 5000, 'the copy removed with the kubelet volume directory');
    t.ok(fs.existsSync(s.pod.dir), 'the pod directory is still there');
    t.match(s.log(), /"volume":"keys","why":"the kubelet's volume directory is gone","msg":"owned copy removed"/);
    d.stop();

    // The same while no watcher runs: the next start removes it.
    const vol = makeAtomicVolume(s.pod, 'secret', 'keys', { key: { data: 'CANARY-daemon', mode: 0o400 } });
    const again = s.start();
    await waitFor(() => fs.existsSync(path.join(copy, 'key')), 5000, 'copied again');
    again.stop();
    fs.rmSync(vol, { recursive: true });
    s.start();
    t.notOk(fs.existsSync(path.dirname(copy)), 'removed at the start');
    t.equal(
      s
        .log()
        .split('\n')
        .filter((l) => l.includes('"msg":"owned copy removed"')).length,
      2,
    );
    t.notMatch(s.log(), 'CANARY');
  },
);
