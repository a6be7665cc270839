// `envhook install --runtime containerd` on the layouts admins have (root file alone, imports,
// drop-ins of both config versions), with containerd's own reading as the judge: Debian's
// containerd 1.6 and containerd 2.1.9 from Debian sid (extracted into a cache, never installed)
// each run `config dump` on the files install wrote. Every case ends with the handler in the dump,
// carrying the runc options the admin set, or with a one-line refusal and every file untouched;
// never a silent exit 0. Uninstall then restores every file byte for byte.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse } from 'smol-toml';
import { CONTAINERD } from '../helpers/bundle.ts';
import { sidContainerd } from '../helpers/install/containerd-sid.ts';
import { fakeSource, hostFiles, install, snapshot, uninstall } from '../helpers/install/install.ts';

// each case runs install twice and uninstall once, each asking containerd: minutes on a busy machine
t.setTimeout(900_000);

const sid = await sidContainerd();
const BINS = {
  '1.6': CONTAINERD && /\s1\.\d+\./.test(spawnSync(CONTAINERD, ['--version'], { encoding: 'utf8' }).stdout) ? CONTAINERD : undefined,
  '2.1': 'bin' in sid ? sid.bin : undefined,
};
const MISSING = {
  '1.6': BINS['1.6'] ? undefined : 'containerd 1.x not installed (apt-get install containerd)',
  '2.1': 'missing' in sid ? sid.missing : undefined,
};
const FRONT = '/usr/local/lib/envhook/envhook-runtime';
const V2 = 'io.containerd.grpc.v1.cri';
const V3 = 'io.containerd.cri.v1.runtime';
const ROOT_FILE = 'etc/containerd/config.toml';

interface Case {
  name: string;
  bin: keyof typeof BINS;
  files: Record<string, string>;
  extra?: string[];
  /** Where the block lands and the options the handler must carry (besides BinaryName). */
  ok?: { file: string; options: Record<string, unknown>; restartNote?: RegExp; note?: string };
  refused?: RegExp;
}

// what containerd 2.1's own `config default` writes: a version 3 file whose
// [plugins.'io.containerd.grpc.v1.cri'] holds the CRI server's streaming settings
const default21 = BINS['2.1'] ? spawnSync(BINS['2.1'], ['config', 'default'], { encoding: 'utf8' }).stdout : '';
const v3Root = (extra = '') => `version = 3\nimports = ['conf.d/*.toml']\n${extra}`;
const v3Runc = (opts: string) => `[plugins.'${V3}'.containerd.runtimes.runc.options]\n${opts}`;
const v2Runc = (opts: string) => `[plugins."${V2}".containerd.runtimes.runc.options]\n${opts}`;

