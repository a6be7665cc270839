// placeBlock on real files under a test root: which file takes envhook's block and why (the
// reason printed with the change), for containerd 1.x (the last file that sets the CRI table)
// and 2.x (the root, or a --drop-in the root imports), and every layout it refuses.
import t, { type Test } from 'tap';
import path from 'node:path';
import { makeLayout } from '../../../src/install/layout.ts';
import { readContainerdConfig } from '../../../src/install/containerd/containerd-config.ts';
import { placeBlock } from '../../../src/install/containerd/containerd-place.ts';
import type { ContainerdBinary } from '../../../src/install/containerd/containerd-binary.ts';
import { hostFiles } from '../../helpers/install/install.ts';

const ROOT = '/etc/containerd/config.toml';
const D = '/etc/containerd/conf.d';
const V2 = 'io.containerd.grpc.v1.cri';
const V3 = 'io.containerd.cri.v1.runtime';
// a 1.x binary as findContainerd describes Debian bookworm's (placement never runs it for a non-empty root)
const one: ContainerdBinary = { path: '/usr/bin/containerd', root: '/', version: '1.6.20~ds1', family: '1.x' };

function place(t: Test, files: Record<string, string>, opts: { binary?: ContainerdBinary; dropIn?: string } = {}) {
  const root = path.join(t.testdir({}), 'root');
  hostFiles(root, files);
  const config = readContainerdConfig(makeLayout('containerd', { root }), { root: ROOT, binary: opts.binary, newFile: opts.dropIn });
  return placeBlock(config, opts.dropIn);
}
const setsCri = (plugin: string, extra = '') => `[plugins."${plugin}".containerd]\n  default_runtime_name = "runc"\n${extra}`;

t.test('1.x, no file sets the CRI table: the root file, runc restated', async (t) => {
  const p = place(
    t,
    { [ROOT.slice(1)]: `version = 2\nimports = ["${D}/a.toml"]\n`, [`${D.slice(1)}/a.toml`]: 'version = 2\n' },
    { binary: one },
  );
  t.equal(p.file.path, ROOT);
  t.equal(p.plugin, V2);
  t.equal(p.version, 2);
  t.equal(p.versionLine, false);
  t.equal(p.defaultName, 'runc');
  t.equal(p.defaultRuntime, undefined);
  t.equal(p.restateRunc, true);
  t.equal(p.reason, `no file sets [plugins."${V2}"]; containerd 1.x takes that table from the last file that sets it`);
});

t.test('1.x: the root sets it alone; an imported file sets it last and takes the block', async (t) => {
  const rootOnly = place(t, { [ROOT.slice(1)]: `version = 2\n${setsCri(V2)}` }, { binary: one });
  t.equal(rootOnly.file.path, ROOT);
  t.equal(
    rootOnly.reason,
    `${ROOT} sets [plugins."${V2}"] and no imported file does; containerd 1.x takes that table from the last file that sets it`,
  );
  t.equal(rootOnly.restateRunc, true, 'the table names no runtime');

  const runc = `[plugins."${V2}".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n[plugins."${V2}".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n`;
  const last = place(
    t,
    { [ROOT.slice(1)]: `version = 2\nimports = ["${D}/z.toml"]\n${setsCri(V2)}`, [`${D.slice(1)}/z.toml`]: `version = 2\n${runc}` },
    { binary: one },
  );
  t.equal(last.file.path, `${D}/z.toml`);
  t.equal(last.restateRunc, false);
  t.same(last.defaultRuntime, { runtime_type: 'io.containerd.runc.v2', options: { SystemdCgroup: true } });
  t.equal(
    last.reason,
    `${D}/z.toml is the last file that sets [plugins."${V2}"], and containerd 1.x takes that whole table from it (the CRI settings of the files before it are not in force)`,
  );
});

t.test('1.x: a --drop-in that is not the last CRI setter is refused either way round', async (t) => {
  const files = {
    [ROOT.slice(1)]: `version = 2\nimports = ["${D}/10.toml", "${D}/20.toml", "${D}/30.toml"]\n`,
    [`${D.slice(1)}/10.toml`]: 'version = 2\n',
    [`${D.slice(1)}/20.toml`]: `version = 2\n${setsCri(V2)}`,
    [`${D.slice(1)}/30.toml`]: 'version = 2\n',
  };
  t.throws(() => place(t, files, { binary: one, dropIn: `${D}/10.toml` }), {
    message: `${D}/10.toml is read before ${D}/20.toml, whose [plugins."${V2}"] replaces that whole table on containerd 1.x: envhook's handler would be lost; install without --drop-in (the block then goes into ${D}/20.toml)`,
  });
  t.throws(() => place(t, files, { binary: one, dropIn: `${D}/30.toml` }), {
    message: `envhook's block in ${D}/30.toml would replace the whole [plugins."${V2}"] table of ${D}/20.toml on containerd 1.x (its CRI settings lost); install without --drop-in (the block then goes into ${D}/20.toml)`,
  });
  t.equal(place(t, files, { binary: one, dropIn: `${D}/20.toml` }).file.path, `${D}/20.toml`, 'the last setter itself is fine');
});

