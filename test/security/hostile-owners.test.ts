// Hostile filesystem for ownership (docs/design.md#finding-volumes, #ownership): whatever sits in an atomic-write volume —
// symlinks out, a `..data` pointing away, hard links, FIFOs, devices, sockets, loops, a file
// swapped for a symlink or a FIFO while the walk runs — a file outside the volume keeps its
// content, owner and mode, and nothing blocks.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { execFileSync, spawn } from 'node:child_process';
import { runPipeline } from '../../src/bundle/spec-pipeline.ts';
import { silentLogger } from '../../src/log.ts';
import { EnvhookError } from '../../src/errors.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { fastTempDir, makeCanary, outcome, snapshot, startSwapper, type SwapSource } from './helpers.ts';
import { sleep } from '../helpers/wait.ts';

const canary = makeCanary('OUTSIDE');
const settings = { kubeletRoot: '', runtime: 'runc', logFile: undefined, logLevel: 'silent' as const };

interface Fx {
  root: string;
  vol: string;
  ts: string;
  outside: string;
  outsideDir: string;
  run: (owners?: unknown) => { err: unknown };
}

function fixture(t: Test, onTmpfs = false): Fx {
  let root: string;
  if (onTmpfs) {
    // Races: ext4 flushes a file renamed over another (auto_da_alloc), which slows the swapper.
    root = fastTempDir('envhook-owners-');
    t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
    fs.mkdirSync(path.join(root, 'host'));
    fs.writeFileSync(path.join(root, 'host/shadow'), `root:${canary}\n`);
  } else root = t.testdir({ host: { shadow: `root:${canary}\n` } });
  const outsideDir = path.join(root, 'host');
  const outside = path.join(outsideDir, 'shadow');
  fs.chmodSync(outside, 0o600);
  const pod = makePod(path.join(root, 'kubelet'));
  const vol = path.join(pod.dir, 'volumes/kubernetes.io~secret/keys');
  const ts = atomicWrite(vol, { ssh_host_key: 'KEY', 'sub/nested': 'N' });
  const spec = { mounts: pod.mounts('app'), annotations: pod.annotations('app') };
  return {
    root,
    vol,
    ts,
    outside,
    outsideDir,
    run: (owners = [{ volume: 'keys', defaultUser: 1000 }]) =>
      outcome(() =>
        runPipeline(
          {
            ...spec,
            annotations: { ...spec.annotations, 'envhook.io/volumeOwners': JSON.stringify(owners) },
          },
          { settings: { ...settings, kubeletRoot: pod.kubeletRoot }, stage: 'hook', log: silentLogger },
        ),
      ),
  };
}

