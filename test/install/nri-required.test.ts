// install --mode nri --nri-required: envhook a required plugin of NRI's default validator.
// containerd 2.2 is not in the cache and CRI-O is not installable here: stand-ins report the
// version and print the config dump (the check after install); for CRI-O, the double of
// test/helpers/install/crio.ts, which prints `crio config` from the files as CRI-O does. The exact text written, the
// refusals (containerd 2.1.9, CRI-O 1.33, no binary, --mode shim), the union with a list another
// file sets, a list a later file would replace refused, a second install writing nothing, and
// uninstall byte for byte.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { crioNodeRoot, fakeContainerd, install, installRoot, snapshot, uninstall, type InstallArgs } from '../helpers/install/install.ts';
import { crioNriDropIn } from '../../src/install/crio/crio-nri.ts';
import { crioDouble } from '../helpers/install/crio.ts';
import { refused } from '../helpers/refusal.ts';

// About 30 s on a quiet 2-CPU machine (install and crio-double starts); 126 s at a load average of 36 ran into 120 s.
t.setTimeout(300_000);
const required = (extra: string[] = []) => ['--mode', 'nri', '--nri-required', ...extra];
const NOWHERE = { ...process.env, PATH: '/nonexistent' };

const nriDump = (plugins: string) =>
  `version = 3\n[plugins."io.containerd.nri.v1.nri"]\n  disable = false\n  plugin_path = "/opt/nri/plugins"\n[plugins."io.containerd.nri.v1.nri".default_validator]\n  enable = true\n  required_plugins = ${plugins}\n`;

/** A host root holding `files` and a stand-in containerd `version` whose dump requires `plugins`. */
function containerdRoot(t: Test, files: Record<string, string>, version = '2.2.0', plugins = '["envhook"]') {
  const { root, source } = installRoot(t, files);
  return { root, source, bin: fakeContainerd(path.dirname(root), nriDump(plugins), version), original: snapshot(root) };
}

const read = (root: string, file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const BLOCK = (list: string) =>
  `# BEGIN envhook (written by envhook install; removed by envhook uninstall)\n[plugins."io.containerd.nri.v1.nri".default_validator]\n  enable = true\n  required_plugins = ${list}\n# END envhook\n`;

t.test('containerd 2.2: the validator block in the root file; dry run; idempotent; uninstall restores', async (t) => {
  const { root, source, bin, original } = containerdRoot(t, { 'etc/containerd/config.toml': 'version = 3\n# the admin\n' });
  const dry = install({ runtime: 'containerd', root, source, extra: required(['--containerd', bin, '--dry-run']) });
  t.equal(dry.status, 0, dry.stderr);
  t.match(dry.stdout, `+[plugins."io.containerd.nri.v1.nri".default_validator]\n+  enable = true\n+  required_plugins = ["envhook"]\n`);
  t.same(snapshot(root), original, '--dry-run changes nothing');

  const r = install({ runtime: 'containerd', root, source, extra: required(['--containerd', bin]) });
  t.equal(r.status, 0, r.stderr);
  t.equal(read(root, 'etc/containerd/config.toml'), `version = 3\n# the admin\n\n${BLOCK('["envhook"]')}`);
  t.match(
    r.stdout,
    `update /etc/containerd/config.toml (original saved as /usr/local/lib/envhook/backup/etc/containerd/config.toml)\n  note: envhook's block goes here: NRI's default validator on, required_plugins ["envhook"]\n`,
  );
  t.match(
    r.stdout,
    'note: envhook is a required NRI plugin: containerd creates no container (pod sandboxes still start) while envhook is not connected\n',
  );
  t.match(
    r.stdout,
    'checked: containerd 2.2.0 config dump of /etc/containerd/config.toml shows NRI on, with plugins from /opt/nri/plugins, "envhook" required\n',
  );

  const again = install({ runtime: 'containerd', root, source, extra: required(['--containerd', bin]) });
  t.equal(again.stdout, 'nothing changed: envhook is already installed for containerd (NRI plugin) under /usr/local/lib/envhook\n');

  const u = uninstall({ runtime: 'containerd', root, extra: ['--mode', 'nri'] });
  t.equal(u.status, 0, u.stderr);
  t.same(snapshot(root), original, 'every file as before');
});

t.test('containerd 2.2: union with the list an imported file sets, in a drop-in read after it', async (t) => {
  const nri =
    'version = 3\n[plugins."io.containerd.nri.v1.nri".default_validator]\n  enable = true\n  required_plugins = ["other"]\n  tolerate_missing_plugins_annotation = "tolerate-missing-nri-plugins.noderesource.dev"\n';
  const { root, source, bin, original } = containerdRoot(
    t,
    { 'etc/containerd/config.toml': 'version = 3\nimports = ["conf.d/*.toml"]\n', 'etc/containerd/conf.d/10-nri.toml': nri },
    '2.2.0',
    '["other", "envhook"]',
  );
  // the root file's block would be replaced by the import's list
  installRefused(
    t,
    { runtime: 'containerd', root, source, extra: required(['--containerd', bin]) },
    `/etc/containerd/conf.d/10-nri.toml sets [plugins."io.containerd.nri.v1.nri".default_validator] and containerd reads it after /etc/containerd/config.toml: envhook's required_plugins would be replaced; name a file containerd reads after it with --drop-in`,
  );
  // the admin's own file is not edited
  installRefused(
    t,
    { runtime: 'containerd', root, source, extra: required(['--containerd', bin, '--drop-in', '/etc/containerd/conf.d/10-nri.toml']) },
    `/etc/containerd/conf.d/10-nri.toml sets [plugins."io.containerd.nri.v1.nri".default_validator]: add "envhook" to its required_plugins there (envhook does not edit the admin's lines), or name a file containerd reads after it with --drop-in`,
  );

  const r = install({
    runtime: 'containerd',
    root,
    source,
    extra: required(['--containerd', bin, '--drop-in', '/etc/containerd/conf.d/90-envhook.toml']),
  });
  t.equal(r.status, 0, r.stderr);
  t.equal(read(root, 'etc/containerd/conf.d/90-envhook.toml'), BLOCK('["other", "envhook"]').replace('\n', '\nversion = 3\n\n'));
  t.equal(read(root, 'etc/containerd/conf.d/10-nri.toml'), nri, "the admin's file untouched");
  const again = install({
    runtime: 'containerd',
    root,
    source,
    extra: required(['--containerd', bin, '--drop-in', '/etc/containerd/conf.d/90-envhook.toml']),
  });
  t.equal(again.stdout, 'nothing changed: envhook is already installed for containerd (NRI plugin) under /usr/local/lib/envhook\n');
  t.equal(uninstall({ runtime: 'containerd', root, extra: ['--mode', 'nri'] }).status, 0);
  t.same(snapshot(root), original, 'every file as before');
});

t.test('containerd 2.2: the files already require envhook: nothing written for it', async (t) => {
  const admin = 'version = 3\n[plugins."io.containerd.nri.v1.nri".default_validator]\n  enable = true\n  required_plugins = ["envhook"]\n';
  const { root, source, bin } = containerdRoot(t, { 'etc/containerd/config.toml': admin });
  const r = install({ runtime: 'containerd', root, source, extra: required(['--containerd', bin]) });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    "note: envhook is already a required plugin of NRI's default validator in /etc/containerd/config.toml as containerd reads it: nothing written for --nri-required\n",
  );
  t.equal(read(root, 'etc/containerd/config.toml'), admin);
});

