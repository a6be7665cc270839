import t, { type Test } from 'tap';
import type { FixtureDirContent } from '@tapjs/fixture';
import path from 'node:path';
import fs from 'node:fs';
import { resolveEnv, type EnvRequest } from '../../src/resolve/env.ts';
import { parseEnvFile } from '../../src/envfile/envfile.ts';
import { createVolumeLocator, type VolumeLocator } from '../../src/k8s/volumes.ts';
import type { EnvVar } from '../../src/k8s/annotations.ts';
// What a volume that is not in the pod directory is refused with, as the user reads it.
const NOT_SET_UP =
  "the kubelet sets up only volumes that a container of the pod mounts; mount it in one of the pod's containers (the init container is enough)";

const CANARY = 'CANARY-7f3a9c-secret';

function volumes(t: Test, files: FixtureDirContent): VolumeLocator {
  const dir = t.testdir({
    pod: {
      volumes: { 'kubernetes.io~empty-dir': { config: files }, 'kubernetes.io~secret': { keys: {} }, 'kubernetes.io~nfs': { share: {} } },
    },
  });
  return createVolumeLocator({ pod: { dir: path.join(dir, 'pod'), uid: undefined, from: 'flag' }, overrides: new Map() });
}
const ref = (key: string, p = 'config.env', optional?: boolean): EnvVar => ({
  name: key,
  valueFrom: { fileKeyRef: { volumeName: 'config', path: p, key, ...(optional === undefined ? {} : { optional }) } },
});
const req = (r: Partial<EnvRequest>): EnvRequest => ({ env: [], envFrom: [], removeServiceLinks: false, ...r });
const resolve = (env: string[], r: Partial<EnvRequest>, v: VolumeLocator) => resolveEnv(env, req(r), v, parseEnvFile);
const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
};

t.test('resolution order: process env, service links, envFrom in order, env in order', async (t) => {
  const v = volumes(t, { 'a.env': "A='from-a'\nB='from-a'\nSHARED='a'\n", 'b.env': "SHARED='b'\nC='$(A)'\n" });
  const r = resolve(
    ['PATH=/bin', 'A=image', 'X_SERVICE_HOST=1', 'X_PORT=tcp://1:1', 'Z=z'],
    {
      removeServiceLinks: true,
      envFrom: [{ fileRef: { volumeName: 'config', path: 'a.env' } }, { prefix: 'P_', fileRef: { volumeName: 'config', path: 'b.env' } }],
      env: [
        { name: 'B', value: 'v-$(A)-$(P_SHARED)-$(X_PORT)-$(LATER)' },
        { name: 'LATER', value: 'l' },
        { name: 'E', value: '$(P_C)' },
      ],
    },
    v,
  );
  t.same(r.env, [
    'PATH=/bin',
    'A=from-a',
    'Z=z',
    'B=v-from-a-b-$(X_PORT)-$(LATER)',
    'SHARED=a',
    'P_SHARED=b',
    'P_C=$(A)',
    'LATER=l',
    'E=$(A)',
  ]);
  t.same(r.removed, ['X_SERVICE_HOST', 'X_PORT']);
  t.same(
    r.set.map((s) => s.name),
    ['A', 'SHARED', 'P_SHARED', 'P_C', 'B', 'LATER', 'E'],
  );
  t.equal(r.set.find((s) => s.name === 'B')!.source, 'value');
  t.equal(r.set.find((s) => s.name === 'P_C')!.source, 'envFrom volume "config": file "b.env"');
});

t.test('overriding replaces in place and drops later duplicates', async (t) => {
  const v = volumes(t, {});
  const r = resolve(['A=1', 'B=2', 'A=3'], { env: [{ name: 'A', value: 'x$(A)' }] }, v);
  t.same(r.env, ['A=x3', 'B=2'], 'the last duplicate is what runc would have used');
});

