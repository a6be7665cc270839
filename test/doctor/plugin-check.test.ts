// The plugin check: the plugin's state as doctor prints it, and the remedy that fits how it runs.
import t from 'tap';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import { pluginCheck } from '../../src/doctor/plugin-check.ts';
import type { PluginView } from '../../src/doctor/plugin-state.ts';
import { sampleStatus } from '../helpers/nri/status.ts';

const nri = { runtime: 'containerd', mode: 'nri', record: {} } as unknown as RecordedInstall;
const node = (installs: RecordedInstall[] = []): NodeView => ({
  ...readNode({ root: t.testdir({}), prefix: '/usr/local/lib/envhook' }, {}),
  installs,
  status: sampleStatus(),
});
const view = (over: Partial<PluginView>): PluginView => ({ state: 'connected', runsAs: null, problem: null, ...over });

t.test('connected: to which runtime, since when, how it runs', async (t) => {
  t.same(pluginCheck(node(), view({ runsAs: 'pre-installed' })), {
    check: 'plugin',
    state: 'ok',
    what: '50-envhook connected to containerd 2.1.9 since 2026-11-26T10:00:00.250Z; pre-installed: started by the runtime from its plugin directory',
  });
  t.equal(pluginCheck(node(), view({})).what, '50-envhook connected to containerd 2.1.9 since 2026-11-26T10:00:00.250Z');
});

t.test("a problem: the runtime's restart where NRI mode is installed, else the plugin's own log", async (t) => {
  t.same(pluginCheck(node([nri]), view({ state: 'absent', problem: 'NRI plugin installed but not running: no status file F' })), {
    check: 'plugin',
    state: 'problem',
    what: 'NRI plugin installed but not running: no status file F',
    todo: 'restart the runtime, which starts its pre-installed plugins (systemctl restart containerd, or crio); its log: /var/log/envhook-nri.log',
  });
  t.equal(
    pluginCheck(node(), view({ state: 'disconnected', problem: 'NRI plugin not connected since S' })).todo,
    "see the plugin's log (kubectl logs for a DaemonSet, e.g. kubectl -n kube-system logs ds/envhook-nri; the service's journal)",
  );
  // install --external-plugin: NRI on for a DaemonSet's plugin, no pre-installed one to restart
  const external = { ...nri, record: { ...nri.record, files: {}, externalPlugin: true } };
  t.equal(
    pluginCheck(node([external]), view({ state: 'absent', problem: 'NRI plugin installed but not running: no status file F' })).todo,
    "see the plugin's log (kubectl logs for a DaemonSet, e.g. kubectl -n kube-system logs ds/envhook-nri; the service's journal)",
  );
});

t.test('nothing expected, nothing running: skipped', async (t) => {
  t.same(pluginCheck(node(), view({ state: 'absent' })), { check: 'plugin', state: 'skipped', what: 'no NRI plugin installed or running' });
});
