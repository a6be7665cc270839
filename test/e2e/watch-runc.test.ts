// Owners that survive the kubelet, end to end: a real runc container runs as UID 1000 with no
// capabilities and reads 0400 files of a secret volume and of a projected volume (a token, a CA
// bundle, a namespace file) in a loop (test/helpers/watch/volume-reader.ts), while the test rewrites
// both volumes with the kubelet's atomic-writer operations. With `envhook watch` (a real
// process, fed by the owners record the shim writes) the reader keeps reading, on a quiet
// machine and with both CPUs busy, at the default priority and in SCHED_FIFO (a unit's
// CPUSchedulingPolicy=fifo, where chrt is installed); without it (the baseline) every read after the first
// rewrite fails. The counts, per file, are printed. ENVHOOK_WATCH_REWRITES sets the rewrites a
// run (CI: 300; the full run: 1000).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { containerId, envhook, makeBundle, makeRootfs, missingForRunc, RUNC, spawnEnvhook } from '../helpers/bundle.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';
import { atomicWrite, makeAtomicVolume } from '../../scripts/kubelet-pod.ts';
import {
  checkSettled,
  churnWithReader,
  describeReader,
  eachPhase,
  readerScript,
  type ReaderResult,
} from '../helpers/watch/volume-reader.ts';
import { schedPolicy } from '../../src/nri/realtime.ts';
import { writeOwnersRecord } from '../../src/watch/record.ts';
import { waitFor } from '../helpers/wait.ts';

t.setTimeout(900_000); // the file's own limit (tap's default is for the whole file)
const REWRITES = Number(process.env.ENVHOOK_WATCH_REWRITES) || 300;
const SA = '/var/run/secrets/kubernetes.io/serviceaccount';
const FILES = ['/keys/key', `${SA}/token`, `${SA}/ca.crt`, `${SA}/namespace`];
const secret = (i: number) => ({ key: { data: `v${i}\n`, mode: 0o400 } });
const projected = (i: number) => ({
  token: { data: `t${i}\n`, mode: 0o400 },
  'ca.crt': { data: `c${i}\n`, mode: 0o400 },
  namespace: { data: 'default\n', mode: 0o400 },
});

