// KEP-5936 owners end to end with real runc: the process runs as UID 1000 with no capabilities
// and noNewPrivileges; the secret volume is bind-mounted read-only; its files are 0400 root.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { envhook, makeBundle, makeRootfs, missingForRunc, runcRun } from '../helpers/bundle.ts';
import { otherUidDir } from '../helpers/other-uid.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';
import { makeAtomicVolume } from '../../scripts/kubelet-pod.ts';
import { refused } from '../helpers/refusal.ts';

const USERNS = [{ containerID: 0, hostID: 100000, size: 65536 }];
const SCRIPT =
  'for f in /keys/ssh_host_ed25519_key /keys/mongo/keyfile; do echo "$f owner=$(stat -L -c %u $f)"; cat $f && echo " read"; done; cat /proc/self/uid_map; true';

interface Case {
  owners?: unknown;
  userns?: boolean;
}

function setup(t: Test, c: Case) {
  // In a user namespace runc's init runs as the mapped root (UID 100000 on the host), which must
  // walk down to the rootfs and the mount sources: not under the repository, which may sit in a
  // directory only root can enter.
  const dir = otherUidDir(t, 'ownership-runc');
  fs.mkdirSync(path.join(dir, 'outside'));
  fs.writeFileSync(path.join(dir, 'outside/root-only'), 'outside');
  const rootfs = makeRootfs(path.join(dir, 'rootfs'));
  // As containerd does for a user-namespaced container without idmapped mounts: the image is
  // owned by the mapped root, so runc (as that root) can create mount points in it.
  if (c.userns) chownTree(rootfs, USERNS[0]!.hostID);
  const pod = makePod(path.join(dir, 'kubelet'));
  const vol = makeAtomicVolume(pod, 'secret', 'keys', {
    ssh_host_ed25519_key: { data: 'HOSTKEY', mode: 0o400 },
    'mongo/keyfile': { data: 'MONGOKEY', mode: 0o400 },
  });
  const ts = path.join(vol, fs.readlinkSync(path.join(vol, '..data')));
  const annotations = pod.annotations('app');
  if (c.owners !== undefined) annotations['envhook.io/volumeOwners'] = JSON.stringify(c.owners);
  const bundle = makeBundle(path.join(dir, 'bundle'), rootfs, {
    args: ['sh', '-c', SCRIPT],
    user: { uid: 1000, gid: 1000 },
    annotations,
    mounts: [...pod.mounts('app'), { destination: '/keys', source: vol, options: ['rbind', 'ro'] }],
    edit: (spec) => {
      spec.process.capabilities = { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] };
      spec.process.noNewPrivileges = true;
      if (c.userns) {
        spec.linux.namespaces.push({ type: 'user' });
        spec.linux.uidMappings = USERNS;
        spec.linux.gidMappings = USERNS;
      }
    },
  });
  return { dir, pod, vol, ts, bundle, outside: path.join(dir, 'outside/root-only') };
}

function start(t: Test, s: ReturnType<typeof setup>, inject = true) {
  if (inject) {
    const r = envhook(['inject', '--bundle', s.bundle, '--kubelet-root', s.pod.kubeletRoot]);
    t.equal(r.stderr, '', 'inject succeeds');
  }
  const run = runcRun(s.bundle, path.join(s.dir, 'runc-root'));
  t.equal(run.status, 0, run.stderr);
  return run.stdout + run.stderr;
}

function chownTree(dir: string, id: number): void {
  fs.lchownSync(dir, id, id);
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) fs.lchownSync(path.join(e.parentPath, e.name), id, id);
}

const uid = (p: string) => fs.lstatSync(p).uid;
const missing = missingForRunc();