type Case = [string, (f: Fx) => unknown[] | void, RegExp | 'ok'];
const cases: Case[] = [
  [
    'data file is a symlink out (absolute)',
    (f) => {
      fs.rmSync(path.join(f.ts, 'ssh_host_key'));
      fs.symlinkSync(f.outside, path.join(f.ts, 'ssh_host_key'));
    },
    'ok',
  ],
  [
    'data file is a symlink out (relative)',
    (f) => {
      fs.rmSync(path.join(f.ts, 'ssh_host_key'));
      fs.symlinkSync(path.relative(f.ts, f.outside), path.join(f.ts, 'ssh_host_key'));
    },
    'ok',
  ],
  [
    'item names a symlink out',
    (f) => {
      fs.rmSync(path.join(f.ts, 'ssh_host_key'));
      fs.symlinkSync(f.outside, path.join(f.ts, 'ssh_host_key'));
      return [{ volume: 'keys', items: [{ path: 'ssh_host_key', user: 1000 }] }];
    },
    /^volume "keys": item path "ssh_host_key" is a symbolic link, not a file$/,
  ],
  ['item path through the visible symlink', () => [{ volume: 'keys', items: [{ path: 'sub/nested', user: 1000 }] }], 'ok'],
  [
    '..data points out of the volume (absolute)',
    (f) => {
      fs.rmSync(path.join(f.vol, '..data'));
      fs.symlinkSync(f.outsideDir, path.join(f.vol, '..data'));
    },
    /^volume "keys": \.\.data does not point to a timestamped directory inside the volume$/,
  ],
  [
    '..data points out of the volume (relative ..)',
    (f) => {
      fs.rmSync(path.join(f.vol, '..data'));
      fs.symlinkSync(path.relative(f.vol, f.outsideDir), path.join(f.vol, '..data'));
    },
    /^volume "keys": \.\.data does not point to a timestamped directory inside the volume$/,
  ],
  [
    '..data points to a symlinked timestamped dir',
    (f) => {
      fs.rmSync(path.join(f.vol, '..data'));
      fs.symlinkSync(f.outsideDir, path.join(f.vol, '..evil'));
      fs.symlinkSync('..evil', path.join(f.vol, '..data'));
    },
    /^volume "keys": \.\.data points to "\.\.evil": a path element is a symbolic link$/,
  ],
  [
    '..data is a loop',
    (f) => {
      fs.rmSync(path.join(f.vol, '..data'));
      fs.symlinkSync('..data', path.join(f.vol, '..data'));
    },
    /^volume "keys": \.\.data does not point to a timestamped directory inside the volume$/,
  ],
  [
    '..data is a directory',
    (f) => {
      fs.rmSync(path.join(f.vol, '..data'));
      fs.mkdirSync(path.join(f.vol, '..data'));
    },
    /^volume "keys": \.\.data is not a symbolic link$/,
  ],
  [
    'subdirectory is a symlink out',
    (f) => {
      fs.rmSync(path.join(f.ts, 'sub'), { recursive: true });
      fs.symlinkSync(f.outsideDir, path.join(f.ts, 'sub'));
    },
    'ok',
  ],
  [
    'subdirectory symlink loop',
    (f) => {
      fs.symlinkSync('.', path.join(f.ts, 'loop'));
    },
    'ok',
  ],
  [
    'hard link to the outside file',
    (f) => {
      fs.rmSync(path.join(f.ts, 'ssh_host_key'));
      fs.linkSync(f.outside, path.join(f.ts, 'ssh_host_key'));
    },
    /^volume "keys": file "ssh_host_key" has 2 hard links; refusing to chown it$/,
  ],
  [
    'FIFO',
    (f) => {
      execFileSync('mkfifo', [path.join(f.ts, 'fifo')]);
    },
    'ok',
  ],
  [
    'FIFO with a writer waiting',
    (f) => {
      execFileSync('mkfifo', [path.join(f.ts, 'fifo')]);
      return ['writer'];
    },
    'ok',
  ],
  [
    'character device (mknod c 1 5)',
    (f) => {
      execFileSync('mknod', [path.join(f.ts, 'zero'), 'c', '1', '5']);
    },
    'ok',
  ],
  [
    'block device (mknod b 7 0)',
    (f) => {
      execFileSync('mknod', [path.join(f.ts, 'loop0'), 'b', '7', '0']);
    },
    'ok',
  ],
  [
    'item names a FIFO',
    (f) => {
      execFileSync('mkfifo', [path.join(f.ts, 'fifo')]);
      return [{ volume: 'keys', items: [{ path: 'fifo', user: 1000 }] }];
    },
    /^volume "keys": item path "fifo" is a FIFO, not a file$/,
  ],
  [
    'item names a device',
    (f) => {
      execFileSync('mknod', [path.join(f.ts, 'zero'), 'c', '1', '5']);
      return [{ volume: 'keys', items: [{ path: 'zero', user: 1000 }] }];
    },
    /^volume "keys": item path "zero" is a character device, not a file$/,
  ],
  [
    'item names a directory',
    () => [{ volume: 'keys', items: [{ path: 'sub', user: 1000 }] }],
    /^volume "keys": item path "sub" is a directory, not a file$/,
  ],
  [
    '1 GiB sparse data file',
    (f) => {
      fs.truncateSync(path.join(f.ts, 'ssh_host_key'), 1024 ** 3);
    },
    'ok',
  ],
  [
    'item path absolute',
    () => [{ volume: 'keys', items: [{ path: '/etc/shadow', user: 1000 }] }],
    /^annotation "envhook\.io\/volumeOwners"/,
  ],
  [
    'item path with ..',
    () => [{ volume: 'keys', items: [{ path: '../../../../host/shadow', user: 1000 }] }],
    /^annotation "envhook\.io\/volumeOwners"/,
  ],
  [
    'volume name with /',
    () => [{ volume: 'keys/../../../host', defaultUser: 1000 }],
    /(not a valid volume name|annotation "envhook\.io\/volumeOwners")/,
  ],
  [
    'volume that is an emptyDir',
    (f) => {
      fs.mkdirSync(path.join(path.dirname(path.dirname(f.vol)), 'kubernetes.io~empty-dir/scratch'), { recursive: true });
      return [{ volume: 'scratch', defaultUser: 1000 }];
    },
    /^volume "scratch" is not a configMap, secret, projected or downwardAPI volume$/,
  ],
  ['UID negative', () => [{ volume: 'keys', defaultUser: -1 }], /^annotation "envhook\.io\/volumeOwners": \/0\/defaultUser: /],
  ['UID fractional', () => [{ volume: 'keys', defaultUser: 0.5 }], /^annotation "envhook\.io\/volumeOwners": \/0\/defaultUser: /],
  ['UID 2147483648', () => [{ volume: 'keys', defaultUser: 2147483648 }], /^annotation "envhook\.io\/volumeOwners": \/0\/defaultUser: /],
  [
    'UID 2^64',
    () => [{ volume: 'keys', items: [{ path: 'ssh_host_key', user: 18446744073709551616 }] }],
    /^annotation "envhook\.io\/volumeOwners": \/0\/items\/0\/user: /,
  ],
];

