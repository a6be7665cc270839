// Hostile filesystem (docs/design.md#finding-volumes): a pod author controls every byte and every name inside an
// emptyDir, and can change them while envhook runs. Each case must end, without blocking, with a
// clear error, never read a byte from outside the volume, never open a FIFO or device, and leave a
// file outside the volume exactly as it was.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { execFileSync, spawn } from 'node:child_process';
import { chownPinned, pinFileAt, readConfined, ConfinedError } from '../../src/fs/confined.ts';
import { findVolume } from '../../src/k8s/volumes.ts';
import { discoverPodDir } from '../../src/k8s/pod.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';
import { moduleIn, nodeAsOther, otherUidDir } from '../helpers/other-uid.ts';
import { envhookCli, fastTempDir, makeCanary, outcome, pool, snapshot, startSwapper } from './helpers.ts';
import { sleep } from '../helpers/wait.ts';

const LIMIT = 64 * 1024;
const canary = makeCanary('OUTSIDE');

interface Fixture {
  vol: string;
  outsideDir: string;
  outside: string;
  root: string;
}

/** A kubelet-like pod with emptyDir `cfg`, and a secret host file outside the volume. */
function fixture(t: Test): Fixture {
  const root = t.testdir({ host: { 'secret.env': `SECRET='${canary}'\n` } });
  fs.chmodSync(path.join(root, 'host/secret.env'), 0o600);
  const pod = makePod(path.join(root, 'kubelet'), { emptyDirs: { cfg: { 'good.env': "A='1'\n" } } });
  const spec = { mounts: pod.mounts('app') };
  const podDir = discoverPodDir(spec, pod.annotations('app'), pod.kubeletRoot);
  const vol = findVolume({ pod: podDir, overrides: new Map() }, 'cfg', 'emptyDir');
  return { vol, outsideDir: path.join(root, 'host'), outside: path.join(root, 'host/secret.env'), root };
}

