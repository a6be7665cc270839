// Concurrency: 64 containers of one pod start at once (64 real `envhook inject` processes on
// 64 bundles), sharing the pod's emptyDir (read) and secret volume (mounted by every container:
// inject chowns it in place, each shim create writes the volume's owned copy and swaps it in, 64
// at once on one copy).
// Every start must be correct — its own variables, the shared ones, the owners — and none may
// interfere with another: no lost or crossed variables, no temporary file left, volumes intact.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makePod } from '../../scripts/kubelet-pod.ts';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { CLI, FRONT, NODE24, runAsync, snapshot, tempFiles, type CliResult } from './helpers.ts';

t.setTimeout(300_000);

const N = 64;

type Start = (bundle: string, kubeletRoot: string, i: number) => Promise<CliResult>;

/** The owners records of `root`'s test: never the host's /run/envhook. */
const runDir = (root: string) => path.join(root, 'run');

function viaInject(root: string): Start {
  return (b, kubeletRoot) =>
    runAsync(NODE24, [CLI, 'inject', '--bundle', b, '--kubelet-root', kubeletRoot], {
      env: { ...process.env, ENVHOOK_RUN_DIR: runDir(root) },
      timeoutMs: 120_000,
    });
}

/** containerd's create through the sh front; the fake real runtime records that it ran. */
function viaShim(root: string): Start {
  const runtime = path.join(root, 'bin/runc');
  fs.mkdirSync(path.dirname(runtime), { recursive: true });
  fs.writeFileSync(runtime, '#!/bin/sh\nwhile [ $# -gt 1 ]; do shift; done\n: > "$PWD/ran-$1"\n', { mode: 0o755 });
  return (b, kubeletRoot, i) =>
    runAsync(
      '/bin/sh',
      ['-c', `cd '${root}' && exec /bin/sh '${FRONT}' --log '${b}/log.json' --log-format json create --bundle '${b}' c${i}`],
      {
        env: { PATH: process.env.PATH, ENVHOOK_RUNTIME: runtime, ENVHOOK_KUBELET_ROOT: kubeletRoot, ENVHOOK_RUN_DIR: runDir(root) },
        timeoutMs: 120_000,
      },
    );
}

for (const [how, startOf] of [
  ['envhook inject', viaInject],
  ['the runtime shim front', viaShim],
] as [string, (root: string) => Start][]) {
  t.test(`${N} concurrent starts of one pod's containers on distinct bundles, through ${how}`, async (t) => {
    const root = t.testdir({});
    const start1 = startOf(root);
    const files: Record<string, string> = { 'shared.env': "S='shared value'\n" };
    for (let i = 0; i < N; i++) files[`own/c${i}.env`] = `O='own value of c${i}'\n`;
    const pod = makePod(path.join(root, 'kubelet'), { emptyDirs: { cfg: files } });
    const secret = path.join(pod.dir, 'volumes/kubernetes.io~secret/keys');
    const ts = atomicWrite(secret, { ssh_host_key: 'KEY', 'ssh_host_key.pub': 'PUB' });
    const copy = path.join(runDir(root), 'volumes', pod.uid, 'keys');
    const viaCopy = how !== 'envhook inject'; // inject points no mount elsewhere: it chowns in place
    const env: Record<string, unknown[]> = {};
    for (let i = 0; i < N; i++) {
      env[`c${i}`] = [
        { name: 'ME', value: `c${i}` },
        { name: 'SHARED', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'shared.env', key: 'S' } } },
        { name: 'OWN', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: `own/c${i}.env`, key: 'O' } } },
        { name: 'BOTH', value: '$(ME):$(OWN)' },
      ];
    }
    const annotations = {
      'envhook.io/env': JSON.stringify(env),
      'envhook.io/volumeOwners': JSON.stringify([{ volume: 'keys', defaultUser: 2000, items: [{ path: 'ssh_host_key', user: 2001 }] }]),
    };
    const volumeSnapshot = () =>
      Object.fromEntries(Object.keys(files).map((f) => [f, snapshot(path.join(pod.emptyDir('cfg'), f)).content]));
    const before = volumeSnapshot();
    const bundles: string[] = [];
    for (let i = 0; i < N; i++) {
      const dir = path.join(root, `bundle-${i}`);
      fs.mkdirSync(dir);
      const spec = {
        ociVersion: '1.0.2',
        process: { args: ['sh'], env: ['PATH=/bin', `INDEX=${i}`] },
        mounts: [...pod.mounts(`c${i}`), { destination: '/keys', source: secret, type: 'bind', options: ['rbind', 'ro'] }],
        annotations: { ...pod.annotations(`c${i}`), ...annotations },
      };
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(spec, null, 2) + '\n');
      bundles.push(dir);
    }
    const start = Date.now();
    const results = await Promise.all(bundles.map((b, i) => start1(b, pod.kubeletRoot, i)));
    const wall = Date.now() - start;
    let correct = 0;
    results.forEach((r, i) => {
      const spec = JSON.parse(fs.readFileSync(path.join(bundles[i]!, 'config.json'), 'utf8'));
      const want = [
        'PATH=/bin',
        `INDEX=${i}`,
        `ME=c${i}`,
        'SHARED=shared value',
        `OWN=own value of c${i}`,
        `BOTH=c${i}:own value of c${i}`,
      ];
      const ok =
        t.equal(r.code, 0, `c${i}: success ${r.err.trim()}`) &&
        t.same(spec.process.env, want, `c${i}: exactly its own env`) &&
        t.match(spec.annotations['envhook.io/applied'] ?? '', /^sha256:/, `c${i}: marked applied`) &&
        t.equal(spec.mounts.at(-1).source, viaCopy ? copy : secret, `c${i}: /keys is ${viaCopy ? 'the owned copy' : "the kubelet's"}`) &&
        t.same(tempFiles(bundles[i]!), [], `c${i}: no temporary file`) &&
        (how === 'envhook inject' || t.ok(fs.existsSync(path.join(root, `ran-c${i}`)), `c${i}: the real runtime ran`));
      if (ok) correct++;
    });
    t.equal(correct, N, `concurrency (${how}): ${correct}/${N} starts correct (wall ${wall} ms)`);
    t.same(volumeSnapshot(), before, 'the shared emptyDir is unchanged');
    const owned = viaCopy ? copy : secret;
    t.equal(fs.statSync(path.join(owned, 'ssh_host_key')).uid, 2001, `item owner (${owned})`);
    t.equal(fs.statSync(path.join(owned, 'ssh_host_key.pub')).uid, 2000, 'default owner');
    t.equal(fs.readFileSync(path.join(owned, 'ssh_host_key'), 'utf8'), 'KEY', "the kubelet's payload");
    if (viaCopy) t.equal(fs.lstatSync(path.join(ts, 'ssh_host_key')).uid, 0, "the kubelet's files left as it wrote them");
    t.equal(fs.lstatSync(path.join(secret, 'ssh_host_key')).uid, 0, 'visible symlink not chowned');
  });
}