t.test('fileKeyRef: one key; optional covers a missing file and a missing key only', async (t) => {
  const v = volumes(t, {
    'config.env': `CONFIG_VAR='HELLO'\nEMPTY=''\nRAW='$(CONFIG_VAR) $$'\n`,
    'bad.env': `OK='1'\nSECRET=${CANARY}\n`,
    dir: {},
  });
  const r = resolve(
    [],
    {
      env: [
        ref('CONFIG_VAR'),
        ref('EMPTY'),
        ref('RAW'),
        ref('NOPE', 'config.env', true),
        ref('X', 'missing.env', true),
        ref('Y', 'no/dir.env', true),
      ],
    },
    v,
  );
  t.same(r.env, ['CONFIG_VAR=HELLO', 'EMPTY=', 'RAW=$(CONFIG_VAR) $$'], 'values from files are never expanded');
  t.same(
    r.skipped.map((s) => s.source),
    [
      'volume "config": file "config.env": key "NOPE" (optional, key not found)',
      'volume "config": file "missing.env": key "X" (optional, file not found)',
      'volume "config": file "no/dir.env": key "Y" (optional, file not found)',
    ],
  );
  t.equal(
    message(() => resolve([], { env: [ref('NOPE')] }, v)),
    'volume "config": file "config.env": key "NOPE" not found',
  );
  t.equal(
    message(() => resolve([], { env: [ref('X', 'missing.env')] }, v)),
    'volume "config": file "missing.env": not found',
  );
  t.equal(
    message(() => resolve([], { env: [ref('OK', 'bad.env', true)] }, v)),
    'volume "config": file "bad.env": line 2: value must be single-quoted',
  );
  t.equal(
    message(() => resolve([], { env: [ref('OK', 'dir', true)] }, v)),
    'volume "config": file "dir": is a directory',
  );
  const missingVolume: EnvVar = { name: 'A', valueFrom: { fileKeyRef: { volumeName: 'other', path: 'a', key: 'A', optional: true } } };
  t.equal(
    message(() => resolve([], { env: [missingVolume] }, v)),
    `volume "other" not found in the pod: ${NOT_SET_UP}`,
    'optional does not cover a missing volume',
  );
  const secret: EnvVar = { name: 'A', valueFrom: { fileKeyRef: { volumeName: 'keys', path: 'a', key: 'A' } } };
  t.equal(
    message(() => resolve([], { env: [secret] }, v)),
    'volume "keys": file "a": not found',
    'a secret volume is a source too (docs/design.md#env-from-other-volumes)',
  );
  const nfs: EnvVar = { name: 'A', valueFrom: { fileKeyRef: { volumeName: 'share', path: 'a', key: 'A', optional: true } } };
  t.equal(
    message(() => resolve([], { env: [nfs] }, v)),
    'volume "share" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume',
  );
  t.equal(
    message(() => resolve([], { envFrom: [{ fileRef: { volumeName: 'config', path: 'missing.env' } }] }, v)),
    'volume "config": file "missing.env": not found',
  );
  const opt = resolve(['A=1'], { envFrom: [{ prefix: 'P_', fileRef: { volumeName: 'config', path: 'missing.env', optional: true } }] }, v);
  t.same(opt.env, ['A=1']);
  t.same(opt.skipped, [{ name: 'P_*', source: 'envFrom volume "config": file "missing.env" (optional, not found)' }]);
});

t.test('a file is read once however many references name it', async (t) => {
  const v = volumes(t, { 'config.env': "A='1'\nB='2'\n" });
  let reads = 0;
  const counting = (b: Uint8Array) => (reads++, parseEnvFile(b));
  const r = resolveEnv(
    [],
    req({ envFrom: [{ fileRef: { volumeName: 'config', path: 'config.env' } }], env: [ref('A'), ref('B')] }),
    v,
    counting,
  );
  t.equal(reads, 1);
  t.same(r.env, ['A=1', 'B=2']);
});

t.test('symlinks and oversized files are refused', async (t) => {
  const v = volumes(t, { 'real.env': "A='1'\n" });
  const dir = v.find('config', 'emptyDir');
  fs.symlinkSync('real.env', path.join(dir, 'link.env'));
  fs.writeFileSync(path.join(dir, 'big.env'), `A='${'x'.repeat(70000)}'\n`);
  t.equal(
    message(() => resolve([], { env: [ref('A', 'link.env')] }, v)),
    'volume "config": file "link.env": is a symbolic link',
  );
  t.equal(
    message(() => resolve([], { env: [ref('A', 'big.env')] }, v)),
    'volume "config": file "big.env": larger than 65536 bytes',
  );
});

t.test('fileRef: a whole file as the value, in env order, never expanded; optional covers a missing file', async (t) => {
  const v = volumes(t, { password: `${CANARY}-$(A)\n`, 'a.env': "A='from-a'\n", nul: `${CANARY}\0` });
  const file = (name: string, p: string, optional?: boolean): EnvVar => ({
    name,
    valueFrom: { fileRef: { volumeName: 'config', path: p, ...(optional === undefined ? {} : { optional }) } },
  });
  const r = resolve(
    ['PW=image'],
    {
      envFrom: [{ fileRef: { volumeName: 'config', path: 'a.env' } }],
      env: [
        { name: 'BEFORE', value: '$(PW)' },
        file('PW', 'password'),
        { name: 'URL', value: 'db://u:$(PW)@h' },
        file('GONE', 'missing', true),
      ],
    },
    v,
  );
  t.same(
    r.env,
    ['PW=' + `${CANARY}-$(A)`, 'A=from-a', 'BEFORE=image', `URL=db://u:${CANARY}-$(A)@h`],
    'the trailing newline dropped, $(A) in the file kept as written',
  );
  t.equal(r.set.find((s) => s.name === 'PW')!.source, 'fileRef volume "config": file "password"');
  t.same(r.skipped, [{ name: 'GONE', source: 'fileRef volume "config": file "missing" (optional, not found)' }]);
  t.equal(
    message(() => resolve([], { env: [file('X', 'missing')] }, v)),
    'volume "config": file "missing": not found',
  );
  t.equal(
    message(() => resolve([], { env: [file('X', 'nul', true)] }, v)),
    'volume "config": file "nul": contains a NUL byte (a variable cannot hold one)',
  );
  t.equal(
    message(() => resolve([], { env: [file('X', 'password', true)] }, volumes(t, { password: { x: '' } }))),
    'volume "config": file "password": is a directory',
  );
});