function reasonOf(err: unknown): string {
  if (err instanceof ConfinedError) return err.reason;
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

/** The reason `fn` throws with, or 'no error'. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return reasonOf(err);
  }
  return 'no error';
}

type Setup = (f: Fixture) => string | void;
const cases: [string, Setup, RegExp][] = [
  ['symlink out of the volume (absolute)', (f) => fs.symlinkSync(f.outside, path.join(f.vol, 'app.env')), /^is a symbolic link$/],
  [
    'symlink out of the volume (relative ../..)',
    (f) => fs.symlinkSync(path.relative(f.vol, f.outside), path.join(f.vol, 'app.env')),
    /^is a symbolic link$/,
  ],
  ['symlink to a file inside the volume', (f) => fs.symlinkSync('good.env', path.join(f.vol, 'app.env')), /^is a symbolic link$/],
  ['symlink to /proc/self/environ', (f) => fs.symlinkSync('/proc/self/environ', path.join(f.vol, 'app.env')), /^is a symbolic link$/],
  ['symlink loop (self)', (f) => fs.symlinkSync('app.env', path.join(f.vol, 'app.env')), /^is a symbolic link$/],
  [
    'symlink loop (a → b → a)',
    (f) => {
      fs.symlinkSync('b', path.join(f.vol, 'app.env'));
      fs.symlinkSync('app.env', path.join(f.vol, 'b'));
    },
    /^is a symbolic link$/,
  ],
  ['dangling symlink', (f) => fs.symlinkSync('/nonexistent/x', path.join(f.vol, 'app.env')), /^is a symbolic link$/],
  [
    'intermediate directory is a symlink out',
    (f) => {
      fs.symlinkSync(f.outsideDir, path.join(f.vol, 'sub'));
      return 'sub/secret.env';
    },
    /^a path element is a symbolic link$/,
  ],
  [
    'intermediate directory is a symlink inside',
    (f) => {
      fs.mkdirSync(path.join(f.vol, 'real'));
      fs.writeFileSync(path.join(f.vol, 'real/app.env'), "A='1'\n");
      fs.symlinkSync('real', path.join(f.vol, 'sub'));
      return 'sub/app.env';
    },
    /^a path element is a symbolic link$/,
  ],
  [
    'deep intermediate symlink out',
    (f) => {
      fs.mkdirSync(path.join(f.vol, 'a/b'), { recursive: true });
      fs.symlinkSync(f.outsideDir, path.join(f.vol, 'a/b/c'));
      return 'a/b/c/secret.env';
    },
    /^a path element is a symbolic link$/,
  ],
  [
    'intermediate symlink loop',
    (f) => {
      fs.symlinkSync('sub', path.join(f.vol, 'sub'));
      return 'sub/app.env';
    },
    /^a path element is a symbolic link$/,
  ],
  [
    'intermediate element is a file',
    (f) => {
      fs.writeFileSync(path.join(f.vol, 'sub'), 'x');
      return 'sub/app.env';
    },
    /^a path element is not a directory$/,
  ],
  [
    'intermediate element is a FIFO',
    (f) => {
      execFileSync('mkfifo', [path.join(f.vol, 'sub')]);
      return 'sub/app.env';
    },
    /^a path element is not a directory$/,
  ],
  [
    'FIFO (must not hang)',
    (f) => {
      execFileSync('mkfifo', [path.join(f.vol, 'app.env')]);
    },
    /^is a FIFO$/,
  ],
  [
    'FIFO with a writer waiting',
    (f) => {
      execFileSync('mkfifo', [path.join(f.vol, 'app.env')]);
    },
    /^is a FIFO$/,
  ],
  [
    'character device like /dev/zero (mknod c 1 5)',
    (f) => {
      execFileSync('mknod', [path.join(f.vol, 'app.env'), 'c', '1', '5']);
    },
    /^is a character device$/,
  ],
  [
    'character device like /dev/tty (mknod c 5 0)',
    (f) => {
      execFileSync('mknod', [path.join(f.vol, 'app.env'), 'c', '5', '0']);
    },
    /^is a character device$/,
  ],
  [
    'block device (mknod b 7 0)',
    (f) => {
      execFileSync('mknod', [path.join(f.vol, 'app.env'), 'b', '7', '0']);
    },
    /^is a block device$/,
  ],
  ['symlink to /dev/zero', (f) => fs.symlinkSync('/dev/zero', path.join(f.vol, 'app.env')), /^is a symbolic link$/],
  ['a directory', (f) => fs.mkdirSync(path.join(f.vol, 'app.env')), /^is a directory$/],
  ['missing file', () => undefined, /^not found$/],
  [
    '1 GiB sparse file',
    (f) => {
      fs.writeFileSync(path.join(f.vol, 'app.env'), '');
      fs.truncateSync(path.join(f.vol, 'app.env'), 1024 ** 3);
    },
    /^larger than 65536 bytes$/,
  ],
  [
    'file one byte over the limit',
    (f) => fs.writeFileSync(path.join(f.vol, 'app.env'), 'x'.repeat(LIMIT + 1)),
    /^larger than 65536 bytes$/,
  ],
  ['absolute path', () => '/etc/shadow', /^path must be relative$/],
  ['absolute path into the pod', (f) => f.outside, /^path must be relative$/],
  ['path with ..', () => '../../../../etc/shadow', /^path must not contain '\.\.'$/],
  ['path with .. in the middle', () => 'a/../app.env', /^path must not contain '\.\.'$/],
  ['path with a NUL byte', () => 'app.env\0x', /^path contains a NUL byte$/],
  ['empty path', () => '', /^path is empty$/],
];

// A read that blocked (a FIFO's open or read, a device) would never return: the writer holds its FIFO
// open until it is killed, and the file's timeout fails the test.
t.test('hostile files in an emptyDir: every case refused without blocking, outside file untouched', async (t) => {
  let passed = 0;
  for (const [name, setup, want] of cases) {
    const f = fixture(t);
    const before = snapshot(f.outside);
    const rel = setup(f) ?? 'app.env';
    let writer: ReturnType<typeof spawn> | undefined;
    if (name === 'FIFO with a writer waiting') writer = spawn('sh', ['-c', `exec 3>'${path.join(f.vol, 'app.env')}'; exec sleep 3600`]);
    const rss = process.memoryUsage().rss;
    const { err } = outcome(() => readConfined(f.vol, rel, LIMIT));
    writer?.kill('SIGKILL');
    const ok =
      t.ok(err, `${name}: refused`) &&
      t.match(reasonOf(err), want, `${name}: clear reason`) &&
      t.ok(process.memoryUsage().rss - rss < 32 * 1024 * 1024, `${name}: bounded memory`) &&
      t.notMatch(String((err as Error)?.message), canary, `${name}: no outside byte in the message`) &&
      t.same(snapshot(f.outside), before, `${name}: outside file unchanged`);
    if (ok) passed++;
  }
  t.equal(passed, cases.length, `hostile-fs: ${passed}/${cases.length} cases passed`);
});

t.test('a socket is refused', async (t) => {
  const f = fixture(t);
  const short = fs.mkdtempSync('/tmp/eh-sec-');
  t.teardown(() => fs.rmSync(short, { recursive: true, force: true }));
  const server = net.createServer().listen(path.join(short, 's'));
  t.teardown(() => server.close());
  await new Promise((r) => server.once('listening', r));
  fs.renameSync(path.join(short, 's'), path.join(f.vol, 'app.env'));
  t.equal(reasonOf(outcome(() => readConfined(f.vol, 'app.env', LIMIT)).err), 'is a socket');
});

t.test('an unreadable file (reader without CAP_DAC_OVERRIDE) is refused with a clear reason', async (t) => {
  // Root reads any file: run the reader as nobody to reach EACCES. Nobody must reach the volume,
  // Node and the code wherever the repository lives: all three go to a directory anyone can enter.
  const shared = otherUidDir(t, 'unreadable');
  const vol = path.join(shared, 'cfg');
  fs.mkdirSync(vol, { mode: 0o755 });
  fs.writeFileSync(path.join(vol, 'app.env'), `A='${canary}'\n`, { mode: 0o000 });
  fs.chmodSync(path.join(vol, 'app.env'), 0o000);
  const script = `import { readConfined } from ${JSON.stringify(moduleIn(shared, 'fs/confined.ts'))};
    try { readConfined(${JSON.stringify(vol)}, 'app.env', ${LIMIT}); console.log('read'); } catch (e) { console.log(e.reason); }`;
  const r = nodeAsOther(shared, 65534, ['--input-type=module', '-e', script]);
  t.equal(r.error, undefined, 'the reader is spawned as nobody');
  t.equal(r.status, 0, `the reader as nobody exits 0: ${r.stderr}`);
  t.equal(r.stdout?.trim(), 'permission denied', r.stderr);
  t.notMatch(`${r.stdout}${r.stderr}`, canary);
});

/** Many reads while a thread swaps the name: every read is the good file or a refusal. */
async function race(t: Test, what: string, rel: string, build: (f: Fixture) => Parameters<typeof startSwapper>, reads = 20_000) {
  const f = fixture(t);
  const before = snapshot(f.outside);
  const swapper = startSwapper(...build(f));
  await sleep(20);
  const outcomes = new Map<string, number>();
  let leaked = 0;
  for (let i = 0; i < reads; i++) {
    const { err, value } = outcome(() => readConfined(f.vol, rel, LIMIT));
    const text = value instanceof Buffer ? value.toString() : '';
    if (text.includes(canary) || (err instanceof Error && err.message.includes(canary))) leaked++;
    const key = err ? reasonOf(err) : text === "A='1'\n" ? 'read the volume file' : 'read something else';
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  const swaps = await swapper.stop();
  t.equal(leaked, 0, `${what}: never a byte of the outside file (${reads} reads, ${swaps} swaps)`);
  t.notOk(outcomes.has('read something else'), `${what}: only the volume file or a refusal`);
  // Only an open of some other inode than the one checked can end in this refusal.
  t.notOk(outcomes.has('changed while being opened'), `${what}: never opened anything but the checked file`);
  t.same(snapshot(f.outside), before, `${what}: outside file unchanged`);
  t.comment(`${what}: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  return f;
}

t.test('race: the file swapped for a symlink out between any check and the open', async (t) => {
  await race(t, 'file ↔ symlink', 'app.env', (f) => [f.vol, 'app.env', [{ link: path.join(f.vol, 'good.env') }, { symlink: f.outside }]]);
});

t.test('race: the file swapped for a hard-linked FIFO (the FIFO is never opened)', async (t) => {
  const dir = t.testdir({});
  const opened = path.join(dir, 'opened');
  let sentinel: ReturnType<typeof spawn> | undefined;
  await race(
    t,
    'file ↔ FIFO',
    'app.env',
    (fx) => {
      // The FIFO must live on the volume's file system to be hard-linked into it.
      execFileSync('mkfifo', [path.join(fx.vol, '.fifo')]);
      fs.renameSync(path.join(fx.vol, '.fifo'), path.join(fx.root, 'fifo'));
      // A writer blocks in open() until some reader opens the FIFO: if envhook ever opened it,
      // the writer would go on and create the marker file.
      sentinel = spawn('sh', ['-c', `exec 3>'${path.join(fx.root, 'fifo')}'; : > '${opened}'`]);
      return [fx.vol, 'app.env', [{ link: path.join(fx.vol, 'good.env') }, { link: path.join(fx.root, 'fifo') }]];
    },
    40_000,
  );
  await sleep(100);
  t.notOk(fs.existsSync(opened), 'the FIFO was never opened for reading');
  sentinel?.kill('SIGKILL');
});

t.test('race: an intermediate directory swapped for a symlink out', async (t) => {
  await race(t, 'dir ↔ symlink', 'sub/secret.env', (f) => {
    const real = path.join(f.vol, 'real');
    fs.mkdirSync(real);
    fs.writeFileSync(path.join(real, 'secret.env'), "A='1'\n");
    return [f.vol, 'sub', [{ dir: real }, { symlink: f.outsideDir }]];
  });
});

t.test('the volume directory itself replaced by a symlink is not found', async (t) => {
  const f = fixture(t);
  const pod = path.dirname(path.dirname(path.dirname(f.vol)));
  const evil = path.join(pod, 'volumes/kubernetes.io~empty-dir/evil');
  fs.symlinkSync(f.outsideDir, evil);
  const podDir = { dir: pod, uid: undefined, from: 'flag' as const };
  t.throws(() => findVolume({ pod: podDir, overrides: new Map() }, 'evil', 'emptyDir'), {
    message: /^volume "evil" (not found|is not an emptyDir)$/,
  });
  t.equal(
    reasonOf(outcome(() => readConfined(evil, 'secret.env', LIMIT)).err),
    'a path element is a symbolic link',
    'the confined reader refuses a symlinked root too',
  );
});

t.test('race: the chown path (lstat, then pinFileAt) never opens a FIFO swapped in after the lstat', async (t) => {
  const root = fastTempDir('envhook-reopen-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const vol = path.join(root, 'vol');
  fs.mkdirSync(vol);
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
  const opened = path.join(root, 'opened');
  const sentinel = spawn('sh', ['-c', `exec 3>'${path.join(root, 'fifo')}'; : > '${opened}'`]);
  t.teardown(() => void sentinel.kill('SIGKILL'));
  const swapper = startSwapper(vol, 'key', [{ content: 'KEY' }, { link: path.join(root, 'fifo') }]);
  const dirFd = fs.openSync(vol, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  const outcomes = new Map<string, number>();
  while (!fs.existsSync(path.join(vol, 'key'))) await sleep(5);
  const deadline = Date.now() + 5000;
  for (let tries = 0; tries < 10_000 && Date.now() < deadline;) {
    const before = fs.lstatSync(path.join(vol, 'key'), { throwIfNoEntry: false });
    if (!before?.isFile()) continue;
    tries++;
    let key = 'opened the checked file';
    try {
      fs.closeSync(pinFileAt(dirFd, 'key', before).fd);
    } catch (err) {
      key = reasonOf(err);
    }
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  fs.closeSync(dirFd);
  const swaps = await swapper.stop();
  await sleep(100);
  t.notOk(fs.existsSync(opened), `the FIFO was never opened (${swaps} swaps): ${JSON.stringify(Object.fromEntries(outcomes))}`);
});

t.test('chownPinned changes the pinned inode, not whatever holds the name by then', async (t) => {
  const vol = t.testdir({ key: 'A', other: 'B' });
  const dirFd = fs.openSync(vol, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  t.teardown(() => fs.closeSync(dirFd));
  const before = fs.lstatSync(path.join(vol, 'key'));
  const pinned = pinFileAt(dirFd, 'key', before);
  try {
    // The name now holds another inode (a kubelet-like rename over it, or an attacker's swap).
    fs.renameSync(path.join(vol, 'other'), path.join(vol, 'key'));
    chownPinned(pinned, 4321);
  } finally {
    fs.closeSync(pinned.fd);
  }
  t.equal(fs.fstatSync(fs.openSync(path.join(vol, 'key'), 'r')).uid, before.uid, 'the file now named key is untouched');
  t.equal(pinned.stat.ino, before.ino);
  const swapped = fs.lstatSync(path.join(vol, 'key'));
  t.not(swapped.ino, before.ino, 'the name was swapped');
  t.equal(
    refusal(() => pinFileAt(dirFd, 'key', before)),
    'changed while being opened',
    'pinning the old lstat against the new inode is refused',
  );
});

t.test('pinFileAt refuses a FIFO, a symlink and a directory by their O_PATH fstat, opening none of them', async (t) => {
  const vol = t.testdir({ d: {}, f: 'x' });
  execFileSync('mkfifo', [path.join(vol, 'p')]);
  fs.symlinkSync('f', path.join(vol, 'l'));
  const dirFd = fs.openSync(vol, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  t.teardown(() => fs.closeSync(dirFd));
  const file = fs.lstatSync(path.join(vol, 'f'));
  // O_PATH|O_NOFOLLOW opens a symlink itself, not its target: its fstat is refused like the others.
  for (const name of ['p', 'd', 'l'])
    t.equal(
      refusal(() => pinFileAt(dirFd, name, file)),
      'changed while being opened',
      name,
    );
});

t.test('hostile files through the real CLI (envhook inject): one line, status 1, within 1 s of work', async (t) => {
  const cliCases: [string, (vol: string, outside: string) => void, string][] = [
    ['symlink out', (v, o) => fs.symlinkSync(o, path.join(v, 'app.env')), 'is a symbolic link'],
    ['symlink loop', (v) => fs.symlinkSync('app.env', path.join(v, 'app.env')), 'is a symbolic link'],
    [
      'intermediate symlink out',
      (v, o) => {
        fs.rmSync(path.join(v, 'sub'), { recursive: true, force: true });
        fs.symlinkSync(path.dirname(o), path.join(v, 'sub'));
      },
      'a path element is a symbolic link',
    ],
    [
      'FIFO',
      (v) => {
        execFileSync('mkfifo', [path.join(v, 'app.env')]);
      },
      'is a FIFO',
    ],
    [
      'character device (zero)',
      (v) => {
        execFileSync('mknod', [path.join(v, 'app.env'), 'c', '1', '5']);
      },
      'is a character device',
    ],
    ['directory', (v) => fs.mkdirSync(path.join(v, 'app.env')), 'is a directory'],
    [
      '1 GiB sparse file',
      (v) => {
        fs.writeFileSync(path.join(v, 'app.env'), '');
        fs.truncateSync(path.join(v, 'app.env'), 1024 ** 3);
      },
      'larger than 65536 bytes',
    ],
  ];
  const root = t.testdir({});
  const outside = path.join(root, 'outside.env');
  fs.writeFileSync(outside, `A='${canary}'\n`);
  const before = snapshot(outside);
  const runs = await pool(
    cliCases.map(([name, setup], i) => async () => {
      const dir = path.join(root, `b${i}`);
      const vol = path.join(dir, 'cfg');
      fs.mkdirSync(path.join(vol, 'sub'), { recursive: true });
      setup(vol, outside);
      const rel = name === 'intermediate symlink out' ? 'sub/outside.env' : 'app.env';
      const spec = {
        ociVersion: '1.0.2',
        process: { env: ['PATH=/bin'] },
        annotations: {
          'io.kubernetes.cri.container-name': 'app',
          'envhook.io/env': JSON.stringify({ app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: rel, key: 'A' } } }] }),
        },
      };
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(spec));
      const r = await envhookCli(['inject', '--bundle', dir, '--volume', `cfg=${vol}`]);
      return { r, rel, same: fs.readFileSync(path.join(dir, 'config.json'), 'utf8') === JSON.stringify(spec) };
    }),
  );
  let passed = 0;
  runs.forEach(({ r, rel, same }, i) => {
    const [name, , reason] = cliCases[i]!;
    const ok =
      t.equal(r.code, 1, `${name}: status 1`) &&
      t.equal(r.err, `envhook: volume "cfg": file "${rel}": ${reason}\n`, `${name}: ${r.err.trim()}`) &&
      t.ok(same, `${name}: config.json byte-identical`);
    if (ok) passed++;
  });
  t.same(snapshot(outside), before, 'outside file unchanged');
  t.equal(passed, cliCases.length, `hostile-fs via inject: ${passed}/${cliCases.length}`);
});
