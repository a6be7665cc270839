// install --mode nri on containerd 1.7's most common layout: the file `containerd config default`
// writes (test/fixtures/containerd/1.7.24-config-default.toml, recorded from Debian trixie's
// containerd 1.7.24), whose NRI table says `disable = true`. Refused with the option named;
// --enable-nri changes exactly that line, backs the file up, and uninstall puts it back byte for
// byte, also when the handler's block shares the file. Read as both containerd lines would (no
// binary) and by containerd 2.1.9's own `config dump`.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { installRoot, install, snapshot, uninstall } from '../../helpers/install/install.ts';
import { containerd2ForInstall } from '../../helpers/nri/containerd.ts';
import { refused } from '../../helpers/refusal.ts';

t.setTimeout(300_000);

const { c2, skip2 } = containerd2ForInstall();
const env = { ...process.env, PATH: '/nonexistent' };
const DEFAULT_17 = fs.readFileSync(path.join(import.meta.dirname, '../../fixtures/containerd/1.7.24-config-default.toml'), 'utf8');
const CONFIG = 'etc/containerd/config.toml';
const nri = (extra: string[] = []) => ['--mode', 'nri', ...extra];

/** The lines of `b` that differ from `a` (same line count), as [line number, a, b]. */
function changedLines(a: string, b: string): [number, string, string][] {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length !== y.length) return [[-1, `${x.length} lines`, `${y.length} lines`]];
  return x.flatMap((l, i) => (l === y[i] ? [] : [[i + 1, l, y[i]!] as [number, string, string]]));
}

t.test('the fixture is what 1.7 prints: version 2, NRI off in its own table', async (t) => {
  t.match(DEFAULT_17, /^version = 2$/m);
  t.match(DEFAULT_17, /\n  \[plugins\."io\.containerd\.nri\.v1\.nri"\]\n    disable = true\n    disable_connections = false\n/);
});

t.test("1.7's config default: refused without --enable-nri, the option named, nothing written", async (t) => {
  const { root, source } = installRoot(t, { [CONFIG]: DEFAULT_17 });
  const before = snapshot(root);
  const r = install({ runtime: 'containerd', root, source, extra: nri(), env });
  refused(
    t,
    r,
    'envhook: /etc/containerd/config.toml sets [plugins."io.containerd.nri.v1.nri"] and NRI is off as containerd reads it: set disable = false there, or pass --enable-nri to let install change exactly that key (the file backed up; uninstall puts it back)\n',
  );
  t.same(snapshot(root), before);
});

t.test(
  "1.7's config default with --enable-nri: exactly that key changed, backed up; reinstall changes nothing; uninstall puts it back",
  async (t) => {
    const { root, source } = installRoot(t, { [CONFIG]: DEFAULT_17 });
    const original = snapshot(root);
    const r = install({ runtime: 'containerd', root, source, extra: nri(['--enable-nri']), env });
    t.equal(r.status, 0, r.stderr);
    const after = fs.readFileSync(path.join(root, CONFIG), 'utf8');
    t.same(changedLines(DEFAULT_17, after), [[191, '    disable = true', '    disable = false']], 'one line differs');
    t.equal(fs.readFileSync(path.join(root, 'usr/local/lib/envhook/backup', CONFIG), 'utf8'), DEFAULT_17, "the backup is the admin's file");
    t.match(
      r.stdout,
      /^update \/etc\/containerd\/config.toml \(original saved as \/usr\/local\/lib\/envhook\/backup\/etc\/containerd\/config.toml\)$/m,
    );
    t.match(
      r.stdout,
      'note: NRI is off in /etc/containerd/config.toml as containerd reads it: switched on by changing that one key (--enable-nri) in /etc/containerd/config.toml: "disable = true" becomes "disable = false"',
    );
    t.notMatch(r.stdout, "2.x's default");
    t.notMatch(after, '# BEGIN envhook', 'no block: the key itself is changed');

    const again = install({ runtime: 'containerd', root, source, extra: nri(['--enable-nri']), env });
    t.equal(again.stdout, 'nothing changed: envhook is already installed for containerd (NRI plugin) under /usr/local/lib/envhook\n');

    const u = uninstall({ runtime: 'containerd', root });
    t.equal(u.status, 0, u.stderr);
    t.same(snapshot(root), original, 'every file and directory as before');
  },
);

t.test('containerd 2.1.9 reads the edited 1.7 file with NRI on; uninstall puts it back', { skip: skip2 }, async (t) => {
  const { root, source } = installRoot(t, { [CONFIG]: DEFAULT_17 });
  const original = snapshot(root);
  const r = install({ runtime: 'containerd', root, source, extra: nri(['--enable-nri', '--containerd', c2!]) });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    /^checked: containerd 2\.1\.9\S* config dump of \/etc\/containerd\/config.toml shows NRI on, with plugins from \/opt\/nri\/plugins$/m,
  );
  t.equal(uninstall({ runtime: 'containerd', root, extra: ['--mode', 'nri'] }).status, 0);
  t.same(snapshot(root), original);
});