t.test('2.x: the root file stands; a --drop-in the root imports takes it, new ones with the version line', async (t) => {
  const files = { [ROOT.slice(1)]: `version = 3\nimports = ["${D}/*.toml"]\n` };
  const rootP = place(t, files);
  t.equal(rootP.file.path, ROOT);
  t.equal(rootP.plugin, V3);
  t.equal(rootP.restateRunc, false);
  t.equal(
    rootP.reason,
    `containerd 2.x merges imported files table by table and none sets the handler "envhook", so the root file's block stands`,
  );
  const dropP = place(t, files, { dropIn: `${D}/50-envhook.toml` });
  t.equal(dropP.file.path, `${D}/50-envhook.toml`);
  t.equal(dropP.versionLine, true);
  t.equal(
    dropP.reason,
    `${D}/50-envhook.toml is imported by ${ROOT}; containerd 2.x merges files table by table and none sets the handler "envhook"`,
  );
});

t.test('2.x: version 2 CRI settings beside a version 3 table are named as not in force, with their keys', async (t) => {
  const p = place(t, {
    [ROOT.slice(1)]: `version = 3\nimports = ["${D}/old.toml"]\n${setsCri(V3)}`,
    [`${D.slice(1)}/old.toml`]: `version = 2\n[plugins."${V2}"]\n  stream_idle_timeout = "2h"\n  sandbox_image = "p"\n${setsCri(V2)}`,
  });
  t.equal(
    p.reason,
    `containerd 2.x merges imported files table by table and none sets the handler "envhook", so the root file's block stands; the version 2 CRI settings of ${D}/old.toml (sandbox_image, containerd) are not in force (containerd 2.x drops them)`,
  );
});

t.test('2.x: the CRI server\'s own keys in [plugins."io.containerd.grpc.v1.cri"] of a version 3 file are in force: no note', async (t) => {
  const p = place(t, {
    [ROOT.slice(1)]:
      `version = 3\n[plugins."${V2}"]\n  stream_idle_timeout = "4h0m0s"\n[plugins."${V2}".x509_key_pair_streaming]\n  tls_cert_file = ""\n${setsCri(V3)}`,
  });
  t.equal(
    p.reason,
    `containerd 2.x merges imported files table by table and none sets the handler "envhook", so the root file's block stands`,
  );
});

t.test(
  'refused: a drop-in not imported, one of another version, a version 2 root beside a version 3 table, the handler elsewhere',
  async (t) => {
    t.throws(() => place(t, { [ROOT.slice(1)]: 'version = 3\n' }, { dropIn: `${D}/x.toml` }), {
      message: `--drop-in ${D}/x.toml: containerd does not read it: the imports of ${ROOT} (and of the files it imports) do not name it: add it to the imports of ${ROOT}, or leave --drop-in out`,
    });
    t.throws(
      () =>
        place(
          t,
          { [ROOT.slice(1)]: `version = 3\nimports = ["${D}/x.toml"]\n`, [`${D.slice(1)}/x.toml`]: 'version = 2\n' },
          { dropIn: `${D}/x.toml` },
        ),
      {
        message: `${D}/x.toml is a version 2 file and ${ROOT} version 3: envhook writes in the root file's version; name a file of that version (or a new one) with --drop-in`,
      },
    );
    // no binary: the 1.x reading places the block, the 2.x reading refuses
    t.throws(() => place(t, { [ROOT.slice(1)]: `version = 2\nimports = ["${D}/n.toml"]\n`, [`${D.slice(1)}/n.toml`]: setsCri(V3) }), {
      message: `${D}/n.toml sets [plugins.'${V3}'] while ${ROOT} is version 2: containerd 2.x then drops every version 2 CRI section, envhook's included; migrate the root file (containerd config migrate) first`,
    });
    t.throws(
      () =>
        place(t, {
          [ROOT.slice(1)]: `version = 3\nimports = ["${D}/h.toml"]\n`,
          [`${D.slice(1)}/h.toml`]: `[plugins."${V3}".containerd.runtimes.envhook]\n`,
        }),
      {
        message: `${D}/h.toml already defines the runtime handler "envhook" outside envhook's block: remove it, or name another file with --config`,
      },
    );
  },
);

t.test('no binary and a version 2 layout: the 1.x placement, said to be read as both lines would', async (t) => {
  const p = place(t, { [ROOT.slice(1)]: `version = 2\n${setsCri(V2)}` });
  t.equal(p.file.path, ROOT);
  t.equal(p.plugin, V2);
  t.match(p.reason, / \(read as containerd 1\.x and 2\.x would: no containerd binary to ask\)$/);
});
