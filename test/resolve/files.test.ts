// Env files of one start: read and parsed once per (volume, path), optional only for a missing
// file, errors with volume, path and line, never a byte of the file.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { EnvFiles, describeFile } from '../../src/resolve/files.ts';
import { parseEnvFile } from '../../src/envfile/envfile.ts';
import { EnvhookError } from '../../src/errors.ts';
import { createVolumeLocator, type VolumeLocator } from '../../src/k8s/volumes.ts';
import { atomicVolumeDir, makePod } from '../../scripts/kubelet-pod.ts';

const CANARY = 'CANARY-files-9d';

t.test('one read and parse per file; optional covers a missing file only', async (t) => {
  const dir = t.testdir({ 'a.env': `A='${CANARY}'\n`, 'bad.env': `A='${CANARY}\n`, sub: {} });
  let parses = 0;
  const find = (name: string) =>
    name === 'v'
      ? dir
      : (() => {
          throw new EnvhookError(`volume "${name}" not found`);
        })();
  const volumes: VolumeLocator = { find, envSource: (name) => ({ dir: find(name), viaData: false }) };
  const files = new EnvFiles(volumes, (b) => (parses++, parseEnvFile(b)));
  t.same([...files.read({ volumeName: 'v', path: 'a.env' })!], [['A', CANARY]]);
  files.read({ volumeName: 'v', path: './a.env' });
  files.read({ volumeName: 'v', path: 'a.env', optional: true });
  t.equal(parses, 2, 'the same (volume, path) is parsed once');
  t.equal(files.read({ volumeName: 'v', path: 'missing.env', optional: true }), undefined);
  t.throws(() => files.read({ volumeName: 'v', path: 'missing.env' }), new EnvhookError('volume "v": file "missing.env": not found'));
  t.throws(
    () => files.read({ volumeName: 'w', path: 'a.env', optional: true }),
    new EnvhookError('volume "w" not found'),
    'optional does not cover a missing volume',
  );
  t.throws(() => files.read({ volumeName: 'v', path: 'sub', optional: true }), new EnvhookError('volume "v": file "sub": is a directory'));
  const err = t.throws(() => files.read({ volumeName: 'v', path: 'bad.env' })) as Error;
  t.match(err.message, /^volume "v": file "bad\.env": line 1: /);
  t.notMatch(err.message, CANARY);
});

t.test('a volume is opened once for all its files of a start and released by close()', async (t) => {
  const dir = t.testdir({ 'a.env': `A='${CANARY}'\n`, 'b.env': "B='2'\n" });
  const volumes: VolumeLocator = { find: () => dir, envSource: () => ({ dir, viaData: false }) };
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const before = fds();
  const files = new EnvFiles(volumes, parseEnvFile);
  const opens = t.capture(fs, 'openSync', fs.openSync);
  t.same([...files.read({ volumeName: 'v', path: 'a.env' })!], [['A', CANARY]]);
  t.equal(files.value({ volumeName: 'v', path: 'b.env' }), "B='2'", 'a whole-file value of the same volume');
  t.equal(opens().filter((c) => c.args[0] === dir).length, 1, 'the volume directory opened once');
  t.equal(fds(), before + 1, 'held until close()');
  files.close();
  t.equal(fds(), before, 'close() releases it');
});

t.test('describeFile quotes names as JSON', async (t) => {
  t.equal(describeFile({ volumeName: 'v', path: 'a "b".env' }), 'volume "v": file "a \\"b\\".env"');
});

t.test(
  'secret, configMap, projected, downwardAPI and CSI volumes of a kubelet-laid-out pod (docs/design.md#env-from-other-volumes)',
  async (t) => {
    const env = `A='${CANARY}'\n`;
    const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
      atomic: [
        { plugin: 'secret', name: 'db', payload: { 'db.env': env, 'bad.env': `A=${CANARY}\n` } },
        { plugin: 'configmap', name: 'cfg', payload: { 'app.env': env } },
        { plugin: 'projected', name: 'all', payload: { 'p.env': env } },
        { plugin: 'downward-api', name: 'info', payload: { 'd.env': env } },
      ],
      csi: [
        { name: 'vault', layout: 'atomic', files: { 'v.env': env } },
        { name: 'later', layout: 'unmounted' },
      ],
    });
    fs.mkdirSync(path.join(pod.dir, 'volumes/kubernetes.io~nfs/share'), { recursive: true });
    const files = new EnvFiles(
      createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map() }),
      parseEnvFile,
    );
    for (const [volumeName, p] of [
      ['db', 'db.env'],
      ['cfg', 'app.env'],
      ['all', 'p.env'],
      ['info', 'd.env'],
      ['vault', 'v.env'],
    ] as const) {
      t.same([...files.read({ volumeName, path: p })!], [['A', CANARY]], volumeName);
    }
    t.equal(files.read({ volumeName: 'later', path: 'v.env', optional: true }), undefined, 'a CSI volume not mounted yet: optional skips');
    const messages = [
      [{ volumeName: 'later', path: 'v.env' }, 'volume "later": file "v.env": not found'],
      [{ volumeName: 'db', path: 'nope', optional: false }, 'volume "db": file "nope": not found'],
      [{ volumeName: 'db', path: 'bad.env', optional: true }, 'volume "db": file "bad.env": line 1: value must be single-quoted'],
      [
        { volumeName: 'share', path: 'a', optional: true },
        'volume "share" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume',
      ],
      [{ volumeName: 'gone', path: 'a', optional: true }, 'volume "gone" not found'],
    ] as const;
    for (const [ref, message] of messages) {
      const err = t.throws(() => files.read(ref), new EnvhookError(message)) as Error;
      t.notMatch(`${err.message} ${String(err.cause)}`, CANARY);
    }
    const ts = path.join(atomicVolumeDir(pod, 'secret', 'db'), fs.readlinkSync(path.join(atomicVolumeDir(pod, 'secret', 'db'), '..data')));
    fs.rmSync(path.join(ts, 'db.env'));
    fs.symlinkSync('/etc/hostname', path.join(ts, 'db.env'));
    const fresh = new EnvFiles(
      createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map() }),
      parseEnvFile,
    );
    t.throws(
      () => fresh.read({ volumeName: 'db', path: 'db.env', optional: true }),
      new EnvhookError('volume "db": file "db.env": is a symbolic link'),
      'optional covers a missing file only',
    );
  },
);