async function churn(t: Test, watcher: boolean, busy: boolean, fifo = false): Promise<ReaderResult & { owners: number[] }> {
  const dir = t.testdir({});
  const rootfs = makeRootfs(path.join(dir, 'rootfs'));
  const pod = makePod(path.join(dir, 'kubelet'));
  const vol = makeAtomicVolume(pod, 'secret', 'keys', secret(0));
  const sa = makeAtomicVolume(pod, 'projected', 'kube-api-access', projected(0));
  const ctl = path.join(dir, 'ctl');
  fs.mkdirSync(ctl, { mode: 0o777 });
  fs.chmodSync(ctl, 0o777);
  const owners = [
    { volume: 'keys', defaultUser: 1000 },
    { volume: 'kube-api-access', defaultUser: 1000 },
  ];
  const phase = busy ? 'busy' : 'quiet';
  const bundle = makeBundle(path.join(dir, 'bundle'), rootfs, {
    args: ['sh', '-c', readerScript(FILES, phase)],
    user: { uid: 1000, gid: 1000 },
    annotations: { ...pod.annotations('app'), 'envhook.io/volumeOwners': JSON.stringify(owners) },
    mounts: [
      ...pod.mounts('app'),
      { destination: '/keys', source: vol, options: ['rbind', 'ro'] },
      { destination: SA, source: sa, options: ['rbind', 'ro'] },
      { destination: '/ctl', source: ctl, options: ['rbind', 'rw'] },
    ],
    edit: (spec) => {
      spec.process.capabilities = { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] };
      spec.process.noNewPrivileges = true;
    },
  });
  t.equal(envhook(['inject', '--bundle', bundle, '--kubelet-root', pod.kubeletRoot]).stderr, '', 'owners applied at start');

  const runDir = path.join(dir, 'run');
  const logFile = path.join(dir, 'watch.log');
  let stopWatcher = async () => {};
  if (watcher) {
    // What the shim records at create.
    writeOwnersRecord(runDir, {
      podUid: pod.uid,
      podDir: pod.dir,
      volumes: [
        { volume: 'keys', dir: vol, defaultUser: 1000, uidMapping: { kind: 'none' } },
        { volume: 'kube-api-access', dir: sa, defaultUser: 1000, uidMapping: { kind: 'none' } },
      ],
    });
    const w = spawnEnvhook([
      'watch',
      ...['--run-dir', runDir, '--kubelet-root', pod.kubeletRoot, '--log-file', logFile],
      ...(fifo ? ['--fifo-priority', '10'] : []),
    ]);
    const exited = new Promise<number | null>((r) => w.on('exit', r));
    t.teardown(() => w.kill('SIGKILL'));
    await waitFor(() => fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('"volumes":2,'), 20_000, 'watcher up');
    // --fifo-priority: the watcher put itself under SCHED_FIFO at start, before its first log line.
    t.equal(
      schedPolicy(w.pid!),
      fifo ? 1 : 0,
      fifo ? 'the watcher runs under SCHED_FIFO (--fifo-priority 10)' : 'the watcher runs at the ordinary priority',
    );
    stopWatcher = async () => {
      w.kill('SIGTERM');
      t.equal(await exited, 0, 'the watcher exits 0 on SIGTERM');
    };
  }

  const root = path.join(dir, 'runc-root');
  const id = containerId('envhook-watch');
  const runc = spawn(RUNC!, ['--root', root, 'run', '-b', bundle, id], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => spawnSync(RUNC!, ['--root', root, 'delete', '--force', id]));
  let out = '';
  runc.stdout.on('data', (d) => (out += d));
  runc.stderr.on('data', (d) => (out += d));
  const done = new Promise<number | null>((r) => runc.on('exit', r));
  const uids = () => [
    fs.lstatSync(path.join(vol, '..data/key')).uid,
    ...['token', 'ca.crt', 'namespace'].map((f) => fs.lstatSync(path.join(sa, '..data', f)).uid),
  ];
  const r = await churnWithReader({
    ctl,
    phase,
    rewrites: REWRITES,
    busy,
    rewrite: (i) => {
      atomicWrite(vol, secret(i));
      atomicWrite(sa, projected(i));
    },
    owned: () => !watcher || uids().every((u) => u === 1000), // the baseline never is: no wait
  });
  t.equal(await done, 0, out);
  await stopWatcher();
  if (watcher) t.notMatch(fs.readFileSync(logFile, 'utf8'), /v\d+\\n|t\d+\\n/, 'no file content in the log');
  return { ...r, owners: uids() };
}

t.test(
  `UID 1000 reads 0400 files of a secret and a projected volume in a loop while both are rewritten ${REWRITES} times`,
  {
    skip: missingForRunc(),
    timeout: 900_000,
  },
  async (t) => {
    const report = (what: string, r: ReaderResult) => t.comment(describeReader(what, r, FILES));
    const base = await churn(t, false, false);
    report('without the watcher', base);
    t.same(base.owners, [0, 0, 0, 0], 'baseline: the rewritten files are root-owned');
    t.ok(base.fail > 0, 'baseline: the reader fails during the churn');
    t.equal(base.afterOk, 0, 'baseline: and every read after it fails');
    t.ok(base.afterFail > 0);

    await eachPhase(t, async (busy, fifo) => {
      const phase = `${busy ? 'both CPUs busy' : 'quiet'}${fifo ? ', watcher in SCHED_FIFO' : ''}`;
      const watched = await churn(t, true, busy, fifo);
      report(`with envhook watch, ${phase}`, watched);
      checkSettled(t, phase, watched, REWRITES);
      t.same(watched.owners, [1000, 1000, 1000, 1000], `${phase}: the last rewrite is owned`);
      t.ok(watched.fail < base.fail, `${phase}: fewer failures during the churn than without the watcher`);
    });
  },
);
