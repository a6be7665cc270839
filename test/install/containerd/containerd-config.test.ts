// readContainerdConfig on real files under a test root: which containerd lines read them, the
// version envhook writes and where it came from (the root file, the binary's default, or version
// 2 for both lines), a drop-in about to be created read as empty, envhook's own key edits taken
// back, and the versions a binary cannot read refused.
import t, { type Test } from 'tap';
import path from 'node:path';
import { makeLayout } from '../../../src/install/layout.ts';
import { readContainerdConfig } from '../../../src/install/containerd/containerd-config.ts';
import { findContainerd, type ContainerdBinary } from '../../../src/install/containerd/containerd-binary.ts';
import type { KeyEdit } from '../../../src/install/key-edit.ts';
import { hostFiles } from '../../helpers/install/install.ts';
import { containerd2ForInstall } from '../../helpers/nri/containerd.ts';

const ROOT = '/etc/containerd/config.toml';
const { c2, skip2 } = containerd2ForInstall();

function layoutWith(t: Test, files: Record<string, string>) {
  const root = path.join(t.testdir({}), 'root');
  hostFiles(root, files);
  return makeLayout('containerd', { root });
}
const paths = (r: { files: { path: string }[] }) => r.files.map((f) => f.path);

t.test('no root file and no binary: a new version 2 file, read as both lines would', async (t) => {
  const cfg = readContainerdConfig(layoutWith(t, {}), { root: ROOT });
  t.equal(cfg.version, 2);
  t.equal(cfg.versionFrom, 'a new file and no containerd binary to ask: version 2, which containerd 1.x and 2.x both read');
  t.same(
    cfg.readings.map((r) => r.family),
    ['1.x', '2.x'],
  );
  t.equal(cfg.readings[0]!.files[0]!.exists, false);
  t.equal(cfg.binary, undefined);
  t.equal(cfg.root, ROOT);
});

t.test('a version 3 root and no binary: read as 2.x alone, the version from the root file', async (t) => {
  const cfg = readContainerdConfig(layoutWith(t, { 'etc/containerd/config.toml': 'version = 3\n' }), { root: ROOT });
  t.equal(cfg.version, 3);
  t.equal(cfg.versionFrom, 'the root file');
  t.same(
    cfg.readings.map((r) => r.family),
    ['2.x'],
  );
});

t.test('a drop-in install is about to create: in the merge order, marked as not there yet', async (t) => {
  const layout = layoutWith(t, {
    'etc/containerd/config.toml': 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
    'etc/containerd/conf.d/10-a.toml': 'version = 2\n',
  });
  const dropIn = '/etc/containerd/conf.d/50-envhook.toml';
  const cfg = readContainerdConfig(layout, { root: ROOT, newFile: dropIn });
  for (const r of cfg.readings) {
    t.same(paths(r), [ROOT, '/etc/containerd/conf.d/10-a.toml', dropIn], r.family);
    t.same(
      r.files.map((f) => f.exists),
      [true, true, false],
    );
    t.equal(r.files[2]!.importedBy, ROOT);
  }
  t.same(
    paths(readContainerdConfig(layout, { root: ROOT }).readings[1]!),
    [ROOT, '/etc/containerd/conf.d/10-a.toml'],
    'not without newFile',
  );
});

t.test("envhook's own key edit is taken back as the files are read: the admin's file as it was", async (t) => {
  const edit: KeyEdit = {
    file: ROOT,
    table: ['plugins', 'io.containerd.nri.v1.nri'],
    key: 'disable',
    from: '  disable = true',
    to: '  disable = false',
  };
  const layout = layoutWith(t, { 'etc/containerd/config.toml': 'version = 2\n[plugins."io.containerd.nri.v1.nri"]\n  disable = false\n' });
  const nri = (cfg: ReturnType<typeof readContainerdConfig>) => (cfg.readings[0]!.files[0]!.doc.plugins as any)['io.containerd.nri.v1.nri'];
  t.same(nri(readContainerdConfig(layout, { root: ROOT, edits: [edit] })), { disable: true });
  t.same(nri(readContainerdConfig(layout, { root: ROOT })), { disable: false });
});

t.test('version 1 and unknown versions: refused', async (t) => {
  t.throws(() => readContainerdConfig(layoutWith(t, { 'etc/containerd/config.toml': 'version = 1\n' }), { root: ROOT }), {
    message: `${ROOT} is a version 1 config (no "version = 2" line): migrate it (containerd config migrate) first`,
  });
  t.throws(() => readContainerdConfig(layoutWith(t, { 'etc/containerd/config.toml': 'version = "2"\n' }), { root: ROOT }), {
    message: `${ROOT}: unsupported config version`,
  });
});

t.test('containerd 1.x named: a version 3 file refused', async (t) => {
  // what findContainerd returns for Debian bookworm's containerd (no process is run for this check)
  const one: ContainerdBinary = { path: '/usr/bin/containerd', root: '/', version: '1.6.20~ds1', family: '1.x' };
  const layout = layoutWith(t, { 'etc/containerd/config.toml': 'version = 3\n' });
  t.throws(() => readContainerdConfig(layout, { root: ROOT, binary: one }), {
    message: `${ROOT} is a version 3 config, which containerd 1.6.20~ds1 cannot read (1.x reads version 2)`,
  });
  const v2 = readContainerdConfig(layoutWith(t, { 'etc/containerd/config.toml': 'version = 2\n' }), { root: ROOT, binary: one });
  t.same(
    v2.readings.map((r) => r.family),
    ['1.x'],
  );
});

t.test('2.1.9 named: a new file gets its default version 3; version 4 is newer than it reads', { skip: skip2 }, async (t) => {
  const bin = findContainerd(c2)!;
  const cfg = readContainerdConfig(layoutWith(t, {}), { root: ROOT, binary: bin });
  t.equal(cfg.version, 3);
  t.equal(cfg.versionFrom, `a new file: the version containerd ${bin.version} writes by default`);
  t.same(
    cfg.readings.map((r) => r.family),
    ['2.x'],
  );
  t.throws(() => readContainerdConfig(layoutWith(t, { 'etc/containerd/config.toml': 'version = 4\n' }), { root: ROOT, binary: bin }), {
    message: `${ROOT} is a version 4 config, newer than containerd ${bin.version} reads (version 3 at most)`,
  });
});
