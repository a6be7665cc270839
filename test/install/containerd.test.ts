// The containerd block: version detection, the default runtime's options, refusals; the
// result is checked by parsing (version 3) and, in test/e2e, by containerd itself (version 2).
import t from 'tap';
import { parse } from 'smol-toml';
import { containerdBlock } from '../../src/install/containerd.ts';
import { withBlock } from '../../src/install/block.ts';
import { makeLayout } from '../../src/install/layout.ts';

const layout = makeLayout('containerd', { root: '/nonexistent' });
const result = (admin: string | undefined) => withBlock(admin ?? '', containerdBlock(layout, admin).body, 'f');
const runtimes = (doc: any, plugin: string) => doc.plugins[plugin].containerd.runtimes;

t.test('version 2: the handler, pod annotations and BinaryName under io.containerd.grpc.v1.cri', async (t) => {
  const doc: any = parse(result('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n'));
  const h = runtimes(doc, 'io.containerd.grpc.v1.cri').envhook;
  t.same(h, { runtime_type: 'io.containerd.runc.v2', pod_annotations: ['envhook.io/*'], options: { BinaryName: '/usr/local/lib/envhook/envhook-runtime' } });
});

t.test('version 3 (containerd 2.x): the same under io.containerd.cri.v1.runtime (checked by parsing: containerd 1.6 reads version 2 only)', async (t) => {
  const admin = "version = 3\n\n[plugins.'io.containerd.cri.v1.runtime'.containerd]\n  default_runtime_name = 'runc'\n";
  const doc: any = parse(result(admin));
  t.equal(doc.version, 3);
  const rts = runtimes(doc, 'io.containerd.cri.v1.runtime');
  t.same(rts.envhook.pod_annotations, ['envhook.io/*']);
  t.equal(rts.envhook.options.BinaryName, '/usr/local/lib/envhook/envhook-runtime');
  t.equal(rts.runc.runtime_type, 'io.containerd.runc.v2', 'runc restated: the file had no runtimes');
  t.notOk(doc.plugins['io.containerd.grpc.v1.cri'], 'no version 2 table in a version 3 file');
});

t.test('no file or an empty one: a new version 2 file with runc restated', async (t) => {
  for (const admin of [undefined, '', '# nothing yet\n']) {
    const doc: any = parse(result(admin));
    t.equal(doc.version, 2);
    t.same(Object.keys(runtimes(doc, 'io.containerd.grpc.v1.cri')).sort(), ['envhook', 'runc']);
  }
});

t.test("the default runtime's options are inherited (SystemdCgroup), BinaryName is ours", async (t) => {
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
  const rts = runtimes(parse(result(admin)), 'io.containerd.grpc.v1.cri');
  t.same(rts.envhook.options, { SystemdCgroup: true, Root: '/run/x', BinaryName: '/usr/local/lib/envhook/envhook-runtime' });
  t.notOk(rts.runc, 'runc not restated: the file names its own runtimes');
});

t.test('refusals', async (t) => {
  t.throws(() => containerdBlock(layout, '[plugins.cri]\n  x = 1\n'), /version 1 config/);
  t.throws(() => containerdBlock(layout, 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.envhook]\n'), /already defines the runtime handler "envhook" outside envhook's block/);
  t.throws(() => containerdBlock(layout, 'version = 2\nx = [\n'), /is not valid TOML \(line \d+, column \d+\)/);
  // an inline runtimes table cannot be extended by a [table] header: caught by re-parsing
  t.throws(() => containerdBlock(layout, 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  runtimes = { runc = { runtime_type = "io.containerd.runc.v2" } }\n'), /not valid TOML/);
});

t.test('a TOML error never quotes the file', async (t) => {
  const canary = 'CANARY_SECRET_7f3a';
  const err = t.throws(() => containerdBlock(layout, `version = 2\ntoken = "${canary}\n`)) as Error;
  t.notMatch(err.message, canary);
  t.notMatch(String((err.cause as Error).message), canary);
});
