// The budgets of owned copies on the shim's path: the sh front before real runc, `create` of a
// pod's container whose volumes with owners would pass a budget set in the environment, or need
// more room than the run directory (a tmpfs, as /run is; 64 KiB) has. The create fails with envhook's one line
// on stderr (and in runc's --log, which containerd reports), exit 1, config.json unchanged,
// nothing of the copies written; within the budgets the container reads its owned copies. No
// value of a file in any line.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { containerId, makeBundle, missingForRunc, RUNC } from '../helpers/bundle.ts';
import { envhookWrapper, FRONT } from '../helpers/shim/front.ts';
import { sharedRootfs } from '../helpers/shim/inject.ts';
import { tinyTmpfs } from '../helpers/mirror/start.ts';
import { makePod, rawAnnotations } from '../../scripts/kubelet-pod.ts';

const CANARY = 'CANARY-budgets-runc-2e9b';
const missing = missingForRunc();
type Run = { status: number | null; stdout: string; stderr: string };

function payload(files: number, bytes: number) {
  const out: Record<string, { data: string; mode: number }> = {};
  for (let i = 0; i < files; i++) out[`k${i}`] = { data: `${CANARY}-${i}-`.padEnd(bytes, 'x'), mode: 0o400 };
  return out;
}

function harness(t: Test, volumes: Record<string, ReturnType<typeof payload>>, env: Record<string, string>, runDir: string) {
  const dir = t.testdir({});
  const pod = makePod(path.join(dir, 'kubelet'), {
    atomic: Object.entries(volumes).map(([name, p]) => ({ plugin: 'secret' as const, name, payload: p })),
  });
  const names = Object.keys(volumes);
  const bundle = makeBundle(path.join(dir, 'bundle'), sharedRootfs(), {
    args: ['cat', ...names.map((v) => `/${v}/k0`)],
    user: { uid: 1000, gid: 1000 },
    mounts: [
      ...pod.mounts('app'),
      ...names.map((v) => ({
        destination: `/${v}`,
        source: path.join(pod.dir, 'volumes/kubernetes.io~secret', v),
        options: ['rbind', 'ro'],
      })),
    ],
    annotations: {
      ...pod.annotations('app'),
      ...rawAnnotations({ 'envhook.io/volumeOwners': names.map((volume) => ({ volume, defaultUser: 1000 })) }),
    },
  });
  fs.writeFileSync(path.join(dir, 'envhook.json'), '{}');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-runc-'));
  const ids: string[] = [];
  const full = {
    ...process.env,
    ENVHOOK_CONFIG: path.join(dir, 'envhook.json'),
    ENVHOOK_BIN: envhookWrapper(path.join(dir, 'bin')),
    ENVHOOK_RUNTIME: RUNC!,
    ENVHOOK_KUBELET_ROOT: pod.kubeletRoot,
    ENVHOOK_RUN_DIR: runDir,
    ...env,
  };
  t.teardown(() => {
    for (const id of ids) spawnSync(RUNC!, ['--root', root, 'delete', '--force', id]);
    fs.rmSync(root, { recursive: true, force: true });
  });
  const front = (a: string[]) => spawnSync(FRONT, ['--root', root, ...a], { encoding: 'utf8', env: full, timeout: 60_000 }) as Run;
  const id = () => {
    const i = containerId('envhook-budget');
    ids.push(i);
    return i;
  };
  return { dir, pod, bundle, config: path.join(bundle, 'config.json'), front, id, copies: path.join(runDir, 'volumes', pod.uid) };
}

t.test("create through the front over one pod's files budget: one line, nothing written", { skip: missing }, async (t) => {
  const h = harness(t, { a: payload(2, 30), b: payload(2, 30) }, { ENVHOOK_POD_COPY_FILES: '3' }, tinyTmpfs(t, '1m'));
  const before = fs.readFileSync(h.config, 'utf8');
  const log = path.join(h.dir, 'runc-log.json');
  const r = h.front(['--log', log, 'create', '-b', h.bundle, h.id()]);
  const line =
    `envhook: volume "b" of pod ${h.pod.uid}: the pod's owned copies would hold 4 files, over the pod's budget of 3 files (podCopyFiles): ` +
    'give the pod fewer files in its volumes with owners, or raise podCopyFiles in the settings file (ENVHOOK_POD_COPY_FILES)';
  t.equal(r.status, 1);
  t.equal(r.stderr, line + '\n', 'one line on stderr');
  t.match(fs.readFileSync(log, 'utf8'), `level=error msg="envhook: volume \\"b\\" of pod ${h.pod.uid}: `, "runc's --log has the error");
  t.equal(fs.readFileSync(h.config, 'utf8'), before, 'config.json unchanged');
  t.notOk(fs.existsSync(h.copies), 'no copy written');
  t.notMatch(r.stdout + r.stderr + fs.readFileSync(log, 'utf8'), CANARY);
});

t.test('within the budgets: the container reads its owned copies', { skip: missing }, async (t) => {
  const h = harness(t, { a: payload(2, 30), b: payload(2, 30) }, { ENVHOOK_POD_COPY_FILES: '4' }, tinyTmpfs(t, '1m'));
  const r = h.front(['run', '-b', h.bundle, h.id()]);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, `${CANARY}-0-`.padEnd(30, 'x').repeat(2), 'PID 1 (UID 1000) read both copies');
  t.same(fs.readdirSync(h.copies).sort(), ['a', 'b']);
});

t.test('the run directory too small for the whole start (a 64 KiB tmpfs): refused before the first write', { skip: missing }, async (t) => {
  const runDir = tinyTmpfs(t, '64k');
  // A node budget above the tmpfs (by default it is a quarter of it: the next test).
  const h = harness(t, { a: payload(1, 30_000), b: payload(1, 40_000) }, { ENVHOOK_NODE_COPY_BYTES: '1000000' }, runDir);
  const before = fs.readFileSync(h.config, 'utf8');
  const r = h.front(['create', '-b', h.bundle, h.id()]);
  t.equal(r.status, 1);
  t.match(
    r.stderr,
    new RegExp(
      `^envhook: volume "a" of pod ${h.pod.uid}: the run directory ${runDir} has [0-9.]+ KiB free, the pod's owned copies need 72 KiB: ` +
        'free space there \\(or mount a larger tmpfs\\), or give the pod smaller volumes with owners\\n$',
    ),
  );
  t.equal(fs.readFileSync(h.config, 'utf8'), before, 'config.json unchanged');
  t.notOk(fs.existsSync(h.copies), 'no copy written');
  t.notMatch(r.stderr, CANARY);
});

t.test("the node's budget by default, a quarter of the run directory's file system (16 KiB of 64 KiB)", { skip: missing }, async (t) => {
  const h = harness(t, { a: payload(1, 30_000) }, {}, tinyTmpfs(t, '64k'));
  const r = h.front(['create', '-b', h.bundle, h.id()]);
  t.equal(r.status, 1);
  t.equal(
    r.stderr,
    `envhook: volume "a" of pod ${h.pod.uid}: the node's owned copies would hold 29.3 KiB, over the node's budget of 16 KiB ` +
      '(nodeCopyBytes, by default a quarter of the run directory): the node holds too many owned copies already; ' +
      'raise nodeCopyBytes in the settings file (ENVHOOK_NODE_COPY_BYTES) if its run directory has room\n',
  );
  t.notOk(fs.existsSync(h.copies), 'no copy written');
});
