// The containerd block from a placement: version line, plugin name of the root's version, the
// default runtime's options in force, runc restated where containerd 1.x would drop it, refusals.
// Files are read from a temporary root with no containerd binary (both readings); containerd's
// own reading of the results is test/e2e/install-containerd-layouts.test.ts.
import t, { type Test } from 'tap';
import path from 'node:path';
import { parse } from 'smol-toml';
import { containerdBlock, inheritedOptions } from '../../../src/install/containerd/containerd-block.ts';
import { withBlock } from '../../../src/install/block.ts';
import { makeLayout } from '../../../src/install/layout.ts';
import { readContainerdConfig } from '../../../src/install/containerd/containerd-config.ts';
import { placeBlock } from '../../../src/install/containerd/containerd-place.ts';
import { hostFiles } from '../../helpers/install/install.ts';

const ROOT = '/etc/containerd/config.toml';

function blockFor(t: Test, files: Record<string, string>, dropIn?: string) {
  const root = path.join(t.testdir({}), 'root');
  hostFiles(root, files);
  const layout = makeLayout('containerd', { root });
  const place = placeBlock(readContainerdConfig(layout, { root: ROOT, newFile: dropIn }), dropIn);
  const target = containerdBlock(layout, place);
  return { target, place, doc: parse(withBlock(place.file.text, target.body, target.file)) as any };
}
const runtimes = (doc: any, plugin: string) => doc.plugins[plugin].containerd.runtimes;

t.test('version 2: the handler, pod annotations and BinaryName under io.containerd.grpc.v1.cri', async (t) => {
  const { doc } = blockFor(t, {
    'etc/containerd/config.toml':
      'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n',
  });
  const h = runtimes(doc, 'io.containerd.grpc.v1.cri').envhook;
  t.same(h, {
    runtime_type: 'io.containerd.runc.v2',
    pod_annotations: ['envhook.io/*'],
    options: { BinaryName: '/usr/local/lib/envhook/envhook-runtime' },
  });
});

t.test('version 3 and 4: the same under io.containerd.cri.v1.runtime, runc not restated (2.x keeps its own)', async (t) => {
  for (const v of [3, 4]) {
    const { doc, place } = blockFor(t, {
      'etc/containerd/config.toml': `version = ${v}\n\n[plugins.'io.containerd.cri.v1.runtime'.containerd]\n  default_runtime_name = 'runc'\n`,
    });
    t.equal(doc.version, v);
    t.equal(place.version, v, 'written in the root file version');
    const rts = runtimes(doc, 'io.containerd.cri.v1.runtime');
    t.same(rts.envhook.pod_annotations, ['envhook.io/*']);
    t.notOk(rts.runc, 'containerd 2.x keeps its built-in runc: not restated');
    t.notOk(doc.plugins['io.containerd.grpc.v1.cri'], 'no version 2 table in a version 3 file');
  }
});

t.test('no file or an empty one, no binary to ask: a new version 2 file, runc restated for containerd 1.x', async (t) => {
  for (const files of [{}, { 'etc/containerd/config.toml': '' }, { 'etc/containerd/config.toml': '# nothing yet\n' }] as Record<
    string,
    string
  >[]) {
    const { doc, place } = blockFor(t, files);
    t.equal(doc.version, 2);
    t.match(place.reason, /no containerd binary to ask/);
    t.same(Object.keys(runtimes(doc, 'io.containerd.grpc.v1.cri')).sort(), ['envhook', 'runc']);
  }
});

t.test("the default runtime's options in force are inherited (SystemdCgroup), BinaryName is ours", async (t) => {
  const admin = [
    'version = 2',
    '[plugins."io.containerd.grpc.v1.cri".containerd]',
    '  default_runtime_name = "crun-ish"',
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun-ish]',
    '  runtime_type = "io.containerd.runc.v2"',
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun-ish.options]',
    '  SystemdCgroup = true',
    '  BinaryName = "/usr/bin/crun"',
    '  Root = "/run/x"',
    '',
  ].join('\n');
  const rts = runtimes(blockFor(t, { 'etc/containerd/config.toml': admin }).doc, 'io.containerd.grpc.v1.cri');
  t.same(rts.envhook.options, { SystemdCgroup: true, Root: '/run/x', BinaryName: '/usr/local/lib/envhook/envhook-runtime' });
  t.notOk(rts.runc, 'runc not restated: the file names its own runtimes');
});