// A walk that blocked on the FIFO would never return: its writer holds it open until it is killed,
// and the file's timeout fails the test.
t.test('hostile atomic-write volumes: outside file untouched, no case blocks', async (t) => {
  let passed = 0;
  for (const [name, setup, want] of cases) {
    const f = fixture(t);
    const r = setup(f);
    // After the set-up: a hard link made by the attacker changes the link count and ctime.
    const before = snapshot(f.outside);
    let writer: ReturnType<typeof spawn> | undefined;
    if (r?.[0] === 'writer') writer = spawn('sh', ['-c', `exec 3>'${path.join(f.ts, 'fifo')}'; exec sleep 3600`]);
    const owners = r && r[0] !== 'writer' ? r : undefined;
    const { err } = f.run(owners);
    writer?.kill('SIGKILL');
    const outcome =
      err === undefined ? 'ok' : err instanceof EnvhookError ? err.message : `${(err as Error).name}: ${(err as Error).message}`;
    const ok =
      (want === 'ok'
        ? t.equal(outcome, 'ok', `${name}: succeeds, hostile entry skipped`)
        : t.match(outcome, want, `${name}: ${outcome}`)) &&
      t.same(snapshot(f.outside), before, `${name}: outside file keeps content, owner, mode`) &&
      t.notMatch(outcome, canary);
    if (ok) passed++;
  }
  t.equal(passed, cases.length, `hostile-owners: ${passed}/${cases.length} cases passed`);
});

t.test('a socket in the data directory is skipped', async (t) => {
  const f = fixture(t);
  const short = fs.mkdtempSync('/tmp/eh-sock-');
  t.teardown(() => fs.rmSync(short, { recursive: true, force: true }));
  const server = net.createServer().listen(path.join(short, 's'));
  t.teardown(() => server.close());
  await new Promise((r) => server.once('listening', r));
  fs.renameSync(path.join(short, 's'), path.join(f.ts, 'sock'));
  const { err } = f.run();
  t.equal(err, undefined);
  t.equal(fs.lstatSync(path.join(f.ts, 'sock')).uid, 0, 'socket not chowned');
  t.equal(fs.lstatSync(path.join(f.ts, 'ssh_host_key')).uid, 1000, 'data file chowned');
});

/** The walk runs again and again while a thread swaps a data file with `other`. */
async function race(t: Test, what: string, other: (f: Fx) => SwapSource, runs = 1500) {
  const f = fixture(t, true);
  const before = snapshot(f.outside);
  const swapper = startSwapper(f.ts, 'ssh_host_key', [{ content: 'KEY' }, other(f)]);
  const outcomes = new Map<string, number>();
  for (let i = 0; i < runs; i++) {
    const { err } = f.run();
    const key = err === undefined ? 'ok' : err instanceof EnvhookError ? err.message : `${(err as Error).name}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  const swaps = await swapper.stop();
  t.same(snapshot(f.outside), before, `${what}: outside file keeps content, owner, mode (${runs} walks, ${swaps} swaps)`);
  t.ok(
    [...outcomes.keys()].every((k) => k === 'ok' || k.startsWith('volume "keys": ')),
    `${what}: ${JSON.stringify(Object.fromEntries(outcomes))}`,
  );
  return f;
}

t.test('race: a data file swapped for a symlink out while the walk runs', async (t) => {
  await race(t, 'file ↔ symlink', (f) => ({ symlink: f.outside }));
});

t.test('race: a data file swapped for a hard-linked FIFO (never opened)', async (t) => {
  const dir = t.testdir({});
  const opened = path.join(dir, 'opened');
  let sentinel: ReturnType<typeof spawn> | undefined;
  await race(t, 'file ↔ FIFO', (f) => {
    execFileSync('mkfifo', [path.join(f.root, 'fifo')]);
    sentinel = spawn('sh', ['-c', `exec 3>'${path.join(f.root, 'fifo')}'; : > '${opened}'`]);
    return { link: path.join(f.root, 'fifo') };
  });
  await sleep(100);
  t.notOk(fs.existsSync(opened), 'the FIFO was never opened');
  sentinel?.kill('SIGKILL');
});
