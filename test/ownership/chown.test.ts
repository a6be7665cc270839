// The ownership step through the one pipeline, on kubelet-like pod directories: volume lookup,
// UID mapping below the container level (user namespace, idmapped mounts), errors, dry run.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { runPipeline, type PipelineOptions } from '../../src/bundle/spec-pipeline.ts';
import { silentLogger } from '../../src/log.ts';
import type { Spec } from '../../src/oci/spec.ts';
import { makePod, type Pod } from '../../scripts/kubelet-pod.ts';
import { makeAtomicVolume } from '../../scripts/kubelet-pod.ts';

const USERNS = [{ containerID: 0, hostID: 100000, size: 65536 }];

function setup(t: Test) {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), { emptyDirs: { scratch: { f: 'x' } } });
  const keys = makeAtomicVolume(pod, 'secret', 'keys', {
    ssh_host_rsa_key: { data: 'K', mode: 0o400 },
    'nested/dir/tls.key': { data: 'T', mode: 0o400 },
  });
  const ts = path.join(keys, fs.readlinkSync(path.join(keys, '..data')));
  return { pod, keys, ts };
}

function run(
  pod: Pod,
  owners: unknown,
  opts: { mount?: object; extraMounts?: object[]; linux?: object; dryRun?: boolean; stage?: PipelineOptions['stage'] } = {},
) {
  const spec: Spec = {
    annotations: { ...pod.annotations('app'), 'envhook.io/volumeOwners': JSON.stringify(owners) },
    mounts: [
      ...pod.mounts('app'),
      {
        destination: '/keys',
        source: path.join(pod.dir, 'volumes/kubernetes.io~secret/keys'),
        type: 'bind',
        options: ['rbind', 'ro'],
        ...opts.mount,
      },
      ...(opts.extraMounts ?? []),
    ],
    ...(opts.linux ? { linux: opts.linux } : {}),
  } as Spec;
  const settings = { kubeletRoot: pod.kubeletRoot, runtime: 'runc', logFile: undefined, logLevel: 'info' as const };
  return runPipeline(spec, { settings, stage: opts.stage ?? 'inject', log: silentLogger, dryRun: opts.dryRun });
}
const uid = (p: string) => fs.lstatSync(p).uid;

t.test('defaultUser and items, in every stage', async (t) => {
  for (const stage of ['inject', 'create', 'precreate', 'hook'] as const) {
    const { pod, ts } = setup(t);
    const r = run(pod, [{ volume: 'keys', defaultUser: 1000, items: [{ path: 'nested/dir/tls.key', user: 1001 }] }], { stage });
    t.same(
      r.plan.owners,
      [
        { volume: 'keys', path: 'nested/dir/tls.key', uid: 1001, hostUid: 1001 },
        { volume: 'keys', path: 'ssh_host_rsa_key', uid: 1000, hostUid: 1000 },
      ],
      stage,
    );
    t.same([uid(path.join(ts, 'ssh_host_rsa_key')), uid(path.join(ts, 'nested/dir/tls.key'))], [1000, 1001], stage);
  }
});

t.test('dry run plans, changes nothing; the spec is returned unchanged', async (t) => {
  const { pod, ts } = setup(t);
  const r = run(pod, [{ volume: 'keys', defaultUser: 1000 }], { dryRun: true });
  t.equal(r.plan.owners.length, 2);
  t.equal(uid(path.join(ts, 'ssh_host_rsa_key')), 0);
  t.notOk(fs.existsSync(path.join(ts, '..', 'config.json')));
});

t.test('user namespace: mapped through linux.uidMappings; outside the mapping fails before any chown', async (t) => {
  const { pod, ts } = setup(t);
  const r = run(pod, [{ volume: 'keys', defaultUser: 1000, items: [{ path: 'ssh_host_rsa_key', user: 0 }] }], {
    linux: { uidMappings: USERNS, gidMappings: USERNS },
  });
  t.same(r.plan.owners.map((o) => o.hostUid).sort(), [100000, 101000]);
  t.same([uid(path.join(ts, 'ssh_host_rsa_key')), uid(path.join(ts, 'nested/dir/tls.key'))], [100000, 101000]);

  const fresh = setup(t);
  t.throws(
    () =>
      run(fresh.pod, [{ volume: 'keys', defaultUser: 1000, items: [{ path: 'ssh_host_rsa_key', user: 70000 }] }], {
        linux: { uidMappings: USERNS },
      }),
    {
      message: `volume "keys": item path "ssh_host_rsa_key": user 70000 is outside the container's user namespace (linux.uidMappings: 0-65535 → 100000-165535)`,
    },
  );
  t.throws(() => run(fresh.pod, [{ volume: 'keys', defaultUser: 65536 }], { linux: { uidMappings: USERNS } }), {
    message: `volume "keys": defaultUser 65536 is outside the container's user namespace (linux.uidMappings: 0-65535 → 100000-165535)`,
  });
  t.equal(uid(path.join(fresh.ts, 'nested/dir/tls.key')), 0, 'nothing chowned');
});

