// The front of a runtime handler install must exec a real runtime under --root: its data file's
// runtime= (a path, or a name found where a runtime service's PATH finds it), never a front.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import { frontCheck } from '../../src/doctor/front-check.ts';

type Files = Parameters<typeof t.testdir>[0];

const PREFIX = '/usr/local/lib/envhook';
const FRONT = `${PREFIX}/envhook-runtime`;
const TODO = 'name the real runtime: envhook install --runtime RUNTIME --oci-runtime PATH';
const shim = { runtime: 'containerd', mode: 'shim', record: {} } as unknown as RecordedInstall;
const RUNC = '#!/bin/sh\nexec true\n';

function node(files: Files, installs: RecordedInstall[] = [shim]): NodeView {
  const root = t.testdir(files);
  for (const exe of [FRONT, '/usr/sbin/runc', '/opt/front-copy']) {
    const real = path.join(root, exe);
    if (fs.existsSync(real)) fs.chmodSync(real, 0o755);
  }
  return { ...readNode({ root, prefix: PREFIX }, {}), installs };
}
const tree = (conf: string | undefined, sbin: Files = { runc: RUNC }) => ({
  usr: {
    local: {
      lib: {
        envhook: { 'envhook-runtime': '#!/bin/sh\n# envhook-runtime-front: marker\n', ...(conf ? { 'envhook-runtime.conf': conf } : {}) },
      },
    },
    sbin,
  },
});

t.test('no runtime handler installed: skipped, with why', async (t) => {
  t.same(frontCheck(node({}, [])), {
    check: 'front',
    state: 'skipped',
    what: 'no runtime handler installed (the front runs only under it)',
  });
  t.equal(frontCheck(node({}, [{ ...shim, runtime: 'podman' } as RecordedInstall])).state, 'skipped', 'Podman runs no front');
});

t.test('a path or a name in envhook-runtime.conf that resolves to a runtime: ok', async (t) => {
  t.same(frontCheck(node(tree('runtime=/usr/sbin/runc\n'))), { check: 'front', state: 'ok', what: `${FRONT} execs /usr/sbin/runc` });
  t.same(frontCheck(node(tree('runtime=runc\n'))), { check: 'front', state: 'ok', what: `${FRONT} execs /usr/sbin/runc` });
});

t.test('each way the front would fail every container: the line and the remedy', async (t) => {
  t.same(frontCheck(node({})), {
    check: 'front',
    state: 'problem',
    what: `${FRONT} is missing or not executable`,
    todo: 're-run envhook install',
  });
  t.same(frontCheck(node(tree(undefined))), {
    check: 'front',
    state: 'problem',
    what: `no ${PREFIX}/envhook-runtime.conf: the front execs runc from the runtime's PATH`,
    todo: 're-run envhook install',
  });
  t.same(frontCheck(node(tree('runtime=crun\n'))), {
    check: 'front',
    state: 'problem',
    what: 'runtime "crun" is not in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (a front skipped)',
    todo: TODO,
  });
  t.same(frontCheck(node(tree('runtime=/usr/sbin/runc\n', {}))), {
    check: 'front',
    state: 'problem',
    what: 'runtime /usr/sbin/runc is missing or not executable',
    todo: TODO,
  });
  const looped = tree('runtime=/usr/sbin/runc\n', { runc: '#!/bin/sh\n# envhook-runtime-front: a copy of the front\n' });
  t.same(frontCheck(node(looped)), {
    check: 'front',
    state: 'problem',
    what: 'runtime /usr/sbin/runc is an envhook front, not a runtime',
    todo: TODO,
  });
});
