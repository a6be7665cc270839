// CRI-O runs the runtime through conmon, which passes on only monitor_env and PATH: settings in
// CRI-O's environment or unit never reach the front. install therefore writes them into
// /etc/envhook/config.json (--kubelet-root, --log-file), and this test runs what install put on
// the node as conmon would: the installed front, from a temporary root, under `env -i` (PATH is
// the shell's default), in a private mount namespace whose /etc shows the installed
// /etc/envhook over this machine's /etc (an overlay; nothing outside the namespace changes).
// The container gets its variables from a pod under a non-default kubelet root; without the
// file, the same start fails as the report describes. CRI-O itself is not installable here: the
// check after install runs the `crio` double (test/helpers/install/crio.ts).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { containerId, makeBundle, missingForRunc, parseEnvOutput } from '../helpers/bundle.ts';
import { install, realSource, snapshot, uninstall } from '../helpers/install/install.ts';
import { crioDouble } from '../helpers/install/crio.ts';
import { sharedRootfs } from '../helpers/shim/inject.ts';
import { CANARY, checkInjected, ENV_ANNOTATIONS, FILES, raw } from '../helpers/shim/injected.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';

const missing = missingForRunc() ?? (spawnSync('unshare', ['--help']).status === 0 ? undefined : 'unshare (util-linux) not installed');
const FRONT = 'usr/local/lib/envhook/envhook-runtime';
const RUNC_NODE =
  '[crio.runtime]\ndefault_runtime = "runc"\n\n[crio.runtime.runtimes.runc]\nruntime_path = ""\nruntime_type = "oci"\nruntime_root = "/run/runc"\n';
// mount the overlay, then run the rest with an empty environment
const SCRIPT =
  'etc=$1; shift; mount --make-rprivate / && mount -t overlay envhook-etc -o "lowerdir=$etc:/etc" /etc || exit 1; exec env -i "$@"';

t.test(
  'the installed front finds the settings install wrote, with an empty environment (as under conmon)',
  { skip: missing },
  async (t) => {
    const dir = fs.mkdtempSync('/tmp/envhook-icrio-');
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
    const root = path.join(dir, 'root');
    // a CRI-O node that runs runc (CRI-O 1.31 and later default to crun, which this machine lacks)
    fs.mkdirSync(path.join(root, 'etc/crio'), { recursive: true });
    fs.writeFileSync(path.join(root, 'etc/crio/crio.conf'), RUNC_NODE);
    const original = snapshot(root);
    // a node whose kubelet runs with --root-dir elsewhere: the pod is not under /var/lib/kubelet
    const pod = makePod(path.join(dir, 'data/kubelet'), { emptyDirs: { config: FILES } });
    const log = path.join(dir, 'envhook.log');
    const r = install({
      runtime: 'crio',
      root,
      source: realSource(),
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
      extra: ['--kubelet-root', pod.kubeletRoot, '--log-file', log, '--log-level', 'debug', '--crio', crioDouble(dir).bin],
    });
    t.equal(r.status, 0, r.stderr);
    t.match(
      r.stdout,
      `\nchecked: crio config shows the runtime handler "envhook" with runtime_path /${FRONT}\n`,
      'the check, with the crio double',
    );
    t.same(JSON.parse(fs.readFileSync(path.join(root, 'etc/envhook/config.json'), 'utf8')), {
      kubeletRoot: pod.kubeletRoot,
      logFile: log,
      logLevel: 'debug',
    });

    const bundleAt = (name: string) =>
      makeBundle(path.join(dir, name), sharedRootfs(), {
        mounts: pod.mounts('app'),
        annotations: { ...pod.annotations('app', 'crio'), ...raw(ENV_ANNOTATIONS) },
      });
    const runcRoot = path.join(dir, 'runc');
    const start = (etc: string, bundle: string) =>
      spawnSync(
        'unshare',
        [
          '-m',
          'sh',
          '-c',
          SCRIPT,
          'sh',
          etc,
          path.join(root, FRONT),
          '--root',
          runcRoot,
          'run',
          '--bundle',
          bundle,
          containerId('envhook-icrio'),
        ],
        { encoding: 'utf8', timeout: 120_000 },
      );

    const ok = start(path.join(root, 'etc'), bundleAt('bundle'));
    t.equal(ok.status, 0, ok.stderr);
    checkInjected(t, parseEnvOutput(ok.stdout));
    const logText = fs.readFileSync(log, 'utf8');
    t.match(logText, /"msg":"applied; runtime next"/, 'logged where the file says');
    t.notMatch(logText, new RegExp(`HELLO|${CANARY}`), 'no value in the log');

    // the same start without the file (an empty /etc/envhook over /etc): the default kubelet root
    const emptyEtc = path.join(dir, 'empty-etc');
    fs.mkdirSync(path.join(emptyEtc, 'envhook'), { recursive: true });
    const second = bundleAt('bundle-2');
    const before = fs.readFileSync(path.join(second, 'config.json'));
    const bad = start(emptyEtc, second);
    t.not(bad.status, 0);
    t.match(bad.stderr, /^envhook: volume "config" not found: no pod directory/m, 'without the file: the failure of the report');
    t.ok(fs.readFileSync(path.join(second, 'config.json')).equals(before), 'config.json untouched by the failure');

    const un = uninstall({ runtime: 'crio', root });
    t.equal(un.status, 0, un.stderr);
    t.same(snapshot(root), original, 'uninstall restores every file byte for byte');
  },
);