t.test('value: a whole file of a secret or CSI volume, read once; errors name volume and path only', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
    atomic: [{ plugin: 'secret', name: 'db', payload: { password: `${CANARY}\n`, nul: `${CANARY}\0`, big: CANARY.repeat(7000) } }],
    csi: [{ name: 'vault', layout: 'atomic', files: { 'db-password': CANARY } }],
  });
  const files = new EnvFiles(createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map() }), parseEnvFile);
  t.equal(files.value({ volumeName: 'db', path: 'password' }), CANARY);
  t.equal(files.value({ volumeName: 'vault', path: 'db-password' }), CANARY);
  const ts = path.join(atomicVolumeDir(pod, 'secret', 'db'), fs.readlinkSync(path.join(atomicVolumeDir(pod, 'secret', 'db'), '..data')));
  fs.rmSync(path.join(ts, 'password'));
  t.equal(files.value({ volumeName: 'db', path: 'password' }), CANARY, 'read once a start, as env files are');
  t.equal(files.value({ volumeName: 'db', path: 'password', optional: true }), CANARY);
  t.equal(files.value({ volumeName: 'db', path: 'gone', optional: true }), undefined);
  for (const [p, reason] of [
    ['nul', 'contains a NUL byte (a variable cannot hold one)'],
    ['big', 'larger than 65536 bytes'],
    ['gone', 'not found'],
  ]) {
    const err = t.throws(
      () => files.value({ volumeName: 'db', path: p! }),
      new EnvhookError(`volume "db": file "${p}": ${reason}`),
    ) as Error;
    t.notMatch(`${err.message} ${String(err.cause)}`, CANARY);
  }
});

t.test('dir: the files of a secret and a CSI volume as variables; errors name volume and file only', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
    atomic: [{ plugin: 'secret', name: 'db', payload: { username: 'app\n', password: `${CANARY}\n`, '.dockerconfigjson': '{}' } }],
    csi: [{ name: 'vault', layout: 'plain', files: { 'db-password': CANARY, 'bad key': 'x', é: 'x' } }],
  });
  const files = new EnvFiles(createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map() }), parseEnvFile);
  t.same(files.dir({ volumeName: 'db' }, 'DB_'), {
    vars: new Map([
      ['DB_.dockerconfigjson', '{}'],
      ['DB_password', CANARY],
      ['DB_username', 'app'],
    ]),
    invalid: [],
  });
  t.same(
    files.dir({ volumeName: 'vault' }, ''),
    {
      vars: new Map([
        ['bad key', 'x'],
        ['db-password', CANARY],
      ]),
      invalid: ['é'],
    },
    'the relaxed rule: printable ASCII without =',
  );
  const ts = path.join(atomicVolumeDir(pod, 'secret', 'db'), fs.readlinkSync(path.join(atomicVolumeDir(pod, 'secret', 'db'), '..data')));
  fs.writeFileSync(path.join(ts, 'big'), CANARY.repeat(7000));
  const err = t.throws(
    () => files.dir({ volumeName: 'db' }, ''),
    new EnvhookError('volume "db": file "big": larger than 65536 bytes'),
  ) as Error;
  t.notMatch(`${err.message} ${String(err.cause)}`, CANARY);
  fs.rmSync(path.join(ts, 'big'));
  fs.symlinkSync('/etc', path.join(ts, 'etc'));
  t.throws(
    () => files.dir({ volumeName: 'db', optional: true }, ''),
    new EnvhookError('volume "db": file "etc": is a symbolic link'),
    'optional covers a missing directory only',
  );
  t.equal(files.dir({ volumeName: 'db', path: 'nope', optional: true }, ''), undefined);
});
