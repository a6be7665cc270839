// The node as status and doctor read it under --root: the settings file (its problem kept, not
// thrown), the installs of <prefix>/state.json in runtime order, the NRI status file.
import t from 'tap';
import path from 'node:path';
import { readNode } from '../../src/doctor/node.ts';
import { sampleStatus } from '../helpers/nri/status.ts';

const PREFIX = '/usr/local/lib/envhook';
const record = { config: '/etc/containerd/config.toml', files: {}, blocks: [] };

t.test('installs from state.json, in runtime order, each with its mode; the status file', async (t) => {
  const state = { version: 1, runtimes: { 'crio-nri': record, containerd: record, podman: record } };
  const root = t.testdir({
    usr: { local: { lib: { envhook: { 'state.json': JSON.stringify(state) } } } },
    run: { envhook: { 'nri-status.json': JSON.stringify(sampleStatus()) } },
  });
  const n = readNode({ root, prefix: PREFIX }, {});
  t.same(
    n.installs.map((i) => `${i.runtime} ${i.mode}`),
    ['containerd shim', 'crio nri', 'podman shim'],
  );
  t.equal(n.statusFile, '/run/envhook/nri-status.json');
  t.equal(n.status?.plugin, '50-envhook');
  t.equal(n.real('/etc/envhook/config.json'), path.join(root, 'etc/envhook/config.json'));
});

t.test('the settings in force: the flag over the environment over the file', async (t) => {
  const root = t.testdir({ etc: { envhook: { 'config.json': '{"kubeletRoot": "/file/kubelet", "runDir": "/file/run"}' } } });
  const n = readNode({ root, prefix: PREFIX, runDir: '/flag/run' }, { ENVHOOK_KUBELET_ROOT: '/env/kubelet' });
  t.equal(n.settings.kubeletRoot, '/env/kubelet');
  t.equal(n.settings.runDir, '/flag/run');
  t.equal(n.statusFile, '/flag/run/nri-status.json');
  t.same(n.fileSettings, { kubeletRoot: '/file/kubelet', runDir: '/file/run' });
  t.equal(n.settingsProblem, undefined);
});

t.test('a settings file that cannot be used: its problem kept, the defaults in force', async (t) => {
  const root = t.testdir({ etc: { envhook: { 'config.json': '{"kubeletRoot": 7}' } } });
  const bad = readNode({ root, prefix: PREFIX }, {});
  t.match(bad.settingsProblem, /^config file \/etc\/envhook\/config\.json:1:\d+: \/kubeletRoot: /);
  t.equal(bad.settings.kubeletRoot, '/var/lib/kubelet');
  const named = path.join(root, 'missing.json');
  const missing = readNode({ root, prefix: PREFIX }, { ENVHOOK_CONFIG: named });
  t.equal(missing.settingsFile, named);
  t.equal(missing.settingsProblem, `cannot read config file ${named}: no such file or directory (ENOENT)`);
  t.equal(readNode({ root: t.testdir({}), prefix: PREFIX }, {}).settingsProblem, undefined, 'the default file absent: no problem');
});

t.test('a --root that is not a directory is refused', async (t) => {
  const dir = t.testdir({ file: '' });
  t.throws(() => readNode({ root: path.join(dir, 'file'), prefix: PREFIX }, {}), {
    message: `--root ${path.join(dir, 'file')} is not a directory: name the node's root directory`,
  });
});