const CASES: Case[] = [
  {
    name: '2.1.9, version 2 root file alone',
    bin: '2.1',
    files: { [ROOT_FILE]: `version = 2\n${v2Runc('  SystemdCgroup = true\n')}` },
    ok: { file: ROOT_FILE, options: { SystemdCgroup: true } },
  },
  {
    name: '2.1.9, version 3 root file alone',
    bin: '2.1',
    files: { [ROOT_FILE]: `version = 3\n${v3Runc("  SystemdCgroup = true\n  Root = '/run/runc-admin'\n")}` },
    ok: { file: ROOT_FILE, options: { SystemdCgroup: true, Root: '/run/runc-admin' } },
  },
  {
    name: "2.1.9, containerd's own config default: its CRI server streaming settings are in force, no note says otherwise",
    bin: '2.1',
    files: { [ROOT_FILE]: default21 },
    ok: {
      file: ROOT_FILE,
      options: {},
      note: `  note: envhook's block goes here: containerd 2.x merges imported files table by table and none sets the handler "envhook", so the root file's block stands`,
    },
  },
  {
    name: "2.1.9, a version 2 drop-in's runtime settings beside the version 3 table: named as dropped, its streaming setting not",
    bin: '2.1',
    files: {
      [ROOT_FILE]: v3Root(v3Runc('  SystemdCgroup = true\n')),
      'etc/containerd/conf.d/10-old.toml': `version = 2\n[plugins."${V2}"]\n  stream_idle_timeout = "2h"\n${v2Runc('  Root = "/run/not-in-force"\n')}`,
    },
    ok: {
      file: ROOT_FILE,
      options: { SystemdCgroup: true },
      note: `  note: envhook's block goes here: containerd 2.x merges imported files table by table and none sets the handler "envhook", so the root file's block stands; the version 2 CRI settings of /etc/containerd/conf.d/10-old.toml (containerd) are not in force (containerd 2.x drops them)`,
    },
  },
  {
    name: '2.1.9, version 3 root importing conf.d/*.toml, SystemdCgroup in a drop-in: copied from the merged config',
    bin: '2.1',
    files: {
      [ROOT_FILE]: v3Root(`\n[plugins.'${V3}'.containerd]\n  default_runtime_name = 'runc'\n${v3Runc("  Root = '/run/runc-admin'\n")}`),
      'etc/containerd/conf.d/10-cgroup.toml': `version = 3\n${v3Runc('  SystemdCgroup = true\n')}`,
    },
    ok: { file: ROOT_FILE, options: { SystemdCgroup: true, Root: '/run/runc-admin' } },
  },
  {
    name: '2.1.9, a version 3 drop-in that already sets the CRI runtime table; envhook into a new drop-in',
    bin: '2.1',
    files: {
      [ROOT_FILE]: v3Root(),
      'etc/containerd/conf.d/20-runtimes.toml': `version = 3\n[plugins.'${V3}'.containerd.runtimes.kata]\n  runtime_type = 'io.containerd.kata.v2'\n${v3Runc('  SystemdCgroup = true\n')}`,
    },
    extra: ['--drop-in', '/etc/containerd/conf.d/50-envhook.toml'],
    ok: { file: 'etc/containerd/conf.d/50-envhook.toml', options: { SystemdCgroup: true } },
  },
  {
    name: '2.1.9, an empty drop-in file the admin made for envhook: written in the root file version',
    bin: '2.1',
    files: {
      [ROOT_FILE]: v3Root(),
      'etc/containerd/conf.d/50-envhook.toml': '',
      'etc/containerd/conf.d/10-cgroup.toml': `version = 3\n${v3Runc('  SystemdCgroup = true\n')}`,
    },
    extra: ['--drop-in', '/etc/containerd/conf.d/50-envhook.toml'],
    ok: { file: 'etc/containerd/conf.d/50-envhook.toml', options: { SystemdCgroup: true } },
  },
  {
    name: '2.1.9, version 2 root with version 2 drop-ins',
    bin: '2.1',
    files: {
      [ROOT_FILE]: `version = 2\nimports = ["conf.d/*.toml"]\n[plugins."${V2}"]\n  max_container_log_line_size = 4096\n`,
      'etc/containerd/conf.d/10-cgroup.toml': `version = 2\n${v2Runc('  SystemdCgroup = true\n')}`,
    },
    ok: { file: ROOT_FILE, options: { SystemdCgroup: true } },
  },
  {
    name: '2.1.9, the layout of the report: --config naming a new drop-in the root imports',
    bin: '2.1',
    files: { [ROOT_FILE]: v3Root(`[plugins.'${V3}'.containerd]\n  default_runtime_name = 'runc'\n`) },
    extra: ['--config', '/etc/containerd/conf.d/50-envhook.toml'],
    refused:
      /^envhook: \/etc\/containerd\/conf\.d\/50-envhook\.toml is imported by \/etc\/containerd\/config\.toml: --config names containerd's root file; name this file with --drop-in/,
  },
  {
    name: '2.1.9, version 2 root and a drop-in setting the version 3 CRI table: every version 2 CRI section would be dropped',
    bin: '2.1',
    files: {
      [ROOT_FILE]: `version = 2\nimports = ["conf.d/*.toml"]\n`,
      'etc/containerd/conf.d/10-v3.toml': `version = 2\n${v3Runc('  SystemdCgroup = true\n')}`,
    },
    refused:
      /sets \[plugins\.'io\.containerd\.cri\.v1\.runtime'\] while \/etc\/containerd\/config\.toml is version 2: containerd 2\.x then drops every version 2 CRI section/,
  },
  {
    name: '2.1.9, --drop-in naming a file containerd does not read',
    bin: '2.1',
    files: { [ROOT_FILE]: v3Root() },
    extra: ['--drop-in', '/etc/containerd/other.d/50-envhook.toml'],
    refused:
      /^envhook: --drop-in \/etc\/containerd\/other\.d\/50-envhook\.toml: containerd does not read it: the imports of \/etc\/containerd\/config\.toml .*: add it to the imports of \/etc\/containerd\/config\.toml, or leave --drop-in out\n$/,
  },
  {
    name: '2.1.9, a drop-in that defines the handler envhook itself',
    bin: '2.1',
    files: {
      [ROOT_FILE]: v3Root(),
      'etc/containerd/conf.d/90-mine.toml': `version = 3\n[plugins.'${V3}'.containerd.runtimes.envhook]\n  runtime_type = 'io.containerd.runc.v2'\n`,
    },
    refused: /^envhook: \/etc\/containerd\/conf\.d\/90-mine\.toml already defines the runtime handler "envhook" outside envhook's block/,
  },
  {
    name: '2.1.9, a version 4 root file (containerd 2.3+)',
    bin: '2.1',
    files: { [ROOT_FILE]: 'version = 4\n' },
    refused:
      /^envhook: \/etc\/containerd\/config\.toml is a version 4 config, newer than containerd 2\.1\.9\S* reads \(version 3 at most\)/,
  },
  {
    name: '1.6, version 2 root file alone',
    bin: '1.6',
    files: { [ROOT_FILE]: `version = 2\n${v2Runc('  SystemdCgroup = true\n')}` },
    ok: { file: ROOT_FILE, options: { SystemdCgroup: true } },
  },
  {
    name: "1.6, a drop-in that sets the CRI table replaces the root file's: the block goes into the drop-in",
    bin: '1.6',
    files: {
      [ROOT_FILE]: `version = 2\nimports = ["conf.d/10-cri.toml"]\n${v2Runc('  Root = "/run/not-in-force"\n')}`,
      'etc/containerd/conf.d/10-cri.toml': `version = 2\n${v2Runc('  SystemdCgroup = true\n')}`,
    },
    ok: { file: 'etc/containerd/conf.d/10-cri.toml', options: { SystemdCgroup: true } },
  },
  {
    name: "1.6, --drop-in naming a new file while the root file sets the CRI table: the admin's CRI settings would be lost",
    bin: '1.6',
    files: { [ROOT_FILE]: `version = 2\nimports = ["conf.d/50-envhook.toml"]\n${v2Runc('  SystemdCgroup = true\n')}` },
    extra: ['--drop-in', '/etc/containerd/conf.d/50-envhook.toml'],
    refused:
      /^envhook: envhook's block in \/etc\/containerd\/conf\.d\/50-envhook\.toml would replace the whole \[plugins\."io\.containerd\.grpc\.v1\.cri"\] table of \/etc\/containerd\/config\.toml on containerd 1\.x/,
  },
  {
    name: '1.6, a version 3 root file',
    bin: '1.6',
    files: { [ROOT_FILE]: 'version = 3\n' },
    refused: /^envhook: \/etc\/containerd\/config\.toml is a version 3 config, which containerd 1\.6\.\S+ cannot read/,
  },
];

