// The run directory uninstall cleans: the flag, else the node's settings file, else the default.
import t from 'tap';
import { makeLayout } from '../../src/install/layout.ts';
import { nodeRunDir } from '../../src/install/run-dir-setting.ts';

t.test('--run-dir, else the settings file under --root (or ENVHOOK_CONFIG), else /run/envhook', async (t) => {
  const root = t.testdir({ etc: { envhook: { 'config.json': '{"runDir": "/run/eh"}' } }, other: '{"runDir": "/run/other"}', bad: '{' });
  const layout = makeLayout('containerd', { root });
  t.equal(nodeRunDir(layout, '/run/x', {}), '/run/x');
  t.throws(() => nodeRunDir(layout, 'run/x', {}), { message: '--run-dir must be an absolute host path' });
  t.equal(nodeRunDir(layout, undefined, {}), '/run/eh');
  t.equal(nodeRunDir(layout, undefined, { ENVHOOK_CONFIG: `${root}/other` }), '/run/other');
  t.equal(nodeRunDir(layout, undefined, { ENVHOOK_CONFIG: `${root}/bad` }), '/run/envhook', 'a file that is not valid: the default');
  t.equal(nodeRunDir(makeLayout('containerd', { root: t.testdir({}) }), undefined, {}), '/run/envhook');
});
