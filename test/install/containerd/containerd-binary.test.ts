// The containerd binary asked by install, the real ones: containerd 2.1.9 (Debian sid) and the
// containerd on PATH (1.6 on Debian bookworm): their version line and family, the config version
// `config default` writes, the CRI server's keys (as `config dump` keeps them), `config dump` of a
// file, and a failure in one line.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { configDump, criServerKeys, defaultConfigVersion, findContainerd } from '../../../src/install/containerd/containerd-binary.ts';
import { findRuntimeBinary, missingBinary } from '../../../src/oci/runtime-binary.ts';
import { containerd2ForInstall } from '../../helpers/nri/containerd.ts';

const { c2, skip2 } = containerd2ForInstall();
const c1 = findRuntimeBinary('containerd')?.path;
const onPath1 = c1 ? findContainerd(c1) : undefined;
const skip1 = !onPath1 ? 'no containerd on PATH' : onPath1.family !== '1.x' ? `containerd on PATH is ${onPath1.version}, not 1.x` : false;

t.test('2.1.9: family 2.x, config default version 3, config dump reads the file', { skip: skip2 }, async (t) => {
  const bin = findContainerd(c2)!;
  t.equal(bin.path, c2);
  t.match(bin.version, /^2\.1\.9(\+\S*)?$/);
  t.equal(bin.family, '2.x');
  t.equal(defaultConfigVersion(bin), 3);
  const dir = t.testdir({
    'c.toml': 'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd]\n  default_runtime_name = "crun"\n',
  });
  const dump = configDump(bin, path.join(dir, 'c.toml'), '/');
  t.equal(dump.version, 3);
  t.equal((dump.plugins as any)['io.containerd.cri.v1.runtime'].containerd.default_runtime_name, 'crun');
  // the CRI server's keys, from config default, are those config dump keeps in that table
  const keys = [...criServerKeys(bin)];
  t.same(keys.sort(), Object.keys((dump.plugins as any)['io.containerd.grpc.v1.cri']).sort());
  t.same([...criServerKeys(undefined)].sort(), keys.sort(), "with no binary: 2.1's keys");
});

t.test("2.1.9: a file it cannot read: containerd's last line, the command, no more", { skip: skip2 }, async (t) => {
  const bin = findContainerd(c2)!;
  const dir = t.testdir({ 'bad.toml': 'version = 3\nx = [\n' });
  const file = path.join(dir, 'bad.toml');
  t.throws(() => configDump(bin, file, '/'), {
    message: `containerd ${bin.version} (${c2} --config ${file} config dump) failed: containerd: failed to unmarshal TOML at row 2 column 6: toml: array is incomplete`,
  });
});

t.test('the containerd on PATH (1.x): family 1.x, config default version 2', { skip: skip1 }, async (t) => {
  const bin = findContainerd(undefined)!;
  t.equal(bin.path, c1);
  t.equal(bin.family, '1.x');
  t.equal(defaultConfigVersion(bin), 2);
});

t.test('none under the root and none named: undefined, and why; a program that prints no version: refused', async (t) => {
  const dir = t.testdir({ root: {} });
  const root = path.join(dir, 'root');
  t.equal(findContainerd(undefined, root), undefined);
  t.equal(
    missingBinary('containerd', root),
    `no containerd under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin`,
  );
  const fake = path.join(dir, 'containerd');
  fs.writeFileSync(fake, '#!/bin/sh\necho "flag provided but not defined: -version" >&2; exit 2\n', { mode: 0o755 });
  const todo = "name containerd's executable with --containerd, or leave --containerd out (the node's, under --root)";
  t.throws(() => findContainerd(fake), {
    message: `--containerd ${fake}: not containerd: its --version printed nothing (exit 2): ${todo}`,
  });
  // Another program's version line, with a version number in it, is not a containerd's.
  fs.writeFileSync(fake, '#!/bin/sh\nprintf "runc version 1.1.12\\ncommit: v1.1.12\\nspec: 1.0.2-dev\\n"\n', { mode: 0o755 });
  t.throws(() => findContainerd(fake), {
    message: `--containerd ${fake}: not containerd: its --version printed "runc version 1.1.12" (exit 0): ${todo}`,
  });
  // The lines containerd 1.x and 2.x print (a Debian build's, and a release's with a v).
  fs.writeFileSync(fake, '#!/bin/sh\necho "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1"\n', { mode: 0o755 });
  t.same(findContainerd(fake), { path: fake, root: '/', flag: '--containerd', version: '1.6.20~ds1', family: '1.x' });
  fs.writeFileSync(fake, '#!/bin/sh\necho "containerd containerd.io v2.2.7 5fd8ab1b"\n', { mode: 0o755 });
  t.same(findContainerd(fake), { path: fake, root: '/', flag: '--containerd', version: '2.2.7', family: '2.x' });
});
