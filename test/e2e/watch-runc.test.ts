// Owners that survive the kubelet, end to end: a real runc container runs as UID 1000 with no
// capabilities and reads a 0400 secret file in a loop, while the test rewrites the volume
// 1,000 times with the kubelet's atomic-writer operations. With `envhook watch` (a real
// process, fed by the owners record the shim writes) the reader keeps reading; without it
// (the baseline) every read after the first rewrite fails. The counts are printed.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { containerId, envhook, makeBundle, makeRootfs, missingForRunc, NODE, REPO, RUNC } from '../helpers/bundle.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';
import { atomicWrite, makeAtomicVolume } from '../../scripts/kubelet-pod.ts';
import { waitFor } from '../helpers/inotify.ts';
import { writeOwnersRecord } from '../../src/watch/record.ts';

const REWRITES = 1000;
// `read` is a shell builtin: one open(2) a read, no fork, so the loop reads ~10,000 times a second.
// Two phases: during the churn, then after it (the test creates /ctl/settled, then /ctl/stop).
const LOOP = (until: string, v: string) => `while [ ! -e /ctl/${until} ]; do if read -r l < /keys/key; then ${v}ok=$((${v}ok+1)); else ${v}fail=$((${v}fail+1)); fi; done`;
const READER = `ok=0; fail=0; lok=0; lfail=0; : > /ctl/started; { ${LOOP('settled', '')}; ${LOOP('stop', 'l')}; } 2>/dev/null; echo "ok=$ok fail=$fail after: ok=$lok fail=$lfail"`;
const INTERVAL_MS = 10; // 100 rewrites a second

interface Run {
  /** Reads during the churn. */
  ok: number;
  fail: number;
  /** Reads after it. */
  afterOk: number;
  afterFail: number;
  owner: number;
}

async function churn(t: Test, watcher: boolean): Promise<Run> {
  const dir = t.testdir({});
  const rootfs = makeRootfs(path.join(dir, 'rootfs'));
  const pod = makePod(path.join(dir, 'kubelet'));
  const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: 'v0\n', mode: 0o400 } });
  const ctl = path.join(dir, 'ctl');
  fs.mkdirSync(ctl, { mode: 0o777 });
  fs.chmodSync(ctl, 0o777);
  const owners = [{ volume: 'keys', defaultUser: 1000 }];
  const bundle = makeBundle(path.join(dir, 'bundle'), rootfs, {
    args: ['sh', '-c', READER],
    user: { uid: 1000, gid: 1000 },
    annotations: { ...pod.annotations('app'), 'envhook.io/volumeOwners': JSON.stringify(owners) },
    mounts: [...pod.mounts('app'), { destination: '/keys', source: vol, options: ['rbind', 'ro'] }, { destination: '/ctl', source: ctl, options: ['rbind', 'rw'] }],
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
    writeOwnersRecord(runDir, { podUid: pod.uid, podDir: pod.dir, volumes: [{ volume: 'keys', dir: vol, defaultUser: 1000, uidMapping: { kind: 'none' } }] });
    const w = spawn(NODE, [path.join(REPO, 'src/cli/main.ts'), 'watch', '--run-dir', runDir, '--kubelet-root', pod.kubeletRoot, '--log-file', logFile], { stdio: 'ignore', env: { ...process.env, NODE_EXTRA_CA_CERTS: '' } });
    const exited = new Promise<number | null>((r) => w.on('exit', r));
    t.teardown(() => w.kill('SIGKILL'));
    await waitFor(() => fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('"volumes":1,'), 20_000, 'watcher up');
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
  await waitFor(() => fs.existsSync(path.join(ctl, 'started')), 20_000, 'reader up');

  for (let i = 1; i <= REWRITES; i++) {
    atomicWrite(vol, { key: { data: `v${i}\n`, mode: 0o400 } });
    await new Promise((r) => setTimeout(r, INTERVAL_MS));
  }
  await new Promise((r) => setTimeout(r, 200));
  fs.writeFileSync(path.join(ctl, 'settled'), '');
  await new Promise((r) => setTimeout(r, 500));
  fs.writeFileSync(path.join(ctl, 'stop'), '');
  t.equal(await done, 0, out);
  await stopWatcher();
  const m = /ok=(\d+) fail=(\d+) after: ok=(\d+) fail=(\d+)/.exec(out);
  t.ok(m, 'the reader reported its counts');
  const [ok, fail, afterOk, afterFail] = (m ?? []).slice(1).map(Number) as [number, number, number, number];
  return { ok, fail, afterOk, afterFail, owner: fs.lstatSync(path.join(vol, '..data/key')).uid };
}

t.test(`UID 1000 reads a 0400 secret in a loop while the volume is rewritten ${REWRITES} times`, { skip: missingForRunc(), timeout: 300_000 }, async (t) => {
  const report = (what: string, r: Run) =>
    t.comment(`${what}: during the churn ${r.ok} reads ok, ${r.fail} failed (${((100 * r.fail) / (r.ok + r.fail)).toFixed(2)}%); after it ${r.afterOk} ok, ${r.afterFail} failed`);
  const base = await churn(t, false);
  report('without the watcher', base);
  t.equal(base.owner, 0, 'baseline: the rewritten file is root-owned');
  t.ok(base.fail > 0, 'baseline: the reader fails during the churn');
  t.equal(base.afterOk, 0, 'baseline: and every read after it fails');
  t.ok(base.afterFail > 0);

  const watched = await churn(t, true);
  report('with envhook watch', watched);
  t.equal(watched.owner, 1000, 'with the watcher the last rewrite is owned');
  t.ok(watched.afterOk > 0, 'after the churn the reader reads');
  t.equal(watched.afterFail, 0, 'and never fails');
  t.ok(watched.fail < base.fail, 'fewer failures during the churn than without the watcher');
});