t.test('containerd: 2.1.9 and no binary refused, nothing written', async (t) => {
  const { root, source, bin, original } = containerdRoot(t, { 'etc/containerd/config.toml': 'version = 3\n' }, '2.1.9');
  installRefused(
    t,
    { runtime: 'containerd', root, source, extra: required(['--containerd', bin]) },
    "--nri-required needs containerd 2.2 or later (NRI's default validator); containerd 2.1.9 has none: install without --nri-required, or upgrade containerd",
  );
  installRefused(
    t,
    { runtime: 'containerd', root, source, extra: required(), env: NOWHERE },
    "--nri-required needs containerd 2.2 or later (NRI's default validator); no containerd binary to ask for its version: name it with --containerd PATH",
  );
  t.same(snapshot(root), original);
});

t.test('containerd 2.2: a dump without the validator fails the check, every file back', async (t) => {
  const { root, source, original } = containerdRoot(t, { 'etc/containerd/config.toml': 'version = 3\n' });
  const bin = fakeContainerd(
    path.dirname(root),
    'version = 3\n[plugins."io.containerd.nri.v1.nri"]\n  disable = false\n  plugin_path = "/opt/nri/plugins"\n',
    '2.2.0',
  );
  const r = install({ runtime: 'containerd', root, source, extra: required(['--containerd', bin]) });
  refused(
    t,
    r,
    `envhook: containerd 2.2.0 config dump of /etc/containerd/config.toml: NRI's default validator is off; required_plugins does not hold "envhook"; every file is back as it was\n`,
  );
  t.same(snapshot(root), original);
});

t.test('--nri-required without --mode nri: refused, nothing written', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 3\n' });
  for (const runtime of ['containerd', 'crio'] as const) {
    installRefused(
      t,
      { runtime, root, source, extra: ['--mode', 'shim', '--nri-required'], env: NOWHERE },
      '--nri-required is only valid with --mode nri (it makes the NRI plugin a required one)',
    );
  }
});

/** An install that must fail with `message` alone, writing nothing. */
function installRefused(t: Test, args: InstallArgs, message: string): void {
  const before = snapshot(args.root);
  const r = install(args);
  refused(t, r, `envhook: ${message}\n`);
  t.equal(r.stdout, '');
  t.same(snapshot(args.root), before, 'nothing written');
}

const DROP_IN = 'etc/crio/crio.conf.d/50-envhook-nri.conf';