t.test('envFrom volumeRef: each regular file a variable, prefixed; invalid names skipped as the kubelet skips keys', async (t) => {
  const v = volumes(t, {
    DB_USER: 'app\n',
    'tls.crt': `${CANARY}-cert\n`,
    'a=b': 'x',
    sub: { PASSWORD: `${CANARY}\n`, deeper: { X: 'x' } },
    nul: { BAD: `${CANARY}\0` },
  });
  const r = resolve(
    ['DB_USER=image'],
    {
      envFrom: [
        { volumeRef: { volumeName: 'config' } },
        { prefix: 'S_', volumeRef: { volumeName: 'config', path: 'sub' } },
        { prefix: 'G_', volumeRef: { volumeName: 'config', path: 'gone', optional: true } },
      ],
      env: [{ name: 'DSN', value: '$(DB_USER):$(S_PASSWORD)' }],
    },
    v,
  );
  t.same(
    r.env,
    ['DB_USER=app', `tls.crt=${CANARY}-cert`, `S_PASSWORD=${CANARY}`, `DSN=app:${CANARY}`],
    'file order by name, values as fileRef gives them, subdirectories passed over',
  );
  t.equal(r.set.find((s) => s.name === 'S_PASSWORD')!.source, 'envFrom volume "config": directory "sub"');
  t.equal(r.set.find((s) => s.name === 'DB_USER')!.source, 'envFrom volume "config": directory "."');
  t.same(r.skipped, [
    {
      name: '"a=b"',
      source: 'envFrom volume "config": directory "." (not a variable name: skipped, as the kubelet skips such keys)',
      invalidName: true,
    },
    { name: 'G_*', source: 'envFrom volume "config": directory "gone" (optional, not found)' },
  ]);
  t.equal(
    message(() => resolve([], { envFrom: [{ volumeRef: { volumeName: 'config', path: 'gone' } }] }, v)),
    'volume "config": directory "gone": not found',
  );
  t.equal(
    message(() => resolve([], { envFrom: [{ volumeRef: { volumeName: 'config', path: 'nul', optional: true } }] }, v)),
    'volume "config": file "nul/BAD": contains a NUL byte (a variable cannot hold one)',
  );
  t.equal(
    message(() => resolve([], { envFrom: [{ volumeRef: { volumeName: 'config', path: 'DB_USER' } }] }, v)),
    'volume "config": directory "DB_USER": a path element is not a directory',
  );
  t.equal(
    message(() => resolve([], { envFrom: [{ volumeRef: { volumeName: 'other', optional: true } }] }, v)),
    `volume "other" not found in the pod: ${NOT_SET_UP}`,
    'optional does not cover a missing volume',
  );
});

t.test("the kernel's limit on the whole environment: exact near it, by lengths far from it", async (t) => {
  const v = volumes(t, {});
  const MAX = 6 * 1024 * 1024;
  // 100 runtime entries of 30,000 ASCII bytes: 3,000,100 bytes; their 3-bytes-a-unit bound is past the limit.
  const big = Array.from({ length: 100 }, (_, i) => `R${String(i).padStart(3, '0')}=${'x'.repeat(29_995)}`);
  const r = resolve(big, { env: [{ name: 'A', value: 'b' }] }, v);
  t.equal(r.env.length, 101, 'under the limit: the exact size decides, not the bound');
  t.equal(r.env.at(-1), 'A=b');
  // 2 MiB of 3-byte characters (6 MiB of UTF-8) in one runtime entry, and one more variable: past it.
  const wide = [`W=${'€'.repeat(MAX / 3)}`];
  t.equal(
    message(() => resolve(wide, { env: [{ name: 'A', value: 'b' }] }, v)),
    `the container's environment would be larger than ${MAX} bytes (the kernel's limit for argv and env)`,
  );
  const small = resolve(
    ['PATH=/bin', 'A=old'],
    {
      env: [
        { name: 'A', value: 'new' },
        { name: 'B', value: '$(A)' },
      ],
    },
    v,
  );
  t.same(
    [...small.values],
    [
      ['A', 'new'],
      ['B', 'new'],
    ],
  );
  t.same(small.env, ['PATH=/bin', 'A=new', 'B=new'], 'merged in place');
});
