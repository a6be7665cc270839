// The commander side of `envhook install` / `uninstall` (src/cli/install.ts): flag checks, what
// it prints after a change (notes, next steps, directories it removes), its "nothing changed"
// lines, and --dry-run's "would". Podman, the runtime with no binary to ask, on a fixture root.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { envhook, RUNC } from '../helpers/bundle.ts';
import { install, installRoot, REAL_NODE, snapshot, uninstall } from '../helpers/install/install.ts';
import { refused } from '../helpers/refusal.ts';

t.test('flags: --runtime mandatory, --runtime and --mode among their choices; nothing written', async (t) => {
  const { root } = installRoot(t, {});
  const cases: [string[], string][] = [
    [['install'], "envhook: required option '--runtime <runtime>' not specified\n"],
    [['uninstall'], "envhook: required option '--runtime <runtime>' not specified\n"],
    [
      ['install', '--runtime', 'docker'],
      "envhook: option '--runtime <runtime>' argument 'docker' is invalid. Allowed choices are containerd, crio, podman.\n",
    ],
    [
      ['install', '--runtime', 'podman', '--mode', 'foo'],
      "envhook: option '--mode <mode>' argument 'foo' is invalid. Allowed choices are shim, nri.\n",
    ],
  ];
  for (const [args, stderr] of cases) {
    const r = envhook([...args, '--root', root]);
    refused(t, r, stderr, args.join(' '));
  }
  t.same(fs.readdirSync(root), []);
});

t.test('--dry-run: every line says would, and nothing is written', async (t) => {
  const { root, source } = installRoot(t, {});
  const r = install({ runtime: 'podman', root, source, extra: ['--dry-run'] });
  t.equal(r.status, 0, r.stderr);
  const [where, ...heads] = r.stdout.split('\n').filter((l) => /^[a-z]/.test(l));
  t.equal(where, `paths below are the node's, under --root ${root}`, 'first: where the paths are');
  t.ok(heads.length >= 9);
  t.same(
    heads.filter((l) => !l.startsWith('would create ') && !l.startsWith('note: ')),
    [],
  );
  t.notMatch(r.stdout, /^next:/m, 'no next steps for a dry run');
  t.same(fs.readdirSync(root), []);
});

t.test('install, again, uninstall, again: the lines each prints, and the root as it was', async (t) => {
  const { root, source } = installRoot(t, {});
  const original = snapshot(root);
  const first = install({ runtime: 'podman', root, source });
  t.equal(first.status, 0, first.stderr);
  t.match(first.stdout, /^create \/etc\/containers\/containers\.conf\.d\/50-envhook\.conf$/m);
  t.match(first.stdout, /^create \/usr\/local\/lib\/envhook\/state\.json$/m);
  t.match(first.stdout, /^next:\n(  .+\n)+$/m);

  const again = install({ runtime: 'podman', root, source });
  t.equal(again.status, 0, again.stderr);
  t.equal(again.stdout, 'nothing changed: envhook is already installed for podman under /usr/local/lib/envhook\n');

  const dry = uninstall({ runtime: 'podman', root, extra: ['--dry-run'] });
  t.equal(dry.status, 0, dry.stderr);
  t.match(dry.stdout, /^would remove directory \/etc\/containers\/containers\.conf\.d \(install created it\)$/m);
  t.ok(fs.existsSync(path.join(root, 'usr/local/lib/envhook/state.json')), 'a dry run removes nothing');

  const un = uninstall({ runtime: 'podman', root });
  t.equal(un.status, 0, un.stderr);
  t.match(un.stdout, /^remove \/usr\/local\/lib\/envhook\/state\.json$/m);
  t.match(un.stdout, /^remove directory \/etc \(install created it\)$/m);
  t.same(snapshot(root), original);

  const unAgain = uninstall({ runtime: 'podman', root });
  t.equal(unAgain.status, 0, unAgain.stderr);
  t.equal(unAgain.stdout, 'nothing changed: envhook is not installed for podman under /usr/local/lib/envhook\n');
});

