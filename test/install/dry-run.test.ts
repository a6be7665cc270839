// install --dry-run: for envhook's own files (the executables, the front, the bundle, its state
// file) the path, size and sha256 of what install would write (and, on an update, of what it
// replaces); unified diffs only for the files the admin reads (drop-ins, hooks.d files, the
// RuntimeClass, the front's data file naming the real runtime). The figures are those of the files a real install then writes.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { crioEtc, crioNodeRoot, install, realSource, uninstall } from '../helpers/install/install.ts';

t.setTimeout(120_000);
const NO_CRIO = { ...process.env, PATH: '/nonexistent' };
const sizeAndHash = (b: Buffer) => `${b.length} bytes, sha256 ${crypto.createHash('sha256').update(b).digest('hex')}`;
const PREFIX = '/usr/local/lib/envhook';

/** The dry run's lines for a file a real install wrote under `root`: its size and hash, or a diff from nothing. */
function created(root: string, file: string, own: boolean): string[] {
  const b = fs.readFileSync(path.join(root, file));
  if (own) return [`would create ${file}`, `  ${sizeAndHash(b)}`];
  const lines = b.toString('utf8').replace(/\n$/, '').split('\n');
  return [`would create ${file}`, `--- ${file}`, `+++ ${file}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`)];
}

t.test('crio: the exact dry run; its figures are those of the installed files', async (t) => {
  const { root, source } = crioNodeRoot(t, {});
  const dry = install({ runtime: 'crio', root, source, extra: ['--dry-run'], env: NO_CRIO });
  t.equal(dry.status, 0, dry.stderr);
  const real = path.join(path.dirname(root), 'real');
  fs.mkdirSync(real);
  crioEtc(real);
  t.equal(install({ runtime: 'crio', root: real, source, env: NO_CRIO }).status, 0);
  const expected = [
    `paths below are the node's, under --root ${root}`,
    ...created(real, `${PREFIX}/envhook-main.cjs`, true),
    ...created(real, `${PREFIX}/envhook.cjs`, true),
    ...created(real, `${PREFIX}/envhook`, true),
    ...created(real, `${PREFIX}/envhook-runtime.conf`, false),
    ...created(real, `${PREFIX}/envhook-runtime`, true),
    ...created(real, '/usr/share/containers/oci/hooks.d/envhook-createruntime.json', false),
    ...created(real, '/etc/crio/crio.conf.d/50-envhook.conf', false),
    ...created(real, `${PREFIX}/runtimeclass.yaml`, false),
    ...created(real, '/etc/systemd/system/envhook-watch.service', false),
    ...created(real, `${PREFIX}/state.json`, true),
    `note: not checked with CRI-O: no crio under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (--crio PATH names one); read from its files instead (crio.conf, crio.conf.d), not crio config: no hooks_dir set, CRI-O's default /usr/share/containers/oci/hooks.d`,
    `note: the front runs CRI-O's default runtime "runc" (not set in CRI-O's files and no crio to ask: runc assumed, CRI-O 1.31 and later default to crun): runtime runc, runtime_root /run/runc (--oci-runtime names another)`,
    `note: runtime "runc" not found on PATH under --root, nor in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin: the front looks it up on the container runtime's PATH`,
    '',
  ];
  t.equal(dry.stdout, expected.join('\n'));
});

t.test("the checkout's front (a few hundred lines of sh): a size and a sha256, no diff", async (t) => {
  const { root } = crioNodeRoot(t, {});
  const source = realSource();
  const dry = install({ runtime: 'crio', root, source, extra: ['--dry-run'], env: NO_CRIO });
  t.equal(dry.status, 0, dry.stderr);
  const front = fs.readFileSync(path.join(source, 'hooks/envhook-runtime'));
  t.match(
    dry.stdout,
    `\nwould create ${PREFIX}/envhook-runtime\n  ${sizeAndHash(front)}\nwould create /usr/share/containers/oci/hooks.d/envhook-createruntime.json\n--- `,
  );
  t.notMatch(dry.stdout, `--- ${PREFIX}/envhook-runtime\n`);
  t.notMatch(dry.stdout, /^\+#!\/bin\/sh$/m, 'no line of the front');
});

t.test('an upgrade: the new size and sha256 and those it replaces; uninstall --dry-run: those it removes', async (t) => {
  const { root, source } = crioNodeRoot(t, {});
  t.equal(install({ runtime: 'crio', root, source, env: NO_CRIO }).status, 0);
  const old = fs.readFileSync(path.join(source, 'hooks/envhook-runtime'));
  const next = Buffer.from('#!/bin/sh\n# fixture front, version 2\nexit 1\n');
  fs.writeFileSync(path.join(source, 'hooks/envhook-runtime'), next);
  const dry = install({ runtime: 'crio', root, source, extra: ['--dry-run'], env: NO_CRIO });
  t.equal(dry.status, 0, dry.stderr);
  t.match(
    dry.stdout,
    `would update ${PREFIX}/envhook-runtime\n  ${sizeAndHash(next)}; replaces ${sizeAndHash(old)}\nwould update ${PREFIX}/state.json\n  `,
  );
  t.notMatch(dry.stdout, /^---/m, 'nothing else changes: no diff');
  const un = uninstall({ runtime: 'crio', root, extra: ['--dry-run'] });
  t.equal(un.status, 0, un.stderr);
  t.match(un.stdout, `would remove ${PREFIX}/envhook-runtime\n  ${sizeAndHash(old)}\n`);
  t.match(un.stdout, `would remove /etc/crio/crio.conf.d/50-envhook.conf\n--- /etc/crio/crio.conf.d/50-envhook.conf\n`);
});
