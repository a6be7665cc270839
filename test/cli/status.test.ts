// `envhook status [--json]` as a real process, on a temporary host root holding a real
// `envhook install` (CRI-O, NRI mode: no runtime binary needed) and a status file as the
// supervisor writes it: what it prints, its exit status, and that it prints the file's fields and
// nothing else (an env file with a canary sits under the same root).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { envhook } from '../helpers/bundle.ts';
import { crioEtc, install, installRoot } from '../helpers/install/install.ts';
import { sampleStatus } from '../helpers/nri/status.ts';
import { procStat } from '../../src/nri/proc-stat.ts';
import { writeStatus, type NriStatus } from '../../src/nri/status-file.ts';
import { renderReport, type StatusReport } from '../../src/cli/status.ts';
import { startFakeRuntime } from '../helpers/nri/runtime.ts';
import { startNriProcess } from '../helpers/nri/process.ts';
import { crioDouble } from '../helpers/install/crio.ts';
import { CONTAINERD, PODMAN } from '../helpers/bundle.ts';
import { uninstall } from '../helpers/install/install.ts';
import { findContainerd } from '../../src/install/containerd/containerd-binary.ts';
import { addToRoot } from '../helpers/install/node-root.ts';
import { refused } from '../helpers/refusal.ts';

t.setTimeout(600_000);
const NO_CRIO = { ...process.env, PATH: '/nonexistent' };
const FILE = '/run/envhook/nri-status.json';

/**
 * A host root (its /proc the real one, as a DaemonSet's rbind mount of / shows it), with CRI-O's
 * `crio` (the double, beside the root: status is given it with --crio), NRI mode installed or not.
 */
function hostRoot(t: Test, nri: boolean): string {
  const { root, source } = installRoot(t, {
    'var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/env/app.env': 'TOKEN=CANARY-VALUE\n',
  });
  fs.symlinkSync('/proc', path.join(root, 'proc'));
  withCrio(root);
  if (nri) {
    const r = install({ runtime: 'crio', root, source, extra: ['--mode', 'nri'], env: NO_CRIO });
    t.equal(r.status, 0, r.stderr);
  }
  return root;
}

/** CRI-O's `crio` for a root: the double, beside it. */
const crioOf = (root: string) => path.join(path.dirname(root), 'crio-bin', 'crio');
function withCrio(root: string): void {
  crioEtc(root); // the node's CRI-O directory, which install needs when it has no crio to ask
  fs.mkdirSync(path.dirname(crioOf(root)), { recursive: true });
  crioDouble(path.dirname(crioOf(root)));
}
const status = (root: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) =>
  envhook(['status', '--root', root, ...(fs.existsSync(crioOf(root)) ? ['--crio', crioOf(root)] : []), ...extra], {
    env: { ENVHOOK_CONFIG: '', ...env },
  });
const put = (root: string, s: NriStatus) => writeStatus(path.join(root, 'run/envhook'), s);
const deadPid = (): number => spawnSync('true').pid!;

const EMPTY: StatusReport = {
  installed: {},
  nri: 'absent',
  runsAs: null,
  checks: [],
  ok: true,
  problems: [],
  problem: null,
  statusFile: FILE,
  status: null,
};

t.test('nothing installed, nothing running: exit 0, no word of a status file', async (t) => {
  const root = hostRoot(t, false);
  const r = status(root);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
  t.equal(r.stdout, 'installed: nothing\n');
  const j = status(root, ['--json']);
  t.same(JSON.parse(j.stdout), EMPTY);
});

t.test('a --root that is not a directory is refused: one line, nothing on stdout', async (t) => {
  const dir = t.testdir({ file: '' });
  for (const [root, why] of [
    [path.join(dir, 'nonexistent'), "does not exist: name the node's root directory (the installer DaemonSet mounts it at /host)"],
    [path.join(dir, 'file'), "is not a directory: name the node's root directory"],
  ]) {
    const r = status(root!);
    refused(t, r, `envhook: --root ${root} ${why}\n`);
    t.equal(r.stdout, '');
  }
});

