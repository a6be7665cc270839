// The kubelet root in force must hold a pods directory under --root.
import t from 'tap';
import { readNode } from '../../src/doctor/node.ts';
import { kubeletRootCheck } from '../../src/doctor/kubelet-root-check.ts';

type Files = Parameters<typeof t.testdir>[0];

const FIX = "set kubeletRoot in /etc/envhook/config.json to the kubelet's --root-dir (envhook install --kubelet-root DIR writes it)";
const check = (files: Files, kubeletRoot?: string) =>
  kubeletRootCheck(
    readNode({ root: t.testdir(files), prefix: '/usr/local/lib/envhook' }, kubeletRoot ? { ENVHOOK_KUBELET_ROOT: kubeletRoot } : {}),
  );

t.test('the default root with its pods directory: ok', async (t) => {
  t.same(check({ var: { lib: { kubelet: { pods: {} } } } }), { check: 'kubelet-root', state: 'ok', what: '/var/lib/kubelet/pods exists' });
});

t.test('each way it is wrong: the line and the remedy', async (t) => {
  t.same(check({}), { check: 'kubelet-root', state: 'problem', what: '/var/lib/kubelet is not a directory', todo: FIX });
  t.same(check({ var: { lib: { kubelet: '' } } }), {
    check: 'kubelet-root',
    state: 'problem',
    what: '/var/lib/kubelet is not a directory',
    todo: FIX,
  });
  t.same(check({ var: { lib: { kubelet: {} } } }), {
    check: 'kubelet-root',
    state: 'problem',
    what: '/var/lib/kubelet has no pods directory: no kubelet runs with that root',
    todo: FIX,
  });
  t.same(check({ data: { kubelet: { pods: {} } } }, '/data/kubelet'), {
    check: 'kubelet-root',
    state: 'ok',
    what: '/data/kubelet/pods exists',
  });
});