t.test('docs/install.md#flags lists every flag of install --help and uninstall --help, and no other', async (t) => {
  const help = (cmd: string) => {
    const r = envhook([cmd, '--help']);
    t.equal(r.status, 0);
    return [...r.stdout.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]!).filter((f) => f !== '--help');
  };
  const flags = new Set([...help('install'), ...help('uninstall')]);
  const doc = fs.readFileSync(path.join(import.meta.dirname, '../../docs/install.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Flags\n'), doc.indexOf('\n## ', doc.indexOf('\n## Flags\n') + 1));
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  const documented = new Set(rows.flatMap((l) => [...l.split(' | ')[0]!.matchAll(/`(--[a-z-]+)/g)].map((m) => m[1]!)));
  t.same(
    [...flags].filter((f) => !documented.has(f)),
    [],
    'in --help, not in docs/install.md#flags',
  );
  t.same(
    [...documented].filter((f) => !flags.has(f)),
    [],
    'in docs/install.md#flags, not in --help',
  );
  t.ok(flags.size >= 20, `${flags.size} flags read from --help`);
});

t.test('install --help: --mode nri names both runtimes that have NRI', async (t) => {
  const r = envhook(['install', '--help']);
  t.match(r.stdout.replace(/\s+/g, ' '), 'nri: the resident NRI plugin (containerd >= 1.7, CRI-O >= 1.26)');
});

t.test('uninstall --dry-run prints exactly the lines the real uninstall prints, with "would"', async (t) => {
  const { root, source } = installRoot(t, {});
  t.equal(install({ runtime: 'podman', root, source }).status, 0);
  const dry = uninstall({ runtime: 'podman', root, extra: ['--dry-run'] });
  t.equal(dry.status, 0, dry.stderr);
  const real = uninstall({ runtime: 'podman', root });
  t.equal(real.status, 0, real.stderr);
  const lines = (out: string) => out.split('\n').filter((l) => /^(would )?remove /.test(l));
  t.same(
    lines(dry.stdout).map((l) => l.replace(/^would /, '')),
    lines(real.stdout),
  );
  t.match(
    real.stdout,
    /^remove directory \/usr\/local\/lib\/envhook \(install created it\)$/m,
    'the prefix, which the real one did not say',
  );
});

t.test('--json: one object with the same changes as the lines; nothing on stderr; an error is still the one line', async (t) => {
  const { root, source } = installRoot(t, {});
  const parse = (r: { status: number | null; stdout: string; stderr: string }) => {
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stderr, '');
    return JSON.parse(r.stdout) as Record<string, unknown> & { files: { path: string; action: string; bytes: number | null }[] };
  };
  const lines = install({ runtime: 'podman', root, source, extra: ['--dry-run'] });
  const wouldCreate = [...lines.stdout.matchAll(/^would create (\S+)/gm)].map((m) => m[1]);

  const dry = parse(install({ runtime: 'podman', root, source, extra: ['--dry-run', '--json'] }));
  t.same(
    dry.files.map((f) => f.path),
    wouldCreate,
    'the files the lines name, in their order',
  );
  t.ok(dry.files.every((f) => f.action === 'create' && typeof f.bytes === 'number'));
  t.match(dry, { command: 'install', runtime: 'podman', mode: 'shim', root, dryRun: true, changed: true, nothing: null, next: [] });
  t.same(fs.readdirSync(root), [], 'the dry run wrote nothing');

  const real = parse(install({ runtime: 'podman', root, source, extra: ['--json'] }));
  t.match(real, { dryRun: false, changed: true, checked: null, plugins: [], warnings: [] });
  t.equal((real.next as string[]).length, 1, 'the next step, as the lines say it');
  t.ok(fs.existsSync(path.join(root, 'usr/local/lib/envhook/state.json')));

  const again = parse(install({ runtime: 'podman', root, source, extra: ['--json'] }));
  t.match(again, { changed: false, files: [], nothing: 'envhook is already installed for podman under /usr/local/lib/envhook' });

  const unLines = uninstall({ runtime: 'podman', root, extra: ['--dry-run'] }).stdout;
  const unDry = parse(uninstall({ runtime: 'podman', root, extra: ['--dry-run', '--json'] }));
  t.same(
    unDry.removedDirectories,
    [...unLines.matchAll(/^would remove directory (\S+)/gm)].map((m) => m[1]),
    'the directories the lines name',
  );
  const un = parse(uninstall({ runtime: 'podman', root, extra: ['--json'] }));
  t.match(un, { command: 'uninstall', mode: null, dryRun: false, changed: true });
  t.same(
    un.files.map((f) => f.path),
    [...unLines.matchAll(/^would remove (\/\S+)$/gm)].map((m) => m[1]),
    'the files the lines name',
  );
  t.ok(un.files.every((f) => f.action === 'remove' && f.bytes === null));
  t.same(un.removedDirectories, unDry.removedDirectories);
  t.same(fs.readdirSync(root), [], 'uninstall put the root back');

  const bad = install({ runtime: 'podman', root: path.join(root, 'missing'), source, extra: ['--json'] });
  t.equal(bad.status, 1);
  t.equal(bad.stdout, '', 'no JSON for a refusal');
  t.match(bad.stderr, /^envhook: [^\n]*--root[^\n]*\n$/);
});

t.test(
  '--containerd / --crio naming another program, or none: the flag named, what it is, what to do; nothing written',
  { skip: RUNC ? false : 'runc not installed' },
  async (t) => {
    const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
    const before = snapshot(root);
    const runcSaid = execFileSync(RUNC!, ['--version'], { encoding: 'utf8' }).split('\n')[0];
    const cases: ['containerd' | 'crio', string[], string][] = [
      [
        'containerd',
        ['--containerd', RUNC!],
        `envhook: --containerd ${RUNC}: not containerd: its --version printed "${runcSaid}" (exit 0): name containerd's executable with --containerd, or leave --containerd out (the node's, under --root)\n`,
      ],
      [
        'containerd',
        ['--containerd', '/nonexistent/containerd'],
        "envhook: --containerd /nonexistent/containerd: cannot run it: no such file or directory (ENOENT): name containerd's executable with --containerd, or leave --containerd out (the node's, under --root)\n",
      ],
      [
        'crio',
        ['--crio', RUNC!],
        `envhook: --crio ${RUNC}: not CRI-O: its --version printed "${runcSaid}" (exit 0): name CRI-O's executable with --crio, or leave --crio out (the node's, under --root)\n`,
      ],
      [
        'crio',
        ['--crio', '/nonexistent/crio', '--mode', 'nri'],
        "envhook: --crio /nonexistent/crio: cannot run it: no such file or directory (ENOENT): name CRI-O's executable with --crio, or leave --crio out (the node's, under --root)\n",
      ],
    ];
    for (const [runtime, extra, line] of cases) {
      const r = install({ runtime, root, source, extra });
      refused(t, r, line, `${runtime} ${extra.join(' ')}`);
      t.equal(r.stdout, '');
    }
    t.same(snapshot(root), before, 'nothing written');
  },
);

t.test('--log-level, --hooks-dir and --source with a value install cannot use: the flag named, what to do; nothing written', async (t) => {
  const { root, source } = installRoot(t, {});
  const cases: [string[], string][] = [
    [['--log-level', 'loud'], 'envhook: --log-level loud: not a log level: use one of fatal, error, warn, info, debug, trace, silent\n'],
    [['--hooks-dir', 'relative/hooks.d'], 'envhook: --hooks-dir must be an absolute host path\n'],
    [
      ['--source', '/nonexistent'],
      'envhook: --source /nonexistent: neither a checkout (hooks/envhook-runtime and dist/envhook, or dist/envhook.cjs with dist/envhook-main.cjs) nor an installed envhook (envhook-runtime beside envhook, or beside envhook.cjs and envhook-main.cjs): name one, or leave --source out\n',
    ],
  ];
  for (const [extra, line] of cases) {
    const runtime = extra[0] === '--hooks-dir' ? 'crio' : 'podman';
    const from = extra[0] === '--source' ? [] : ['--source', source, '--node', REAL_NODE];
    const r = envhook(['install', '--runtime', runtime, '--root', root, ...from, ...extra]);
    refused(t, r, line, extra.join(' '));
  }
  t.same(fs.readdirSync(root), [], 'nothing written');
});

t.test('--mode nri installs envhook and the plugin, not the runtime front that only the runtime handler runs', async (t) => {
  const { root, source } = installRoot(t, { 'etc/crio/crio.conf': '' });
  const env = { ...process.env, PATH: '/nonexistent' };
  const r = install({ runtime: 'crio', root, source, extra: ['--mode', 'nri'], env });
  t.equal(r.status, 0, r.stderr);
  const created = r.stdout.split('\n').filter((l) => l.startsWith('create '));
  t.same(
    created.filter((l) => l.startsWith('create /usr/local/lib/envhook/')),
    ['envhook-main.cjs', 'envhook.cjs', 'envhook', 'state.json'].map((f) => `create /usr/local/lib/envhook/${f}`),
  );
  for (const f of ['envhook-runtime', 'envhook-runtime.conf'])
    t.notOk(fs.existsSync(path.join(root, 'usr/local/lib/envhook', f)), `no ${f}`);
  t.notMatch(r.stdout, /runtime "runc" not found/, 'no note about the OCI runtime the front would exec');
  // the runtime handler then adds the front; its uninstall takes it back, the plugin keeps working
  t.equal(install({ runtime: 'crio', root, source, env }).status, 0);
  t.ok(fs.existsSync(path.join(root, 'usr/local/lib/envhook/envhook-runtime')));
  const u = uninstall({ runtime: 'crio', root, extra: ['--mode', 'shim'] });
  t.match(u.stdout, /^remove \/usr\/local\/lib\/envhook\/envhook-runtime$/m);
  t.ok(fs.existsSync(path.join(root, 'usr/local/lib/envhook/envhook')), 'envhook stays for the plugin');
});
