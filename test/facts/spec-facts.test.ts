// Facts from a config.json: identity from the runtime's annotations (or --container), the
// process env, mounts and linux.uidMappings as they are, and where the pod directory comes from.
import t from 'tap';
import { factsFromSpec } from '../../src/facts/spec-facts.ts';
import type { Spec } from '../../src/oci/spec.ts';

const USERNS = [{ containerID: 0, hostID: 100000, size: 65536 }];

t.test('a containerd container', async (t) => {
  const mounts = [{ destination: '/etc/hosts', source: '/var/lib/kubelet/pods/u/etc-hosts', type: 'bind', options: ['rbind'] }];
  const spec: Spec = {
    process: { env: ['PATH=/bin', 'A=1'] },
    mounts,
    linux: { uidMappings: USERNS },
    annotations: { 'io.kubernetes.cri.container-name': 'app', 'envhook.io/env': '{}' },
  };
  const f = factsFromSpec(spec, { container: 'ignored', volumes: new Map([['v', '/d']]) });
  t.equal(f.container, 'app', "the runtime's annotation wins over --container");
  t.equal(f.sandbox, false);
  t.same(f.env, ['PATH=/bin', 'A=1']);
  t.equal(f.mounts, mounts, 'mounts as they are');
  t.same(f.uidMappings, USERNS);
  t.same(f.pod, { from: 'mounts' }, 'the pod directory from kubelet-made mounts');
  t.same([...f.volumes], [['v', '/d']]);
  t.equal(f.annotations, spec.annotations);
});

t.test('a plain bundle, a sandbox, --pod-dir', async (t) => {
  const plain = factsFromSpec({}, { container: 'main', podDir: '/pods/x' });
  t.equal(plain.container, 'main', '--container names a bundle without Kubernetes annotations');
  t.same(plain.env, []);
  t.same(plain.mounts, []);
  t.equal(plain.uidMappings, undefined);
  t.same(plain.pod, { from: 'flag', dir: '/pods/x' });
  t.equal(plain.volumes.size, 0);
  t.same(plain.annotations, {});
  t.equal(factsFromSpec({}).container, undefined);
  t.equal(factsFromSpec({ linux: { uidMappings: [] } }).uidMappings, undefined, 'no mappings: no user namespace');
  t.ok(factsFromSpec({ annotations: { 'io.kubernetes.cri-o.ContainerType': 'sandbox' } }).sandbox);
  t.ok(factsFromSpec({ annotations: { 'io.kubernetes.cri.container-type': 'sandbox' } }).sandbox);
});
