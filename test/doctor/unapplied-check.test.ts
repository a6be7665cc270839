// The unapplied check: each listed container whose process still runs (under --root's /proc) is a
// problem naming pod, namespace and container with what to do; one that ended is not.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import { unappliedChecks } from '../../src/doctor/unapplied-check.ts';
import type { UnappliedContainer } from '../../src/nri/status-file.ts';
import { sampleStatus } from '../helpers/nri/status.ts';

/** A --root whose /proc shows pid 100 (start 555) running and pid 200 a zombie. */
function root(): string {
  const dir = t.testdir({ proc: { '100': { stat: '100 (sleep) S 1 ' + '0 '.repeat(17) + '555 0' }, '200': { stat: '200 (x) Z 1 0' } } });
  fs.mkdirSync(path.join(dir, 'etc'));
  return dir;
}
const node = (unapplied: UnappliedContainer[] | undefined, settings: Record<string, unknown> = {}): NodeView => {
  const view = readNode({ root: root(), prefix: '/usr/local/lib/envhook' }, {});
  return { ...view, settings: { ...view.settings, ...settings }, status: sampleStatus(unapplied ? { unapplied } : {}) };
};
const c = (over: Partial<UnappliedContainer>): UnappliedContainer => ({
  id: 'c1',
  container: 'app',
  pod: 'web',
  namespace: 'shop',
  ...over,
});

t.test('a container still running without its env: a problem line naming it, and what to do', async (t) => {
  t.same(unappliedChecks(node([c({ pid: 100, pidStartTicks: 555 })])), [
    {
      check: 'unapplied',
      state: 'problem',
      what: 'container app of pod web in namespace shop runs without its env (created while the NRI plugin was not registered)',
      todo: 'kubectl delete pod web -n shop (the kubelet creates it again, through envhook), or let envhook evict such containers: the pod annotation envhook.io/evictUnapplied: "true", or evictUnapplied in /etc/envhook/config.json',
    },
  ]);
  const failed = unappliedChecks(node([c({ evictionFailed: true })]))[0]!;
  t.equal(
    failed.todo,
    "its eviction failed (see the plugin's log); kubectl delete pod web -n shop (the kubelet creates it again, through envhook)",
  );
  t.equal(unappliedChecks(node([c({})], { evictUnapplied: true }))[0]!.todo, failed.todo, 'eviction on, still running: it failed');
});

t.test('ended: its pid gone, a zombie, or another process (start time differs): no problem', async (t) => {
  for (const gone of [c({ pid: 101 }), c({ pid: 200 }), c({ pid: 100, pidStartTicks: 556 })])
    t.same(unappliedChecks(node([gone])), [{ check: 'unapplied', state: 'ok', what: 'no container runs without the env it asked for' }]);
  t.same(
    unappliedChecks(node([])).map((r) => r.state),
    ['ok'],
  );
  t.same(
    unappliedChecks(node(undefined)).map((r) => r.state),
    ['ok'],
    'a status file of an envhook before the list',
  );
});

t.test('no status file: skipped, saying so, where NRI mode is installed; else no check', async (t) => {
  const view = { ...node([]), status: undefined };
  t.same(unappliedChecks(view), [], 'no NRI: nothing to look at');
  const nri = { ...view, installs: [{ runtime: 'containerd', mode: 'nri', record: {} } as unknown as RecordedInstall] };
  t.same(unappliedChecks(nri), [{ check: 'unapplied', state: 'skipped', what: 'no NRI plugin status file /run/envhook/nri-status.json' }]);
});