t.test('version 3 with the runc options in an imported drop-in: copied from the merged config', async (t) => {
  const { doc, target } = blockFor(t, {
    'etc/containerd/config.toml': "version = 3\nimports = ['conf.d/*.toml']\n",
    'etc/containerd/conf.d/10-cgroup.toml':
      "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n  SystemdCgroup = true\n",
  });
  t.equal(target.file, ROOT);
  t.same(runtimes(doc, 'io.containerd.cri.v1.runtime').envhook.options.SystemdCgroup, true);
  t.match(target.note, /^envhook's block goes here: containerd 2\.x merges imported files table by table/);
});

t.test('a new drop-in gets the version line inside the block, so uninstall leaves nothing', async (t) => {
  const { target } = blockFor(
    t,
    { 'etc/containerd/config.toml': "version = 3\nimports = ['conf.d/*.toml']\n" },
    '/etc/containerd/conf.d/50-envhook.toml',
  );
  t.equal(target.file, '/etc/containerd/conf.d/50-envhook.toml');
  t.match(target.body, /^version = 3\n\n\[plugins\."io\.containerd\.cri\.v1\.runtime"\.containerd\.runtimes\.envhook\]\n/);
});

t.test('no binary, version 2 with a drop-in: 1.x and 2.x readings must agree on the runc options', async (t) => {
  const files = {
    'etc/containerd/config.toml':
      'version = 2\nimports = ["conf.d/10.toml"]\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n  Root = "/run/x"\n',
    'etc/containerd/conf.d/10.toml':
      'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n',
  };
  t.throws(
    () => blockFor(t, files),
    /containerd 1\.x and 2\.x would run the default runtime "runc" with different options .*: name the binary with --containerd PATH/,
  );
  // the same options either way: the drop-in (the last file that sets the CRI table) takes the block
  files['etc/containerd/config.toml'] = 'version = 2\nimports = ["conf.d/10.toml"]\n';
  const { target } = blockFor(t, files);
  t.equal(target.file, '/etc/containerd/conf.d/10.toml');
});

t.test('refusals', async (t) => {
  const one = (admin: string) => () => blockFor(t, { 'etc/containerd/config.toml': admin });
  t.throws(one('[plugins.cri]\n  x = 1\n'), /version 1 config/);
  t.throws(one('version = 5\n'), /unsupported config version/);
  t.throws(
    one('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.envhook]\n'),
    /already defines the runtime handler "envhook" outside envhook's block/,
  );
  t.throws(one('version = 2\nx = [\n'), /is not valid TOML \(line \d+, column \d+\)/);
  t.throws(one('version = 2\nimports = "conf.d"\n'), /imports is not a list of strings/);
  t.throws(
    one('version = 2\nimports = ["/nonexistent/x.toml"]\n'),
    /imports \/nonexistent\/x\.toml, which does not exist: containerd 1\.x does not start with it/,
  );
  // an inline runtimes table cannot be extended by a [table] header: caught by re-parsing
  t.throws(
    one(
      'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  runtimes = { runc = { runtime_type = "io.containerd.runc.v2" } }\n',
    ),
    /not valid TOML/,
  );
});

t.test('a TOML error never quotes the file', async (t) => {
  const canary = 'CANARY_SECRET_7f3a';
  const err = t.throws(() => blockFor(t, { 'etc/containerd/config.toml': `version = 2\ntoken = "${canary}\n` })) as Error;
  t.notMatch(err.message, canary);
  t.notMatch(String((err.cause as Error).message), canary);
});

t.test('inheritedOptions: scalars of a runc.v2 handler only', async (t) => {
  t.same(inheritedOptions({ runtime_type: 'io.containerd.kata.v2', options: { X: 1 } }), {});
  t.same(inheritedOptions({ options: { SystemdCgroup: false, BinaryName: '/x', Nested: { a: 1 }, List: [1] } }), { SystemdCgroup: false });
  t.same(inheritedOptions(undefined), {});
});