function dump(bin: string, root: string) {
  const r = spawnSync(bin, ['--config', path.join(root, ROOT_FILE), 'config', 'dump'], { encoding: 'utf8', cwd: root });
  if (r.status !== 0) throw new Error(r.stderr);
  return parse(r.stdout) as any;
}

for (const c of CASES) {
  t.test(c.name, { skip: MISSING[c.bin] }, async (t) => {
    const bin = BINS[c.bin]!;
    const dir = t.testdir({});
    const root = path.join(dir, 'root');
    hostFiles(root, c.files);
    const source = fakeSource(path.join(dir, 'src'));
    const original = snapshot(root);
    const r = install({ runtime: 'containerd', root, source, extra: ['--containerd', bin, ...(c.extra ?? [])] });
    if (c.refused) {
      t.equal(r.status, 1, 'refused');
      t.match(r.stderr, c.refused);
      t.equal(r.stderr.split('\n').length, 2, 'one line');
      t.same(snapshot(root), original, 'every file untouched');
      return;
    }
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, new RegExp(`^  note: envhook's block goes here: `, 'm'), 'the output says why the block goes where it does');
    if (c.ok!.note)
      t.equal(
        r.stdout.split('\n').find((l) => l.startsWith("  note: envhook's block goes here: ")),
        c.ok!.note,
        'the exact note the admin reads',
      );
    t.match(r.stdout, /^checked: containerd \S+ config dump of \/etc\/containerd\/config\.toml shows the runtime handler "envhook"/m);
    t.match(
      fs.readFileSync(path.join(root, c.ok!.file), 'utf8'),
      /# BEGIN envhook[\s\S]*# END envhook\n$/,
      `the block is in ${c.ok!.file}`,
    );
    // containerd's own reading, independently of install's check
    const plugins = dump(bin, root).plugins;
    const runtimes = (plugins[V3] ?? plugins[V2]).containerd.runtimes;
    t.equal(runtimes.envhook?.runtime_type, 'io.containerd.runc.v2');
    t.same(runtimes.envhook?.pod_annotations, ['envhook.io/*']);
    t.has(runtimes.envhook?.options, { ...c.ok!.options, BinaryName: FRONT }, 'the handler carries the options the admin set');
    t.ok(runtimes.runc, 'runc is still there');
    const again = install({ runtime: 'containerd', root, source, extra: ['--containerd', bin, ...(c.extra ?? [])] });
    t.equal(again.status, 0, again.stderr);
    t.match(again.stdout, /nothing changed: envhook is already installed/);
    const un = uninstall({ runtime: 'containerd', root });
    t.equal(un.status, 0, un.stderr);
    t.same(snapshot(root), original, 'uninstall restores every file byte for byte');
  });
}