t.test('a settings file that is not JSON, or not valid settings: a problem with file:line:column, exit 1', async (t) => {
  const root = hostRoot(t, false);
  fs.mkdirSync(path.join(root, 'etc/envhook'), { recursive: true });
  const file = path.join(root, 'etc/envhook/config.json');
  const todo =
    'fix or remove the file: every envhook the runtime starts (shim, hooks, NRI plugin) reads it and fails while it is not valid';
  const cases: [string, string][] = [
    ['{\n  "kubeletRoot": /var/lib/CANARY-VALUE\n}\n', 'config file /etc/envhook/config.json:2:18: not valid JSON'],
    ['{\n  "logLevel": "info",\n}\n', 'config file /etc/envhook/config.json:3:1: not valid JSON'],
    [
      '{\n  "kubeletRoot": "/var/lib/kubelet",\n  "logLevel": "CANARY-VALUE"\n}\n',
      'config file /etc/envhook/config.json:3:3: /logLevel: must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"',
    ],
    ['{"kubeletroot": "/var/lib/kubelet"}', 'config file /etc/envhook/config.json:1:2: /: unknown field "kubeletroot"'],
  ];
  for (const [text, what] of cases) {
    fs.writeFileSync(file, text);
    const r = status(root);
    refused(t, r, `envhook: settings: ${what} — ${todo}\n`, what);
    t.equal(r.stdout, `installed: nothing\n  problem settings: ${what} — ${todo}\n`);
    t.notMatch(r.stdout + r.stderr, 'CANARY', 'no byte of the file');
    const j = JSON.parse(status(root, ['--json']).stdout);
    t.same(j.checks, [{ check: 'settings', state: 'problem', what, todo }]);
    t.same([j.ok, j.problem], [false, `settings: ${what} — ${todo}`]);
  }
  fs.writeFileSync(file, '{"kubeletRoot": "/var/lib/kubelet"}\n');
  t.equal(status(root).status, 0, 'a valid file: nothing to say');
});

t.test('shim-only and Podman installs: no word of the NRI status file', { skip: PODMAN ? false : 'podman not installed' }, async (t) => {
  for (const runtime of ['podman', 'crio'] as const) {
    const { root, source } = installRoot(t, {});
    withCrio(root);
    if (runtime === 'podman') addToRoot(root, { '/usr/bin/podman': PODMAN! });
    const r0 = install({ runtime, root, source, env: NO_CRIO });
    t.equal(r0.status, 0, r0.stderr);
    const r = status(root);
    t.notMatch(r.stdout, /nri plugin|nri-status\.json/i, `${runtime}: ${r.stdout}`);
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, new RegExp(`^installed: ${runtime} \\(shim\\)$`, 'm'));
  }
});

t.test('NRI mode installed: exit 1 unless connected, the reason on stderr', async (t) => {
  const root = hostRoot(t, true);
  let r = status(root);
  refused(t, r, `envhook: NRI plugin installed but not running: no status file ${FILE}\n`);
  t.match(
    r.stdout,
    /^installed: crio \(nri\)\n {2}ok runtime: crio 1\.36\.3 \(.*\)\n {2}ok nri-plugin: crio config shows NRI on, with plugins from \/opt\/nri\/plugins\nnri plugin: not running/,
  );

  const connected = sampleStatus({ lastError: { at: '2026-11-26T10:01:00.000Z', message: 'NRI connection closed: protocol error' } });
  put(root, connected);
  r = status(root);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
  t.match(r.stdout, /^nri plugin: 50-envhook connected since 2026-11-26T10:00:00\.250Z \(\d+[dhms]( \d+[dhms])? ago\)$/m);
  t.match(r.stdout, /^ {2}runtime: containerd 2\.1\.9, NRI v0\.8\.0$/m);
  t.match(r.stdout, /^ {2}containers: 3 adjusted, 12 without envhook, 0 refused, 0 errors, 0 missed, 0 evicted$/m);
  t.match(r.stdout, /^ {2}last error: 2026-11-26T10:01:00\.000Z NRI connection closed: protocol error$/m);
  const j = JSON.parse(status(root, ['--json']).stdout);
  const checks = [
    { check: 'runtime', state: 'ok', what: `crio 1.36.3 (${crioOf(root)}, named by --crio)` },
    { check: 'nri-plugin', state: 'ok', what: 'crio config shows NRI on, with plugins from /opt/nri/plugins' },
  ];
  t.same(j, { ...EMPTY, installed: { crio: ['nri'] }, nri: 'connected', checks, status: connected }, 'the file, whole');

  put(root, sampleStatus({ connected: false, since: '2026-11-26T10:02:00.000Z' }));
  r = status(root, ['--json']);
  refused(t, r, 'envhook: NRI plugin not connected since 2026-11-26T10:02:00.000Z\n');
  t.match(JSON.parse(r.stdout), { nri: 'disconnected', ok: false, problem: 'NRI plugin not connected since 2026-11-26T10:02:00.000Z' });

  const pid = deadPid();
  put(root, sampleStatus({ pid }));
  r = status(root);
  refused(t, r, `envhook: NRI plugin installed but not running: its supervisor (pid ${pid}) is gone\n`);
  t.match(r.stdout, `nri plugin: 50-envhook not running: supervisor pid ${pid} is gone (last known below)`);
});

