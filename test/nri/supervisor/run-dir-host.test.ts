// The run directory at its host path: mountinfo as a DaemonSet's pod sees it (its own table, and
// the host's as PID 1's with hostPID), the cases a careful admin writes and the one that broke
// every pod with owners; then the refusal as `envhook nri` prints it, with a real bind mount in a
// private mount namespace.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { builtCli, NODE, whichSync } from '../../helpers/bundle.ts';
import { untapped } from '../../helpers/untapped.ts';
import { refused } from '../../helpers/refusal.ts';
import { hostMismatch, mountOf, parseMountinfo, type MountEntry } from '../../../src/nri/supervisor/run-dir-host.ts';

const line = (id: number, dev: string, root: string, at: string, fs = 'tmpfs') => `${id} 1 ${dev} ${root} ${at} rw,nosuid - ${fs} ${fs} rw`;
// The host: / on a disk, /run a tmpfs, containerd's task directory with a container's root file system.
const HOST = parseMountinfo(
  [
    line(20, '254:1', '/', '/', 'ext4'),
    line(21, '0:25', '/', '/run'),
    line(22, '0:70', '/', '/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs', 'overlay'),
  ].join('\n'),
);
/** The pod's table: its overlay root and the hostPath mounts given. */
const pod = (...mounts: string[]) => parseMountinfo([line(600, '0:70', '/', '/', 'overlay'), ...mounts].join('\n'));

t.test('parseMountinfo: device, root and mount point, octal escapes undone', async (t) => {
  t.same(parseMountinfo(`${line(30, '0:25', '/a\\040b', '/mnt/x\\040y')}\n`), [{ dev: '0:25', root: '/a b', mountPoint: '/mnt/x y' }]);
});

t.test('mountOf: the deepest mount point holding the path, the last of equal ones', async (t) => {
  const m: MountEntry[] = [
    { dev: '1', root: '/', mountPoint: '/' },
    { dev: '2', root: '/', mountPoint: '/run' },
    { dev: '3', root: '/', mountPoint: '/run' },
  ];
  t.equal(mountOf(m, '/run/envhook')?.dev, '3');
  t.equal(mountOf(m, '/runner')?.dev, '1', '/runner is not under /run');
});

t.test('with the host PID namespace: the host paths of the directory must include its own', async (t) => {
  // the chart's DaemonSet: hostPath /run/envhook at mountPath /run/envhook
  t.equal(hostMismatch('/run/envhook', pod(line(601, '0:25', '/envhook', '/run/envhook')), HOST), undefined);
  // the DaemonSet that broke every pod with owners: hostPath /run/envhook-nri at mountPath /run/envhook
  t.equal(
    hostMismatch('/run/envhook', pod(line(601, '0:25', '/envhook-nri', '/run/envhook')), HOST),
    'the host has this directory at /run/envhook-nri',
  );
  // on the disk, elsewhere: hostPath /var/lib/envhook
  t.equal(
    hostMismatch('/run/envhook', pod(line(601, '254:1', '/var/lib/envhook', '/run/envhook', 'ext4')), HOST),
    'the host has this directory at /var/lib/envhook',
  );
  // no hostPath at all: the directory is in the container's own root
  t.equal(
    hostMismatch('/run/envhook', pod(), HOST),
    'the host has this directory at /run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs/run/envhook',
  );
  // a file system the host does not mount (an emptyDir's tmpfs made for the pod and since unmounted there)
  t.equal(
    hostMismatch('/run/envhook', pod(line(601, '0:99', '/', '/run/envhook')), HOST),
    'the host mounts no file system of this directory',
  );
  // the host's /run mounted whole at /run: its envhook is /run/envhook on both sides
  t.equal(hostMismatch('/run/envhook', pod(line(601, '0:25', '/', '/run')), HOST), undefined);
  // …and mounted at /host/run: not where the runtime looks
  t.equal(hostMismatch('/host/run/envhook', pod(line(601, '0:25', '/', '/host/run')), HOST), 'the host has this directory at /run/envhook');
});

t.test("without another view of the host: the directory's path in its file system must end its path", async (t) => {
  t.equal(hostMismatch('/run/envhook', HOST, undefined), undefined, 'on the node: /run/envhook on the /run tmpfs');
  t.equal(hostMismatch('/run/envhook', pod(line(601, '0:25', '/envhook', '/run/envhook')), undefined), undefined);
  t.equal(
    hostMismatch('/run/envhook', pod(line(601, '0:25', '/envhook-nri', '/run/envhook')), undefined),
    'this directory is /envhook-nri of its file system, mounted at another path',
  );
});

const UNSHARE = whichSync('unshare');
t.test(
  'envhook nri refuses a run directory bind-mounted from another path: one line naming --run-dir, exit 1',
  { skip: process.getuid?.() !== 0 ? 'needs root (mount)' : !UNSHARE ? 'unshare not installed (util-linux)' : false },
  async (t) => {
    const dir = t.testdir({ elsewhere: {}, run: {} });
    const [elsewhere, run] = [path.join(dir, 'elsewhere'), path.join(dir, 'run')];
    fs.chmodSync(elsewhere, 0o755);
    // In a private mount namespace, PID 1's table (this machine's) is another than envhook's.
    const [cmd, argv] = untapped(NODE, [builtCli(), 'nri', '--run-dir', run, '--socket', '/nonexistent/nri.sock']);
    const script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"';
    const r = spawnSync(UNSHARE!, ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', elsewhere, run, cmd, ...argv], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    refused(
      t,
      r,
      `envhook: --run-dir ${run}: the host has this directory at ${elsewhere}, and the runtime mounts owned copies from the run directory by its path on the host: mount the host's ${run} at that same path (a DaemonSet's hostPath and mountPath equal, as the chart's runDir makes them), or set --run-dir to the host's path\n`,
    );
    t.equal(r.stdout, '', 'nothing on stdout');
    t.same(fs.readdirSync(elsewhere), [], 'nothing written: no status file');
  },
);
