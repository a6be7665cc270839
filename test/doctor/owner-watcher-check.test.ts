// Volume owners hold across the kubelet's rewrites only while a watcher runs: the NRI plugin in
// NRI mode, envhook watch on shim nodes, where the shim recorded pods with owners.
import t from 'tap';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import { ownerWatcherCheck } from '../../src/doctor/owner-watcher-check.ts';
import type { PluginView } from '../../src/doctor/plugin-state.ts';
import { sampleStatus } from '../helpers/nri/status.ts';

type Files = Parameters<typeof t.testdir>[0];
const rec = (mode: string) => ({ runtime: 'containerd', mode, record: {} }) as unknown as RecordedInstall;
const UID = '0b7e8f52-5a61-4c11-9d39-2f6d0c1e4a77';
const node = (files: Files, installs: RecordedInstall[]): NodeView => ({
  ...readNode({ root: t.testdir(files), prefix: '/usr/local/lib/envhook' }, {}),
  installs,
  status: sampleStatus({
    owners: { pods: 2, volumes: 3, watches: 3, polled: 0, ownedBeforeSwap: 0, ownedAfterSwap: 0, refusedByKernel: 0, refusedByBound: 0 },
  }),
});
const plugin = (state: PluginView['state']): PluginView => ({
  state,
  runsAs: state === 'connected' ? 'pre-installed' : null,
  problem: null,
});
const records = (n: number) => ({
  run: { envhook: { owners: Object.fromEntries([...Array(n)].map((_, i) => [`${UID.slice(0, -1)}${i}.json`, '{}'])) } },
});

t.test('NRI mode: the plugin watches while connected, else skipped', async (t) => {
  t.same(ownerWatcherCheck(node({}, [rec('nri')]), plugin('connected')), [
    { check: 'owner-watcher', state: 'ok', what: 'the NRI plugin watches volume owners (2 pods, 3 volumes)' },
  ]);
  t.same(ownerWatcherCheck(node({}, [rec('nri')]), plugin('disconnected')), [
    {
      check: 'owner-watcher',
      state: 'skipped',
      what: 'the NRI plugin, which watches volume owners in NRI mode, is not connected (see plugin)',
    },
  ]);
});

t.test('shim mode: envhook watch needed once a pod recorded owners', async (t) => {
  t.same(ownerWatcherCheck(node({}, [rec('shim')]), plugin('absent')), [
    { check: 'owner-watcher', state: 'ok', what: 'no pod recorded volume owners in /run/envhook/owners: envhook watch not needed yet' },
  ]);
  t.same(ownerWatcherCheck(node(records(2), [rec('shim')]), plugin('absent')), [
    {
      check: 'owner-watcher',
      state: 'problem',
      what: "2 pods recorded volume owners in /run/envhook/owners but no envhook watch runs: their files go back to root at the kubelet's next rewrite",
      todo: 'run envhook watch as a service of the node (docs/ownership.md)',
    },
  ]);
  const watching = { ...records(1), proc: { '77': { cmdline: '/usr/local/lib/envhook/envhook\0watch\0' } } };
  t.same(ownerWatcherCheck(node(watching, [rec('shim')]), plugin('absent')), [
    { check: 'owner-watcher', state: 'ok', what: 'envhook watch runs (pid 77); 1 pods recorded volume owners in /run/envhook/owners' },
  ]);
});

t.test('both installed: one owner-watcher line, the NRI plugin and envhook watch joined, the worse state', async (t) => {
  const both = [rec('shim'), rec('nri')];
  t.same(ownerWatcherCheck(node({}, both), plugin('connected')), [
    {
      check: 'owner-watcher',
      state: 'ok',
      what: 'the NRI plugin watches volume owners (2 pods, 3 volumes); no pod recorded volume owners in /run/envhook/owners: envhook watch not needed yet',
    },
  ]);
  t.same(ownerWatcherCheck(node(records(1), both), plugin('connected')), [
    {
      check: 'owner-watcher',
      state: 'problem',
      what: "the NRI plugin watches volume owners (2 pods, 3 volumes); 1 pods recorded volume owners in /run/envhook/owners but no envhook watch runs: their files go back to root at the kubelet's next rewrite",
      todo: 'run envhook watch as a service of the node (docs/ownership.md)',
    },
  ]);
});