t.test('a pid given to another process after the supervisor died is the supervisor gone', async (t) => {
  const root = hostRoot(t, true);
  // This test's own process plays the supervisor: its pid is alive, its start time known.
  const ticks = procStat(process.pid)!.startTicks;
  put(root, sampleStatus({ pid: process.pid, pidStartTicks: ticks }));
  let r = status(root);
  t.equal(r.status, 0, `the recorded start time: running (${r.stderr})`);
  put(root, sampleStatus({ pid: process.pid, pidStartTicks: ticks + 1 }));
  r = status(root, ['--json']);
  refused(t, r, `envhook: NRI plugin installed but not running: its supervisor (pid ${process.pid}) is gone\n`);
  t.match(JSON.parse(r.stdout), { nri: 'stale', ok: false });
  t.match(status(root).stdout, `nri plugin: 50-envhook not running: supervisor pid ${process.pid} is gone (last known below)`);
});

t.test('not installed: a supervisor running (a DaemonSet) must be connected; one gone is history', async (t) => {
  const root = hostRoot(t, false);
  put(root, sampleStatus({ connected: false }));
  t.equal(status(root).status, 1, 'running, not connected');
  put(root, sampleStatus({ pid: deadPid() }));
  const r = status(root, ['--json']);
  t.equal(r.status, 0, r.stderr);
  t.match(JSON.parse(r.stdout), { installed: {}, nri: 'stale', ok: true, problem: null });
  t.equal(status(root).stdout, 'installed: nothing\n', 'the lines: nothing else (the file is in --json)');
});

t.test('a malformed status file: one line, exit 1, nothing on stdout', async (t) => {
  const root = hostRoot(t, false);
  fs.mkdirSync(path.join(root, 'run/envhook'), { recursive: true });
  fs.writeFileSync(path.join(root, FILE), '{"plugin": "CANARY-VALUE');
  const r = status(root);
  refused(t, r, `envhook: status file ${path.join(root, FILE)} is not valid JSON\n`, 'named as read, under the root');
  t.equal(r.stdout, '');
});

t.test('the run directory from --run-dir, ENVHOOK_RUN_DIR or the config file', async (t) => {
  const root = hostRoot(t, false);
  writeStatus(path.join(root, 'srv/run'), sampleStatus());
  t.match(JSON.parse(status(root, ['--json', '--run-dir', '/srv/run']).stdout), {
    nri: 'connected',
    statusFile: '/srv/run/nri-status.json',
  });
  t.match(JSON.parse(status(root, ['--json'], { ENVHOOK_RUN_DIR: '/srv/run' }).stdout), { nri: 'connected' });
  const config = path.join(path.dirname(root), 'config.json');
  fs.writeFileSync(config, JSON.stringify({ runDir: '/srv/run' }));
  t.match(JSON.parse(status(root, ['--json'], { ENVHOOK_CONFIG: config }).stdout), { nri: 'connected' });
});

