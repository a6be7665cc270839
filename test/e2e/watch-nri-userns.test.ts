// A pod in a user namespace (`hostUsers: false`) with `envhook.io/volumeOwners`, through the
// resident NRI plugin on a real containerd 2.1.9, driven over CRI as the kubelet drives it: the
// kubelet gives every mount the pod's ID mappings and containerd idmaps it, which NRI's Mount
// cannot carry. An owned copy would replace the idmapped mount by a plain one, and the container
// would see the copy's files as the overflow UID (65534), unreadable for UID 1000 (what envhook
// did before it read the container's user namespace from NRI). So such a volume keeps the
// kubelet's idmapped mount and is chowned in place with the container UID as is: inside, the
// file is owned by 1000 and readable, at the start and after a kubelet rewrite.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { missingForCri, NRI_CONNECTED, prepareCriContainerd } from '../helpers/cri/containerd.ts';
import { runPod } from '../helpers/cri/pod.ts';
import { startNriProcess } from '../helpers/nri/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { CNI_STUB_FILES, makeCniStubExecutable } from '../helpers/cri/cni-stub.ts';
import { idmapRunc } from '../helpers/cri/idmap-runc.ts';
import { atomicVolumeDir, atomicWrite } from '../../scripts/kubelet-pod.ts';

const CANARY = 'CANARY-userns-nri-77e1';
const USERNS = { hostId: 131072, containerId: 0, length: 65536 };
const found = idmapRunc();

t.setTimeout(300_000);
t.test(
  'containerd 2.1 + envhook nri: a user-namespaced pod reads its owned volume through the idmapped mount, owned by 1000, after a rewrite too',
  { skip: missingForCri('2.1') ?? ('skip' in found ? found.skip : undefined) },
  async (t) => {
    const dir = t.testdir();
    const c = prepareCriContainerd({ version: '2.1', nri: true, files: CNI_STUB_FILES, runc: 'runc' in found ? found.runc : undefined });
    makeCniStubExecutable(c.dir);
    fs.chmodSync(c.dir, 0o711); // the container's mapped root walks to its bundle
    let stopped = false;
    t.teardown(async () => {
      if (!stopped) await c.stop();
    });
    await c.start();
    const kubeletRoot = path.join(c.dir, 'kubelet');
    const from = fs.readFileSync(c.paths.log, 'utf8').length;
    const runDir = path.join(dir, 'run');
    const plugin = startNriProcess(['--socket', c.paths.nriSocket, '--kubelet-root', kubeletRoot], {
      dir,
      env: { ENVHOOK_RUN_DIR: runDir },
    });
    t.teardown(() => plugin.stop());
    await waitFor(() => NRI_CONNECTED.test(fs.readFileSync(c.paths.log, 'utf8').slice(from)), 60_000, 'containerd: plugin connected');

    const pod = await runPod(c, kubeletRoot, {
      name: `userns-nri-${process.pid}`,
      handler: '',
      userns: USERNS,
      annotations: { 'envhook.io/volumeOwners': JSON.stringify([{ volume: 'keys', defaultUser: 1000 }]) },
      secrets: { keys: { key: { data: `${CANARY}-0\n`, mode: 0o400 } } },
    });
    const id = await pod.run({ name: 'app', command: ['sleep', '3600'], volumeMounts: { keys: '/keys' }, user: 1000 });
    const pid = await pod.pid(id);
    t.equal(
      fs.readFileSync(`/proc/${pid}/uid_map`, 'utf8').trim().split(/\s+/).join(' '),
      '0 131072 65536',
      'the container is in the pod user namespace',
    );
    const vol = atomicVolumeDir(pod.pod, 'secret', 'keys');
    const mount = fs
      .readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[4] === '/keys');
    t.equal(mount?.[3], vol, "/keys is still the kubelet's volume (no owned copy)");
    t.match(mount?.[5], /(^|,)idmapped(,|$)/, 'and still idmapped');
    t.notOk(fs.existsSync(path.join(runDir, 'volumes', pod.uid, 'keys')), 'no owned copy was made');

    // Inside the container, as its user (ExecSync runs as the container's UID 1000).
    const inside = async () => {
      const r = await pod.execSync(id, ['sh', '-c', 'stat -L -c %u /keys/key && cat /keys/key']);
      return `${r.exitCode} ${r.stdout}${r.stderr}`;
    };
    t.equal(await inside(), `0 1000\n${CANARY}-0\n`, 'inside: the file is owned by 1000 and UID 1000 reads it');
    t.equal(fs.lstatSync(path.join(vol, '..data/key')).uid, 1000, 'on disk the container UID as is (the idmapped mount maps it)');

    atomicWrite(vol, { key: { data: `${CANARY}-1\n`, mode: 0o400 } });
    await waitFor(() => fs.lstatSync(path.join(vol, '..data/key')).uid === 1000, 10_000, 'the rewrite chowned in place');
    t.equal(await inside(), `0 1000\n${CANARY}-1\n`, 'after a kubelet rewrite: the new file, owned by 1000, read by UID 1000');

    await pod.remove();
    t.notMatch(plugin.log(), CANARY, 'no file content in the log');
    t.equal(await plugin.stop(), 0);
    stopped = true;
    t.same(await c.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
  },
);
