// The watcher of a volume read through an owned copy (src/watch/copy-watch.ts), on real files and
// real inotify: each kubelet rewrite is copied with its owners, the kubelet's files untouched;
// a refused payload keeps the last good copy and is counted once per rewrite; a volume gone is
// reported.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { createRegistry } from '../../src/watch/registry.ts';
import { createLogger } from '../../src/log.ts';
import { normalize } from '../../src/ownership/annotation.ts';
import { copyDir } from '../../src/mirror/layout.ts';
import { copyVolume } from '../../src/mirror/copy.ts';
import { contentAndOwner } from '../helpers/watch/volume-reader.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

t.test('each rewrite copied, owned; a hard link refused and counted, the last good copy kept; the volume gone', async (t) => {
  const dir = t.testdir({});
  const kubelet = path.join(dir, 'kubelet', 'keys');
  atomicWrite(kubelet, { key: { data: 'v0', mode: 0o400 } });
  const log = path.join(dir, 'log');
  const gone: string[] = [];
  const reg = createRegistry({ log: createLogger(log, 'debug'), onVolumeGone: (uid) => gone.push(uid) });
  t.teardown(() => reg.close());
  const place = { runDir: path.join(dir, 'run'), podUid: 'p1', volume: 'keys' };
  const copy = copyDir(place);
  reg.add('p1', [
    { dir: kubelet, owners: normalize([{ volume: 'keys', defaultUser: 1000 }])[0]!, uidMapping: { kind: 'none' }, copy: place },
  ]);
  const view = () => contentAndOwner(path.join(copy, 'key'));
  await waitFor(() => view() === 'v0:1000', 5000, 'the first copy');
  for (let i = 1; i <= 20; i++) {
    atomicWrite(kubelet, { key: { data: `v${i}`, mode: 0o400 } });
    await waitFor(() => view() === `v${i}:1000`, 5000, `rewrite ${i} copied`);
  }
  t.equal(fs.statSync(path.join(kubelet, 'key')).uid, 0, "the kubelet's file is left root's");
  t.match(reg.stats(), { copies: 1, volumes: 1, copyFailures: 0, watches: 1 });
  t.ok(reg.stats().copyUpdates >= 21 && reg.stats().copyLatency.count === reg.stats().copyUpdates, 'every copy counted with its latency');

  const ts = atomicWrite(kubelet, { key: { data: 'bad', mode: 0o400 }, other: 'x' });
  fs.linkSync(path.join(ts, 'other'), path.join(dir, 'outside'));
  await waitFor(() => reg.stats().copyFailures === 1, 5000, 'the failure counted');
  t.equal(view(), 'v20:1000', 'the container keeps reading the last good copy');
  t.match(
    fs.readFileSync(log, 'utf8'),
    'owned copy not updated: volume \\"keys\\": file \\"other\\" has 2 hard links; refusing to copy it',
  );
  t.notMatch(fs.readFileSync(log, 'utf8'), /"bad"|v20/, 'no content in the log');

  // rm -r removes `..data` before the directory: the directory's own event ends the watch, not
  // the registry's minute pass (safetyMs: 60 s here).
  fs.rmSync(kubelet, { recursive: true });
  await waitFor(() => gone.length === 1, 5000, 'the volume reported gone at its own event');
  t.equal(reg.stats().copies, 0);
});

t.test(
  "a watch that starts on a copy already holding the kubelet's payload (CreateContainer's, or before a restart) makes none",
  async (t) => {
    const dir = t.testdir({});
    const kubelet = path.join(dir, 'kubelet', 'keys');
    atomicWrite(kubelet, { key: { data: 'v0', mode: 0o400 } });
    const place = { runDir: path.join(dir, 'run'), podUid: 'p1', volume: 'keys' };
    const owners = normalize([{ volume: 'keys', defaultUser: 1000 }])[0]!;
    copyVolume(place, kubelet, { defaultOwner: { hostUid: 1000 }, items: new Map() }); // as the start makes it
    const reg = createRegistry({ log: createLogger(path.join(dir, 'log'), 'debug') });
    t.teardown(() => reg.close());
    reg.add('p1', [{ dir: kubelet, owners, uidMapping: { kind: 'none' }, copy: place }]);
    await new Promise((r) => setTimeout(r, 300));
    t.match(reg.stats(), { copies: 1, copyUpdates: 0, copyLatency: { count: 0 } }, 'no update: nothing was rewritten');
    atomicWrite(kubelet, { key: { data: 'v1', mode: 0o400 } });
    await waitFor(() => fs.readFileSync(path.join(copyDir(place), 'key'), 'utf8') === 'v1', 5000, 'the rewrite copied');
    t.match(reg.stats(), { copyUpdates: 1, copyLatency: { count: 1 } }, 'the rewrite: one update, one latency');
  },
);