t.test('prints the status fields and nothing else: no byte of an env file, no control character', async (t) => {
  const root = hostRoot(t, true);
  put(
    root,
    sampleStatus({
      plugin: '50-envhook\u001b[2J',
      lastError: { at: '2026-11-26T10:01:00.000Z', message: 'volume "env": file "app.env": line 1: bad\nline \u0007' },
    }),
  );
  for (const args of [[], ['--json']]) {
    const r = status(root, args);
    t.equal(r.status, 0, r.stderr);
    t.notMatch(r.stdout + r.stderr, 'CANARY', `${args.join(' ') || 'human'}: nothing from the env file`);
    t.notMatch(r.stdout, /[\u0000-\u0009\u000b-\u001f\u007f]/, `${args.join(' ') || 'human'}: no control character`);
  }
  t.match(status(root).stdout, /^ {2}last error: 2026-11-26T10:01:00\.000Z volume "env": file "app\.env": line 1: bad line \\u0007$/m);
});

t.test('the human form, field by field', async (t) => {
  const s = sampleStatus({
    workerPid: 4242,
    pid: 4241,
    socket: undefined,
    counts: {
      registrations: 3,
      workerRestarts: 2,
      hangs: 1,
      adjusted: 120,
      empty: 3400,
      refused: 2,
      errors: 0,
      missed: 4,
      evicted: 4,
      evictionsFailed: 0,
      ownerRechowns: 17,
    },
    lastError: { at: '2026-11-26T10:04:00.000Z', message: 'NRI request timed out: worker replaced' },
  });
  const report: StatusReport = { ...EMPTY, installed: { containerd: ['shim', 'nri'] }, nri: 'connected', status: s };
  t.equal(
    renderReport(report, Date.parse('2026-11-26T12:05:03.000Z')),
    [
      'installed: containerd (shim, nri)',
      'nri plugin: 50-envhook connected since 2026-11-26T10:00:00.250Z (2h 5m ago)',
      '  runtime: containerd 2.1.9, NRI v0.8.0',
      "  connection: the runtime's (pre-installed plugin)",
      '  supervisor: pid 4241, started 2026-11-26T10:00:00.000Z, worker pid 4242',
      '  containers: 120 adjusted, 3400 without envhook, 2 refused, 0 errors, 4 missed, 4 evicted',
      '  registrations: 3, worker restarts: 2, hangs: 1, owner re-chowns: 17',
      '  last error: 2026-11-26T10:04:00.000Z NRI request timed out: worker replaced',
      '  updated: 2026-11-26T10:05:00.000Z',
      '',
    ].join('\n'),
  );
  t.match(
    renderReport({ ...report, status: { ...s, since: '2026-11-26T12:05:00.000Z' } }, Date.parse('2026-11-26T12:05:03.900Z')),
    '(3s ago)',
  );
  t.match(
    renderReport({ ...report, status: { ...s, since: '2026-11-23T12:05:00.000Z' } }, Date.parse('2026-11-26T12:05:03.000Z')),
    '(3d 0h ago)',
  );
  const owners = {
    pods: 2,
    volumes: 3,
    watches: 4,
    polled: 0,
    ownedBeforeSwap: 40,
    ownedAfterSwap: 3,
    refusedByKernel: 0,
    refusedByBound: 0,
  };
  t.match(
    renderReport({ ...report, status: { ...s, owners } }, 0),
    /^ {2}volume owners: 2 pods, 3 volumes watched \(4 inotify watches\); files owned 40 before the swap, 3 after it$/m,
    'the owner watcher',
  );
  t.match(
    renderReport({ ...report, status: { ...s, owners: { ...owners, polled: 1, refusedByKernel: 1, refusedByBound: 2 } } }, 0),
    /^ {2}volume owners: 2 pods, 3 volumes watched \(4 inotify watches, 1 volumes polled\); files owned 40 before the swap, 3 after it; watches refused: 1 by the kernel, 2 by envhook's bounds$/m,
    'polled volumes and refused watches, when there are some',
  );
  t.notMatch(renderReport(report, 0), 'volume owners', 'no line before a worker reported');
  t.match(
    renderReport({ ...report, status: { ...s, counts: { ...s.counts, evictionsFailed: 1 } } }, 0),
    /^ {2}containers: .*, 4 missed, 4 evicted \(1 evictions failed\)$/m,
    'failed evictions, when there are some',
  );
  const { evictionsFailed: _, ...older } = s.counts;
  t.match(
    renderReport({ ...report, status: { ...s, counts: older as typeof s.counts } }, 0),
    /, 4 missed, 4 evicted$/m,
    'a status an older envhook wrote, without the count',
  );
});

