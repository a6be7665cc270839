// The merge rules, as both binaries' `config dump` showed them: 1.x replaces a plugin's table
// per file, 2.x merges tables key by key (later scalars and arrays win, even false and ''), and
// 2.x drops version 2 CRI settings when any file sets the version 3 table (the CRI server's
// own keys of that plugin stay).
import t from 'tap';
import type { ConfigFile } from '../../../src/install/containerd/containerd-files.ts';
import { CRI_V2, CRI_V3, criPlugin, defaultRuntime, effectiveCri, mergePlugins } from '../../../src/install/containerd/containerd-merge.ts';

const file = (p: string, plugins: Record<string, unknown>): ConfigFile => ({
  path: p,
  exists: true,
  text: '',
  hadBlock: false,
  doc: { plugins },
  version: 2,
  importedBy: undefined,
});
const runc = (plugin: string, options: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  [plugin]: { containerd: { runtimes: { runc: { ...extra, options } } } },
});

t.test('1.x: the last file that sets a plugin replaces its whole table', async (t) => {
  const files = [file('/a', { ...runc(CRI_V2, { Root: '/x' }), other: { k: 1 } }), file('/b', runc(CRI_V2, { SystemdCgroup: true }))];
  const merged = mergePlugins(files, '1.x');
  t.same(merged, { [CRI_V2]: { containerd: { runtimes: { runc: { options: { SystemdCgroup: true } } } } }, other: { k: 1 } });
});

t.test('2.x: tables merge at every depth; later scalars and arrays replace, false and empty included', async (t) => {
  const files = [
    file('/a', runc(CRI_V3, { Root: '/x', SystemdCgroup: true }, { pod_annotations: ['a'] })),
    file('/b', runc(CRI_V3, { SystemdCgroup: false, Root: '' }, { pod_annotations: ['b', 'a'] })),
    file('/c', runc(CRI_V3, { IoUid: 7 })),
  ];
  const { cri } = effectiveCri(files, '2.x');
  t.same(defaultRuntime(cri).runtime, { pod_annotations: ['b', 'a'], options: { Root: '', SystemdCgroup: false, IoUid: 7 } });
});

t.test('2.x: version 2 CRI sections count only when no file sets the version 3 table', async (t) => {
  const v2 = file('/old', runc(CRI_V2, { SystemdCgroup: true }));
  t.same(
    effectiveCri([v2], '2.x'),
    { plugin: CRI_V3, cri: (v2.doc.plugins as any)[CRI_V2], dropped: [] },
    'migrated to the version 3 name',
  );
  const v3 = file('/new', { [CRI_V3]: { containerd: { default_runtime_name: 'runc' } } });
  const both = effectiveCri([v3, v2], '2.x');
  t.same(both.dropped, [{ path: '/old', keys: ['containerd'] }]);
  const server = file('/stream', { [CRI_V2]: { stream_idle_timeout: '4h', containerd: {} } });
  t.same(
    effectiveCri([v3, server], '2.x', new Set(['stream_idle_timeout'])).dropped,
    [{ path: '/stream', keys: ['containerd'] }],
    "the CRI server's own keys are not dropped",
  );
  t.equal(defaultRuntime(both.cri).runtime, undefined, 'the version 2 runc options are not in force');
});

t.test('the plugin of a version; the default runtime and its name', async (t) => {
  t.equal(criPlugin(2), CRI_V2);
  t.equal(criPlugin(3), CRI_V3);
  t.equal(criPlugin(4), CRI_V3, 'version 4 keeps the CRI plugin names of version 3');
  t.same(defaultRuntime({ containerd: { default_runtime_name: 'crun', runtimes: { crun: { options: {} } } } }), {
    name: 'crun',
    runtime: { options: {} },
  });
  t.same(defaultRuntime(undefined), { name: 'runc', runtime: undefined });
});