// A rewrite with a name that is not valid UTF-8 was taken for a passing race ("went away while
// being copied": the name decoded to one that is not there) and dropped without a word.
t.test(
  'a rewrite with a name that is not valid UTF-8: a counted failure, one warning naming the volume, the last good copy kept',
  async (t) => {
    const dir = t.testdir({});
    const kubelet = path.join(dir, 'kubelet', 'keys');
    atomicWrite(kubelet, { key: { data: 'CANARY-utf8-0', mode: 0o400 } });
    const logFile = path.join(dir, 'log');
    const reg = createRegistry({ log: createLogger(logFile, 'debug') });
    t.teardown(() => reg.close());
    const place = { runDir: path.join(dir, 'run'), podUid: 'p1', volume: 'keys' };
    reg.add('p1', [
      { dir: kubelet, owners: normalize([{ volume: 'keys', defaultUser: 1000 }])[0]!, uidMapping: { kind: 'none' }, copy: place },
    ]);
    const view = () => contentAndOwner(path.join(copyDir(place), 'key'));
    await waitFor(() => view() === 'CANARY-utf8-0:1000', 5000, 'the first copy');
    atomicWrite(
      kubelet,
      { key: { data: 'CANARY-utf8-1', mode: 0o400 } },
      {
        beforeRename: (ts) => fs.writeFileSync(Buffer.concat([Buffer.from(`${ts}/`), Buffer.from([0x6b, 0xff])]), 'CANARY-utf8-x'),
      },
    );
    await waitFor(() => reg.stats().copyFailures === 1, 5000, 'the failure counted');
    t.equal(view(), 'CANARY-utf8-0:1000', 'the container keeps reading the last good copy');
    const lines = fs
      .readFileSync(logFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    t.same(
      lines.filter((l) => l.level === 40).map((l) => [l.podUid, l.volume, l.msg]),
      [['p1', 'keys', 'owned copy not updated: volume "keys": a name in the payload is not valid UTF-8: refusing to copy it']],
    );
    const text = fs.readFileSync(logFile, 'utf8');
    t.notMatch(text, /CANARY/, 'no content logged');
    t.notMatch(text, /\ufffd|\\ufffd/, 'the name is not printed, not even decoded');
  },
);

// The kubelet tears a secret volume down by unmounting its tmpfs, then removing the directory.
// The unmount ends the kernel's watch (IN_UNMOUNT, IN_IGNORED) and the removal that follows
// happens on the mount point below, which no watch was on: the copy stayed until the registry's
// minute pass. Where no StopPodSandbox comes (containerd 2.1 sends none for the sandboxes it
// restored after its own restart), that removal is the only word of the pod's end.
t.test('a volume on a tmpfs of its own, unmounted then removed: reported gone at once, the copy removed', async (t) => {
  const dir = t.testdir({});
  const kubelet = path.join(dir, 'kubelet', 'keys');
  fs.mkdirSync(kubelet, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', kubelet]);
  t.teardown(() => void spawnSync('umount', [kubelet]));
  atomicWrite(kubelet, { key: { data: 'CANARY-tmpfs-0', mode: 0o400 } });
  const logFile = path.join(dir, 'log');
  const gone: string[] = [];
  const reg = createRegistry({ log: createLogger(logFile, 'debug'), safetyMs: 600_000, onVolumeGone: (uid) => gone.push(uid) });
  t.teardown(() => reg.close());
  const place = { runDir: path.join(dir, 'run'), podUid: 'p1', volume: 'keys' };
  reg.add('p1', [
    { dir: kubelet, owners: normalize([{ volume: 'keys', defaultUser: 1000 }])[0]!, uidMapping: { kind: 'none' }, copy: place },
  ]);
  const view = () => contentAndOwner(path.join(copyDir(place), 'key'));
  await waitFor(() => view() === 'CANARY-tmpfs-0:1000', 5000, 'the first copy');
  atomicWrite(kubelet, { key: { data: 'CANARY-tmpfs-1', mode: 0o400 } });
  await waitFor(() => view() === 'CANARY-tmpfs-1:1000', 5000, 'a rewrite on the tmpfs copied');

  execFileSync('umount', [kubelet]);
  await sleep(200); // the kubelet's teardown: the unmount, then the directory's removal a moment later
  fs.rmdirSync(kubelet);
  await waitFor(() => gone.length === 1, 5000, 'the volume reported gone at the removal of its mount point');
  await waitFor(() => !fs.existsSync(copyDir(place)), 5000, 'its copy removed');
  t.match(reg.stats(), { copies: 0, watches: 0 }, 'no watch left');
  t.notMatch(fs.readFileSync(logFile, 'utf8'), /CANARY/, 'no content logged');
});