t.test('how the plugin runs: a DaemonSet is an install (exit 0 when connected), an external plugin is said so', async (t) => {
  // `kubectl exec` into the DaemonSet's pod: --root /, no state.json there, the status file in the run directory it mounts.
  const dir = t.testdir({ 'empty.json': '{}' });
  const rt = await startFakeRuntime({ runtime: { name: 'containerd', version: '2.1.9' } });
  t.teardown(() => rt.close());
  const cases = [
    { env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, installed: 'containerd (NRI plugin as a DaemonSet)', runsAs: 'daemonset' },
    { env: {}, installed: 'nothing', runsAs: 'external' },
  ];
  for (const c of cases) {
    const p = startNriProcess(['--socket', rt.socketPath], { dir, env: c.env });
    t.teardown(() => p.stop());
    await rt.nextPlugin();
    await p.waitForStatus((s) => s.connected);
    const args = ['--prefix', path.join(dir, 'prefix'), '--run-dir', p.runDir];
    const r = envhook(['status', '--root', '/', ...args], { env: { ENVHOOK_CONFIG: path.join(dir, 'empty.json') } });
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stderr, '');
    const lines = r.stdout.split('\n');
    t.equal(lines[0], `installed: ${c.installed}`);
    t.match(lines[1]!, /^nri plugin: 50-envhook connected since /);
    const runsAs = {
      daemonset: "  runs as: a DaemonSet: envhook nri in a pod, connected to the node's NRI socket",
      external: "  runs as: external: connects to the runtime's NRI socket (a service of the node's)",
    }[c.runsAs];
    t.ok(lines.includes(runsAs!), runsAs!);
    const j = JSON.parse(
      envhook(['status', '--json', '--root', '/', ...args], { env: { ENVHOOK_CONFIG: path.join(dir, 'empty.json') } }).stdout,
    );
    t.match(j, { runsAs: c.runsAs, ok: true, installed: c.runsAs === 'daemonset' ? { containerd: ['daemonset'] } : {} });
    t.equal(await p.stop(), 0);
  }
});

const C = CONTAINERD ? findContainerd(CONTAINERD) : undefined;
const noContainerd = { skip: C ? false : 'containerd not installed' };
const CONFIG = '/etc/containerd/config.toml';
/** A node's root with Debian's containerd in its /usr/bin (run there with chroot, as on the node). */
function containerdRoot(t: Test) {
  const r = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  addToRoot(r.root, { '/usr/bin/containerd': C!.path });
  return r;
}

