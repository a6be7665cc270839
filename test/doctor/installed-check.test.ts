// What is installed: each recorded install by runtime and mode, a plugin run as a DaemonSet or by
// the node; nothing at all is a problem on a node meant to run envhook.
import t from 'tap';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import { installedCheck } from '../../src/doctor/installed-check.ts';
import type { PluginView } from '../../src/doctor/plugin-state.ts';
import { sampleStatus } from '../helpers/nri/status.ts';

const rec = (runtime: string, mode: string) => ({ runtime, mode, record: {} }) as unknown as RecordedInstall;
const node = (installs: RecordedInstall[]): NodeView => ({
  ...readNode({ root: t.testdir({}), prefix: '/usr/local/lib/envhook' }, {}),
  installs,
  status: sampleStatus({ runtime: { name: 'crio', version: '1.36.3' } }),
});
const plugin = (runsAs: PluginView['runsAs']): PluginView => ({ state: 'connected', runsAs, problem: null });

t.test('each install by runtime and mode, and a plugin that runs without one', async (t) => {
  t.same(installedCheck(node([rec('containerd', 'shim'), rec('crio', 'nri'), rec('podman', 'shim')]), plugin('pre-installed')), {
    check: 'installed',
    state: 'ok',
    what: 'containerd (runtime handler), crio (NRI plugin), podman (hooks)',
  });
  t.equal(installedCheck(node([]), plugin('daemonset')).what, 'crio (NRI plugin as a DaemonSet)');
  t.equal(installedCheck(node([]), plugin('external')).what, 'crio (NRI plugin run by the node)');
});

t.test('nothing installed and nothing running: a problem naming the state file', async (t) => {
  t.same(installedCheck(node([]), plugin(null)), {
    check: 'installed',
    state: 'problem',
    what: 'nothing: no install recorded in /usr/local/lib/envhook/state.json and no NRI plugin running',
    todo: 'envhook install --runtime containerd|crio|podman (README, Install); or --prefix DIR if it was installed elsewhere',
  });
});