t.test("the handler's block and --enable-nri's key in one file: either uninstall first, the file back byte for byte", async (t) => {
  for (const first of ['shim', 'nri']) {
    const { root, source } = installRoot(t, { [CONFIG]: DEFAULT_17 });
    const original = snapshot(root);
    t.equal(install({ runtime: 'containerd', root, source, env }).status, 0);
    const n = install({ runtime: 'containerd', root, source, extra: nri(['--enable-nri']), env });
    t.equal(n.status, 0, n.stderr);
    const both = fs.readFileSync(path.join(root, CONFIG), 'utf8');
    t.match(both, /^    disable = false$/m);
    t.match(both, /# BEGIN envhook/);
    const a = uninstall({ runtime: 'containerd', root, extra: ['--mode', first] });
    t.equal(a.status, 0, a.stderr);
    t.notMatch(a.stdout, 'changed since install', `${first} first: no file reported changed`);
    const mid = fs.readFileSync(path.join(root, CONFIG), 'utf8');
    t.equal(mid.includes('# BEGIN envhook'), first === 'nri', `${first} first: the other install's mark stays`);
    t.equal(/^    disable = false$/m.test(mid), first === 'shim');
    t.equal(uninstall({ runtime: 'containerd', root }).status, 0);
    t.same(snapshot(root), original, `${first} first, then the other: every file as before`);
  }
});

t.test('the admin changed the line since install: uninstall leaves it, says so, keeps the backup', async (t) => {
  const { root, source } = installRoot(t, { [CONFIG]: DEFAULT_17 });
  t.equal(install({ runtime: 'containerd', root, source, extra: nri(['--enable-nri']), env }).status, 0);
  const file = path.join(root, CONFIG);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('    disable = false', '    disable = false # mine now'));
  const u = uninstall({ runtime: 'containerd', root });
  t.equal(u.status, 0, u.stderr);
  t.match(
    u.stdout,
    'note: changed since install: envhook\'s line "disable = false" is not there any more; the file is left as it is there',
  );
  t.match(fs.readFileSync(file, 'utf8'), '    disable = false # mine now');
  t.ok(fs.existsSync(path.join(root, 'usr/local/lib/envhook/backup', CONFIG)), 'the original kept');
});

t.test('a table without a disable line (1.x: NRI off): --enable-nri adds the one line; uninstall takes it out', async (t) => {
  const admin = 'version = 2\n\n[plugins."io.containerd.nri.v1.nri"]\n  plugin_path = "/srv/nri"\n';
  const { root, source } = installRoot(t, { [CONFIG]: admin });
  const original = snapshot(root);
  t.equal(install({ runtime: 'containerd', root, source, extra: nri(['--enable-nri']), env }).status, 0);
  t.equal(
    fs.readFileSync(path.join(root, CONFIG), 'utf8'),
    'version = 2\n\n[plugins."io.containerd.nri.v1.nri"]\n  disable = false\n  plugin_path = "/srv/nri"\n',
  );
  t.ok(fs.existsSync(path.join(root, 'srv/nri/50-envhook')));
  t.equal(uninstall({ runtime: 'containerd', root }).status, 0);
  t.same(snapshot(root), original);
});

t.test('--enable-nri on a form it cannot change alone (an inline table): refused, nothing written', async (t) => {
  const { root, source } = installRoot(t, { [CONFIG]: 'version = 2\n[plugins]\n  "io.containerd.nri.v1.nri" = { disable = true }\n' });
  const before = snapshot(root);
  const r = install({ runtime: 'containerd', root, source, extra: nri(['--enable-nri']), env });
  refused(
    t,
    r,
    'envhook: /etc/containerd/config.toml sets [plugins."io.containerd.nri.v1.nri"] in a form --enable-nri cannot change alone (a [plugins."io.containerd.nri.v1.nri"] header with a disable line): set disable = false there\n',
  );
  t.same(snapshot(root), before);
});

t.test('--enable-nri only with --runtime containerd --mode nri', async (t) => {
  const { root, source } = installRoot(t, {});
  t.equal(
    install({ runtime: 'containerd', root, source, extra: ['--enable-nri'], env }).stderr,
    "envhook: --enable-nri is only valid with --runtime containerd --mode nri (it switches on containerd's NRI)\n",
  );
});

t.test("NRI on by the admin's own line on 1.x: the note names that line, not 2.x's default", async (t) => {
  const { root, source } = installRoot(t, { [CONFIG]: DEFAULT_17.replace('    disable = true\n', '    disable = false\n') });
  const r = install({ runtime: 'containerd', root, source, extra: nri(), env });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    'note: NRI is on in /etc/containerd/config.toml as containerd reads it (disable = false in /etc/containerd/config.toml): no configuration written\n',
  );
  t.notMatch(r.stdout, "2.x's default");
});