t.test('real runc, UID 1000, no capabilities, read-only volume', { skip: missing }, async (t) => {
  t.test('without envhook the files cannot be read', async (t) => {
    const s = setup(t, {});
    const out = start(t, s, false);
    t.match(out, '/keys/ssh_host_ed25519_key owner=0\n');
    t.match(out, "cat: can't open '/keys/ssh_host_ed25519_key': Permission denied");
    t.match(out, "cat: can't open '/keys/mongo/keyfile': Permission denied");
    t.notMatch(out, 'HOSTKEY');
    t.notMatch(out, 'MONGOKEY');
  });
  t.test('defaultUser 1000: readable; an item with user 1001 is not', async (t) => {
    const s = setup(t, { owners: [{ volume: 'keys', defaultUser: 1000, items: [{ path: 'mongo/keyfile', user: 1001 }] }] });
    const out = start(t, s);
    t.match(out, '/keys/ssh_host_ed25519_key owner=1000\nHOSTKEY read\n');
    t.match(out, '/keys/mongo/keyfile owner=1001\n');
    t.match(out, "cat: can't open '/keys/mongo/keyfile': Permission denied");
    t.notMatch(out, 'MONGOKEY');
    t.same([uid(path.join(s.ts, 'ssh_host_ed25519_key')), uid(path.join(s.ts, 'mongo/keyfile'))], [1000, 1001]);
    t.equal(fs.lstatSync(path.join(s.ts, 'mongo/keyfile')).gid, 0, 'group untouched');
  });
  t.test('defaultUser 0 keeps root', async (t) => {
    const s = setup(t, { owners: [{ volume: 'keys', defaultUser: 0 }] });
    const out = start(t, s);
    t.match(out, '/keys/ssh_host_ed25519_key owner=0\n');
    t.match(out, "cat: can't open '/keys/ssh_host_ed25519_key': Permission denied");
    t.notMatch(out, 'HOSTKEY');
  });
  t.test('hostile volume: a planted symlink to an outside root file is not followed', async (t) => {
    const s = setup(t, { owners: [{ volume: 'keys', defaultUser: 1000 }] });
    fs.symlinkSync(s.outside, path.join(s.ts, 'planted'));
    fs.symlinkSync(s.outside, path.join(s.vol, 'planted-visible'));
    const out = start(t, s);
    t.match(out, 'HOSTKEY read');
    t.equal(uid(s.outside), 0, 'the outside file keeps its owner');
  });
  t.test("'..' in an item path is rejected; config.json untouched", async (t) => {
    const s = setup(t, { owners: [{ volume: 'keys', items: [{ path: '../../../../outside/root-only', user: 1000 }] }] });
    const before = fs.readFileSync(path.join(s.bundle, 'config.json'), 'utf8');
    t.equal(
      envhook(['inject', '--bundle', s.bundle, '--kubelet-root', s.pod.kubeletRoot]).stderr,
      `envhook: annotation "envhook.io/volumeOwners": /0/items/0/path: path must not contain '..'\n`,
    );
    t.equal(fs.readFileSync(path.join(s.bundle, 'config.json'), 'utf8'), before);
    t.equal(uid(s.outside), 0);
  });
});

t.test('real runc in a user namespace (0 → 100000, size 65536)', { skip: missing }, async (t) => {
  t.test('files on disk get 101000; the container sees and reads them as 1000', async (t) => {
    const s = setup(t, { owners: [{ volume: 'keys', defaultUser: 1000 }], userns: true });
    const out = start(t, s);
    t.match(out, /^\s*0\s+100000\s+65536$/m, 'really in the user namespace');
    t.match(out, '/keys/ssh_host_ed25519_key owner=1000\nHOSTKEY read\n');
    t.equal(uid(path.join(s.ts, 'ssh_host_ed25519_key')), 101000);
  });
  t.test('a UID outside the mapping fails the start with a clear error', async (t) => {
    const s = setup(t, { owners: [{ volume: 'keys', defaultUser: 70000 }], userns: true });
    const r = envhook(['inject', '--bundle', s.bundle, '--kubelet-root', s.pod.kubeletRoot]);
    refused(
      t,
      r,
      `envhook: volume "keys": defaultUser 70000 is outside the container's user namespace (linux.uidMappings: 0-65535 → 100000-165535)\n`,
    );
    t.equal(uid(path.join(s.ts, 'ssh_host_ed25519_key')), 0);
  });
});
