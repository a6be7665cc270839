// The e2e helpers themselves: a busybox bundle runs under real runc and prints its env.
import t from 'tap';
import path from 'node:path';
import { makeBundle, makeRootfs, missingForRunc, parseEnvOutput, runcRun } from './bundle.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';

const missing = missingForRunc();
t.test('a kubelet-like pod and a busybox bundle run under runc', { skip: missing }, async (t) => {
  const dir = t.testdir({});
  const rootfs = makeRootfs(path.join(dir, 'rootfs'));
  const pod = makePod(path.join(dir, 'kubelet'), { emptyDirs: { config: { 'config.env': "A='1'\n" } } });
  const bundle = makeBundle(path.join(dir, 'bundle'), rootfs, {
    env: ['PATH=/bin', 'X=y'],
    mounts: pod.mounts('app'),
    args: ['sh', '-c', 'env; cat /etc/hosts'],
  });
  const r = runcRun(bundle, path.join(dir, 'runc-root'));
  t.equal(r.status, 0, r.stderr);
  t.equal(parseEnvOutput(r.stdout).get('X'), 'y');
  t.match(r.stdout, /127\.0\.0\.1 localhost/);
});
