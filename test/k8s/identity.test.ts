// Container identity from the runtime's annotations: CRI-O's and containerd's keys.
import t from 'tap';
import { containerName, isSandbox, podUidAnnotation } from '../../src/k8s/identity.ts';

t.test('CRI-O and containerd keys', async (t) => {
  t.equal(containerName({ 'io.kubernetes.container.name': 'a' }), 'a');
  t.equal(containerName({ 'io.kubernetes.cri.container-name': 'b' }), 'b');
  t.equal(
    containerName({ 'io.kubernetes.container.name': '', 'io.kubernetes.cri.container-name': 'b' }),
    'b',
    'an empty value does not count',
  );
  t.equal(containerName({}), undefined);
  t.equal(podUidAnnotation({ 'io.kubernetes.pod.uid': 'u' }), 'u');
  t.equal(podUidAnnotation({ 'io.kubernetes.cri.sandbox-uid': 'v' }), 'v');
  t.equal(podUidAnnotation({}), undefined);
});

t.test('sandboxes', async (t) => {
  t.ok(isSandbox({ 'io.kubernetes.cri.container-type': 'sandbox' }));
  t.ok(isSandbox({ 'io.kubernetes.cri-o.ContainerType': 'sandbox' }));
  t.notOk(isSandbox({ 'io.kubernetes.cri.container-type': 'container' }));
  t.notOk(isSandbox({}));
});