t.test("the runtime's own reading: an admin's config without the handler is drift, exit 1, with what to do", noContainerd, async (t) => {
  const { root, source } = containerdRoot(t);
  t.equal(install({ runtime: 'containerd', root, source }).status, 0);
  let r = status(root);
  t.equal(r.status, 0, r.stderr);
  t.equal(
    r.stdout,
    [
      'installed: containerd (shim)',
      `  ok runtime: containerd ${C!.version} (/usr/bin/containerd)`,
      `  ok handler: containerd ${C!.version} config dump of ${CONFIG} shows the runtime handler "envhook" with BinaryName /usr/local/lib/envhook/envhook-runtime`,
      '',
    ].join('\n'),
  );
  // the admin writes the file anew, the handler lost
  fs.writeFileSync(path.join(root, CONFIG), 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs"\n');
  r = status(root);
  const what = `containerd ${C!.version} config dump of ${CONFIG}: no runtime handler "envhook"`;
  const todo = 're-run envhook install --runtime containerd with the flags it was installed with';
  refused(t, r, `envhook: handler: ${what} — ${todo}\n`);
  t.equal(r.stdout.split('\n')[2], `  problem handler: ${what} — ${todo}`);
  t.match(JSON.parse(status(root, ['--json']).stdout), {
    ok: false,
    checks: [
      { check: 'runtime', state: 'ok' },
      { check: 'handler', state: 'problem', what, todo },
    ],
  });
});

t.test(
  'two installs with different --prefix: the one left after the other is uninstalled is checked, not trusted',
  noContainerd,
  async (t) => {
    const { root, source } = containerdRoot(t);
    const [a, b] = ['/opt/envhook-a', '/opt/envhook-b'];
    t.equal(install({ runtime: 'containerd', root, source, extra: ['--prefix', a] }).status, 0);
    const second = install({ runtime: 'containerd', root, source, extra: ['--prefix', b] });
    if (second.status !== 0) {
      // install refuses a second prefix: the first stays as it was
      t.match(second.stderr, a, 'install names the first prefix');
      t.equal(status(root, ['--prefix', a]).status, 0);
      return;
    }
    // the second took the block over: the first's handler now runs the second's front
    let r = status(root, ['--prefix', a]);
    refused(
      t,
      r,
      `envhook: handler: containerd ${C!.version} config dump of ${CONFIG}: options.BinaryName is not ${a}/envhook-runtime — re-run envhook install --runtime containerd --prefix ${a} with the flags it was installed with\n`,
    );
    t.equal(uninstall({ runtime: 'containerd', root, extra: ['--prefix', a] }).status, 0);
    r = status(root, ['--prefix', b]);
    refused(
      t,
      r,
      `envhook: handler: containerd ${C!.version} config dump of ${CONFIG}: no runtime handler "envhook" — re-run envhook install --runtime containerd --prefix ${b} with the flags it was installed with\n`,
      'the block went with the first uninstall',
    );
    t.match(r.stdout, /^installed: containerd \(shim\)$/m);
  },
);

t.test("the runtime's own binary missing: a problem, and the reading it would give not claimed", async (t) => {
  const root = hostRoot(t, true);
  fs.rmSync(crioOf(root));
  const r = status(root);
  const missing = 'no crio under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin';
  t.equal(r.status, 1);
  t.equal(r.stdout.split('\n')[1], `  problem runtime: crio: ${missing} — install crio, or check --root (it is the node's root: ${root})`);
  t.equal(r.stdout.split('\n')[2], `  skipped nri-plugin: crio: not checked with the runtime's own reading: ${missing}`);
});

t.test('the binary install was named (--crio) is recorded: status asks it again when not named, and says so', async (t) => {
  const { root, source } = installRoot(t, {});
  fs.symlinkSync('/proc', path.join(root, 'proc'));
  withCrio(root);
  const r = install({ runtime: 'crio', root, source, extra: ['--mode', 'nri', '--crio', crioOf(root)], env: NO_CRIO });
  t.equal(r.status, 0, r.stderr);
  const plain = envhook(['status', '--root', root], { env: { ENVHOOK_CONFIG: '' } });
  t.equal(
    plain.stdout.split('\n')[1],
    `  ok runtime: crio 1.36.3 (${crioOf(root)}, named by --crio at install)`,
    'no --crio: the recorded one',
  );
  t.equal(plain.stdout.split('\n')[2], '  ok nri-plugin: crio config shows NRI on, with plugins from /opt/nri/plugins');
  t.equal(status(root).stdout.split('\n')[1], `  ok runtime: crio 1.36.3 (${crioOf(root)}, named by --crio)`, "this command's flag wins");
  fs.rmSync(crioOf(root));
  const gone = envhook(['status', '--root', root], { env: { ENVHOOK_CONFIG: '' } });
  t.equal(gone.status, 1);
  t.match(
    gone.stdout.split('\n')[1],
    /^ {2}problem runtime: crio: --crio \S+: cannot run it: no such file or directory \(ENOENT\) \(the binary install was named, recorded in its state\) — name the runtime's binary with --crio \(this command's wins\), or re-run envhook install with the flags it was installed with$/,
  );
});