t.test('idmapped mount: the container UID is written as is (runc 1.1 here cannot run one)', async (t) => {
  const { pod, ts } = setup(t);
  run(pod, [{ volume: 'keys', defaultUser: 1000 }], {
    mount: { options: ['rbind', 'ro', 'idmap'], uidMappings: USERNS, gidMappings: USERNS },
    linux: { uidMappings: USERNS },
  });
  t.equal(uid(path.join(ts, 'ssh_host_rsa_key')), 1000);
  run(pod, [{ volume: 'keys', defaultUser: 70000 }], { mount: { options: ['rbind', 'ro', 'idmap'] }, linux: { uidMappings: USERNS } });
  t.equal(uid(path.join(ts, 'ssh_host_rsa_key')), 70000, 'no user-namespace range applies to an idmapped mount');
});

t.test('clear errors', async (t) => {
  const { pod, ts } = setup(t);
  const msg = (owners: unknown, opts = {}) => {
    try {
      run(pod, owners, opts);
    } catch (err) {
      return (err as Error).message;
    }
    return 'no error';
  };
  t.equal(msg([{ volume: 'nope', defaultUser: 1 }]), 'volume "nope" not found');
  t.equal(msg([{ volume: 'scratch', defaultUser: 1 }]), 'volume "scratch" is not a configMap, secret, projected or downwardAPI volume');
  t.equal(msg([{ volume: 'keys', items: [{ path: 'missing', user: 1 }] }]), 'volume "keys": item path "missing" is not in the volume');
  t.equal(
    msg([{ volume: 'keys', items: [{ path: 'nested/nope/x', user: 1 }] }]),
    'volume "keys": item path "nested/nope/x" is not in the volume',
  );
  t.equal(
    msg([{ volume: 'keys', items: [{ path: 'nested/dir', user: 1 }] }]),
    'volume "keys": item path "nested/dir" is a directory, not a file',
  );
  t.equal(
    msg([{ volume: 'keys', items: [{ path: 'ssh_host_rsa_key/x', user: 1 }] }]),
    'volume "keys": item path "ssh_host_rsa_key/x": a path element is not a directory',
  );
  t.equal(
    msg([{ volume: 'keys', items: [{ path: '../../../etc/shadow', user: 1 }] }]),
    `annotation "envhook.io/volumeOwners": /0/items/0/path: path must not contain '..'`,
  );
  const again = { destination: '/k2', source: path.join(ts, '..'), options: ['rbind', 'ro', 'idmap'] };
  t.equal(
    msg([{ volume: 'keys', defaultUser: 1 }], { extraMounts: [again] }),
    'volume "keys" is mounted both idmapped and not idmapped: one owner on disk cannot be the same user through both',
  );
  t.equal(msg([{ volume: 'keys', defaultUser: 1 }]), 'no error');
  fs.symlinkSync('/etc', path.join(ts, 'etc'));
  t.equal(
    msg([{ volume: 'keys', items: [{ path: 'etc/shadow', user: 1 }] }]),
    'volume "keys": item path "etc/shadow": a path element is a symbolic link',
  );
  t.equal(msg([{ volume: 'keys', items: [{ path: 'etc', user: 1 }] }]), 'volume "keys": item path "etc" is a symbolic link, not a file');
  t.equal(uid('/etc/shadow'), 0);
  t.equal(uid(path.join(ts, 'ssh_host_rsa_key')), 1, 'only the successful run chowned');
});

t.test('one volume of two is bad: nothing is chowned', async (t) => {
  const { pod, ts } = setup(t);
  t.throws(
    () =>
      run(pod, [
        { volume: 'keys', defaultUser: 1000 },
        { volume: 'gone', defaultUser: 1000 },
      ]),
    { message: 'volume "gone" not found' },
  );
  t.equal(uid(path.join(ts, 'ssh_host_rsa_key')), 0);
});

t.test('no annotation, or a sandbox: nothing happens', async (t) => {
  const { pod } = setup(t);
  const settings = { kubeletRoot: pod.kubeletRoot, runtime: 'runc', logFile: undefined, logLevel: 'info' as const };
  t.same(runPipeline({ mounts: [] }, { settings, stage: 'hook', log: silentLogger }).plan.owners, []);
  const sandbox = {
    annotations: { 'io.kubernetes.cri.container-type': 'sandbox', 'envhook.io/volumeOwners': '[{"volume":"keys","defaultUser":1}]' },
  };
  t.same(runPipeline(sandbox, { settings, stage: 'hook', log: silentLogger }).plan.owners, []);
});