// CRI-O 1.34 to 1.36 print the validator block commented out whatever it holds (the double plays that)
for (const version of ['1.34.0', '1.36.3'])
  t.test(`CRI-O ${version}: the validator in envhook drop-in; idempotent; uninstall restores`, async (t) => {
    const { root, source } = installRoot(t, { 'etc/crio/crio.conf': '[crio.runtime]\ndefault_runtime = "runc"\n' });
    const crio = crioDouble(path.dirname(root), version).bin;
    const original = snapshot(root);
    const r = install({ runtime: 'crio', root, source, extra: required(['--crio', crio]), env: NOWHERE });
    t.equal(r.status, 0, r.stderr);
    t.equal(
      read(root, DROP_IN),
      [
        '# Written by envhook install; removed by envhook uninstall.',
        "# NRI on (CRI-O's default from 1.30, off before), for envhook's pre-installed NRI plugin.",
        '[crio.nri]',
        'enable_nri = true',
        '',
        "# envhook a required plugin of NRI's default validator (CRI-O 1.34 or later): no container is created while it is not connected.",
        '[crio.nri.default_validator]',
        'nri_enable_default_validator = true',
        'nri_validator_required_plugins = ["envhook"]',
        '',
      ].join('\n'),
    );
    t.match(
      r.stdout,
      'note: envhook is a required NRI plugin: CRI-O creates no container (pod sandboxes still start) while envhook is not connected\n',
    );
    t.match(r.stdout, 'checked: crio config shows NRI on, with plugins from /opt/nri/plugins, "envhook" required\n');
    t.equal(
      install({ runtime: 'crio', root, source, extra: required(['--crio', crio]), env: NOWHERE }).stdout,
      'nothing changed: envhook is already installed for crio (NRI plugin) under /usr/local/lib/envhook\n',
    );
    t.equal(uninstall({ runtime: 'crio', root, extra: ['--mode', 'nri'] }).status, 0);
    t.same(snapshot(root), original, 'every file as before');
  });

t.test('CRI-O 1.34: union with crio.conf and an earlier drop-in; a later list refused', async (t) => {
  const { root, source } = installRoot(t, {
    'etc/crio/crio.conf': '[crio.nri.default_validator]\nnri_validator_required_plugins = ["a"]\n',
    'etc/crio/crio.conf.d/10-admin.conf':
      '[crio.nri.default_validator]\nnri_validator_required_plugins = ["b", "c"]\nnri_validator_tolerate_missing_plugins_annotation = "tolerate-missing-nri-plugins.noderesource.dev"\n',
  });
  const crio = crioDouble(path.dirname(root), '1.34.1').bin;
  const original = snapshot(root);
  const r = install({ runtime: 'crio', root, source, extra: required(['--crio', crio]), env: NOWHERE });
  t.equal(r.status, 0, r.stderr);
  t.equal(read(root, DROP_IN), crioNriDropIn(['b', 'c', 'envhook']));
  t.match(read(root, DROP_IN), /^nri_validator_required_plugins = \["b", "c", "envhook"\]$/m);
  t.equal(uninstall({ runtime: 'crio', root, extra: ['--mode', 'nri'] }).status, 0);
  t.same(snapshot(root), original, 'every file as before');

  fs.writeFileSync(
    path.join(root, 'etc/crio/crio.conf.d/90-admin.conf'),
    '[crio.nri.default_validator]\nnri_validator_required_plugins = ["d"]\n',
  );
  installRefused(
    t,
    { runtime: 'crio', root, source, extra: required(['--crio', crio]), env: NOWHERE },
    "/etc/crio/crio.conf.d/90-admin.conf sets [crio.nri.default_validator] and CRI-O reads it after /etc/crio/crio.conf.d/50-envhook-nri.conf: envhook's nri_validator_required_plugins would be replaced; name a later file with --config",
  );
});

t.test('CRI-O: the files already require envhook: the drop-in only switches NRI on', async (t) => {
  const { root, source } = installRoot(t, {
    'etc/crio/crio.conf.d/90-admin.conf':
      '[crio.nri.default_validator]\nnri_enable_default_validator = true\nnri_validator_required_plugins = ["envhook"]\n',
  });
  const crio = crioDouble(path.dirname(root), '1.34.0').bin;
  const r = install({ runtime: 'crio', root, source, extra: required(['--crio', crio]), env: NOWHERE });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    "note: envhook is already a required plugin of NRI's default validator as CRI-O reads its files: nothing written for --nri-required\n",
  );
  t.equal(read(root, DROP_IN), crioNriDropIn());
});

t.test('CRI-O 1.33 and no crio refused, nothing written', async (t) => {
  const { root, source } = crioNodeRoot(t, {});
  const crio = crioDouble(path.dirname(root), '1.33.2').bin;
  installRefused(
    t,
    { runtime: 'crio', root, source, extra: required(['--crio', crio]), env: NOWHERE },
    "--nri-required needs CRI-O 1.34 or later (NRI's default validator); CRI-O 1.33.2 has none: install without --nri-required, or upgrade CRI-O",
  );
  installRefused(
    t,
    { runtime: 'crio', root, source, extra: required(), env: NOWHERE },
    "--nri-required needs CRI-O 1.34 or later (NRI's default validator); no crio binary to ask for its version: name it with --crio PATH",
  );
});
