// The soak's pods (bench/soak.mjs), laid out and driven as the kubelet does (test/helpers/cri/:
// the pod directory under a private kubelet root, secret volumes on tmpfs mounts of their own,
// RunPodSandbox and CreateContainer over CRI). Each pod has:
//   - an emptyDir `envfile` with an env file `app.env` (KEP-3721: `fileKeyRef`, keys A and B);
//   - a secret volume `creds` (mounted at /creds): `password` as one value (`valueFrom.fileRef`)
//     and `db.env` as `envFrom` with the prefix DB_;
//   - a secret volume `keys` (mounted at /keys) of three 0400 files owned by UID 1000 through
//     `envhook.io/volumeOwners`, rewritten by the kubelet's atomic writer every SOAK_ROTATE_S;
//   - every other pod annotated `envhook.io/evictUnapplied: "true"`;
//   - container `app` (busybox sleep); in SOAK_READERS pods also `reader`, UID 1000, reading the
//     three owned files in a loop and writing each rewrite it sees (its generation, /proc/uptime)
//     to the emptyDir `ctl`, and its failed reads (busybox's error lines) beside it.
// Every value is a canary (CANARY): the soak checks that none shows in envhook's output, and
// checks a container's env by comparing a hash, never printing a value.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ContainerState } from '../test/helpers/cri/client.ts';
import { runPod } from '../test/helpers/cri/pod.ts';
import { procEnviron } from '../test/helpers/proc.ts';
import { atomicVolumeDir, atomicWrite } from '../scripts/kubelet-pod.ts';

export const CANARY = 'CANARY-soak-7d3f';
export const OWNER = 1000;
const READER_FILES = ['/keys/gen', '/keys/key', '/keys/tls.crt'];
/** The reader's pause between rounds of reads (busybox `read -t` on a FIFO: no fork, no CPU). */
const READER_PAUSE_S = '0.005';

const keysPayload = (gen, tag) => ({
  gen: { data: `${gen}\n`, mode: 0o400 },
  key: { data: `${CANARY}-key-${tag}-${gen}\n`, mode: 0o400 },
  'tls.crt': { data: `${CANARY}-crt-${tag}-${gen}\n`, mode: 0o400 },
});

/** The reader's busybox script: reads until /ctl/stop; one line `<gen> <uptime> <reads>` on stdout per generation seen. */
export function readerScript() {
  const reads = READER_FILES.slice(1)
    .map((f) => `if read -r l < ${f}; then ok=$((ok+1)); fi`)
    .join('; ');
  return [
    'ok=0; last=',
    `{ while [ ! -e /ctl/stop ]; do if read -r g < ${READER_FILES[0]}; then ok=$((ok+1)); if [ "$g" != "$last" ]; then read -r up idle < /proc/uptime; echo "$g $up $ok"; last=$g; fi; fi; ${reads}; read -t ${READER_PAUSE_S} x <> /ctl/pause; done; } >>/ctl/seen 2>>/ctl/err`,
  ].join('; ');
}

/** A pod's layout, annotations and the env its `app` container must get (names → values, kept only as a hash). */
function podSpec(n, { reader, evict }) {
  const tag = crypto.randomBytes(6).toString('hex');
  const v = (what) => `${CANARY}-${what}-${tag}`;
  const expected = { SOAK_A: v('a'), SOAK_B: v('b'), SOAK_PASSWORD: v('pw'), DB_HOST: `db-${n}`, DB_PASS: v('pass') };
  const annotations = {
    'envhook.io/env': JSON.stringify({
      app: [
        { name: 'SOAK_A', valueFrom: { fileKeyRef: { volumeName: 'envfile', path: 'app.env', key: 'A' } } },
        { name: 'SOAK_B', valueFrom: { fileKeyRef: { volumeName: 'envfile', path: 'app.env', key: 'B' } } },
        { name: 'SOAK_PASSWORD', valueFrom: { fileRef: { volumeName: 'creds', path: 'password' } } },
      ],
    }),
    'envhook.io/envFrom': JSON.stringify({ app: [{ prefix: 'DB_', fileRef: { volumeName: 'creds', path: 'db.env' } }] }),
    'envhook.io/volumeOwners': JSON.stringify([{ volume: 'keys', defaultUser: OWNER }]),
    ...(evict ? { 'envhook.io/evictUnapplied': 'true' } : {}),
  };
  const options = {
    name: `soak-${n}`,
    handler: '',
    annotations,
    tmpfs: true,
    emptyDirs: {
      envfile: { 'app.env': `A='${expected.SOAK_A}'\nB='${expected.SOAK_B}'\nUNUSED='${v('unused')}'\n` },
      ...(reader ? { ctl: {} } : {}),
    },
    secrets: {
      creds: { password: `${expected.SOAK_PASSWORD}\n`, 'db.env': `HOST='${expected.DB_HOST}'\nPASS='${expected.DB_PASS}'\n` },
      keys: keysPayload(0, tag),
    },
  };
  return { tag, options, names: Object.keys(expected), hash: envHash(expected) };
}

/** sha256 of `NAME=value\0` over `names` in order: the env compared without any value leaving this process. */
function envHash(env, names = Object.keys(env)) {
  const h = crypto.createHash('sha256');
  for (const k of names) h.update(`${k}=${env[k]}\0`);
  return h.digest('hex');
}

/** What PID 1 of the container got: 'applied' (every variable, right values), 'absent' (none), 'wrong' (some, or other values). */
export function envOf(pid, rec) {
  const env = procEnviron(pid);
  const have = rec.names.filter((k) => env.has(k));
  if (have.length === 0) return 'absent';
  if (have.length < rec.names.length) return 'wrong';
  return envHash(Object.fromEntries(env), rec.names) === rec.hash ? 'applied' : 'wrong';
}

/**
 * A pod created over CRI with its containers started; `cri` is containerd's (its `track` is not
 * used: a day of churn would grow its list). Returns the pod's record.
 */
export async function createPod(c, kubeletRoot, n, { reader, evict }) {
  const spec = podSpec(n, { reader, evict });
  let pod;
  try {
    pod = await runPod({ cri: c.cri, track: () => {} }, kubeletRoot, spec.options);
  } catch (err) {
    // RunPodSandbox failed: the kubelet's layout is there, the runtime has no sandbox
    return { n, failed: err, pod: undefined, removeDirs: podDirs(kubeletRoot, spec.options.name) };
  }
  const rec = {
    n,
    uid: pod.uid,
    pod,
    cri: c.cri,
    reader,
    evict,
    tag: spec.tag,
    names: spec.names,
    hash: spec.hash,
    keys: atomicVolumeDir(pod.pod, 'secret', 'keys'),
    gen: 0,
    swaps: new Map(),
    createdAt: Date.now(),
    app: undefined,
    readerCtr: undefined,
    ctlRead: { seen: 0, err: 0 },
  };
  rec.removeDirs = [pod.pod.dir, pod.config.logDirectory];
  try {
    if (reader) {
      const ctl = pod.pod.emptyDir('ctl');
      fs.chmodSync(ctl, 0o777);
      fs.writeFileSync(path.join(ctl, 'seen'), '', { mode: 0o666 });
      fs.writeFileSync(path.join(ctl, 'err'), '', { mode: 0o666 });
      fs.chmodSync(path.join(ctl, 'seen'), 0o666);
      fs.chmodSync(path.join(ctl, 'err'), 0o666);
      mkfifo(path.join(ctl, 'pause'));
      rec.ctl = ctl;
      const id = await pod.create({
        name: 'reader',
        command: ['sh', '-c', readerScript()],
        volumeMounts: { keys: '/keys', ctl: '/ctl' },
        user: OWNER,
      });
      await pod.start(id);
      rec.readerCtr = { id, pid: await pod.pid(id) };
    }
    await createApp(rec, 0);
  } catch (err) {
    rec.failed = err;
  }
  return rec;
}

/** The directories layOutPod made for pod `name` (its uid is not known when RunPodSandbox failed). */
function podDirs(kubeletRoot, name) {
  const logs = path.join(path.dirname(kubeletRoot), 'pod-logs');
  return fs
    .readdirSync(logs)
    .filter((d) => d.startsWith(`default_${name}_`))
    .flatMap((d) => [path.join(logs, d), path.join(kubeletRoot, 'pods', d.slice(`default_${name}_`.length))]);
}

function mkfifo(file) {
  // mknod(2) through coreutils' mkfifo: Node has no binding for it.
  if (spawnSync('mkfifo', ['-m', '0666', file], { stdio: 'ignore' }).status !== 0) throw new Error(`soak: mkfifo ${file} failed`);
}

/** CreateContainer + StartContainer of `app` (attempt `attempt`), its PID and the env it got. */
export async function createApp(rec, attempt) {
  const id = await rec.pod.create({
    name: 'app',
    command: ['sleep', '2147483647'],
    volumeMounts: { creds: '/creds', keys: '/keys' },
    attempt,
  });
  rec.app = { id, attempt, pid: undefined, env: undefined, createdAt: Date.now(), reported: false, evicted: false };
  await rec.pod.start(id);
  try {
    rec.app.pid = await rec.pod.pid(id);
    rec.app.env = envOf(rec.app.pid, rec);
  } catch (err) {
    // Gone before its env was read: a container created while no worker was registered, found
    // missed and evicted by the next one at once. It had no env (envhook's report must say so).
    if ((await rec.pod.status(id)).state !== ContainerState.EXITED) throw err;
    rec.app.env = 'absent';
  }
  return rec.app;
}

/**
 * The kubelet's answer to an evicted container (exited, code 137): removed, and created again
 * with the next attempt. Returns the exit code seen, or undefined while it still runs.
 */
export async function recreateApp(rec) {
  const st = await rec.pod.status(rec.app.id);
  if (st.state !== ContainerState.EXITED) return undefined;
  const old = rec.app;
  await rec.cri.call('RemoveContainer', { containerId: old.id });
  await createApp(rec, old.attempt + 1);
  return st.exitCode;
}

/** The kubelet's atomic writer rewrites the owned volume: the next generation; the swap's time (CLOCK_BOOTTIME, s) kept for the reader. */
export function rotate(rec, bootNow) {
  rec.gen++;
  let at;
  atomicWrite(rec.keys, keysPayload(rec.gen, rec.tag), { afterRename: () => (at = bootNow()) });
  if (rec.reader) {
    rec.swaps.set(rec.gen, at);
    for (const g of rec.swaps.keys()) if (g < rec.gen - 20) rec.swaps.delete(g);
  }
  rec.rotatedAt = Date.now();
}

/** StopContainer/RemoveContainer/StopPodSandbox/RemovePodSandbox, its tmpfs unmounted, then the pod directory gone (the kubelet's cleanup). */
export async function removePod(rec) {
  try {
    await rec.pod?.remove();
  } finally {
    for (const d of rec.removeDirs) {
      unmountUnder(d);
      fs.rmSync(d, { recursive: true, force: true });
    }
  }
}

/** Whatever is still mounted under `dir` (a pod whose removal failed half-way: its tmpfs volumes), unmounted. */
function unmountUnder(dir) {
  const below = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m) => m && (m === dir || m.startsWith(`${dir}/`)))
    .sort()
    .reverse();
  for (const m of below) spawnSync('umount', [m], { stdio: 'ignore' });
}

/** New lines of a reader's `seen` and `err` files since the last call (files read from where the last read ended). */
export function readerLines(rec) {
  const out = { seen: [], err: [] };
  if (!rec.ctl) return out;
  for (const what of ['seen', 'err']) {
    const file = path.join(rec.ctl, what);
    let fd;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      continue;
    }
    try {
      const size = fs.fstatSync(fd).size;
      const from = rec.ctlRead[what];
      if (size <= from) continue;
      const buf = Buffer.alloc(Math.min(size - from, 1 << 20));
      const n = fs.readSync(fd, buf, 0, buf.length, from);
      const text = buf.subarray(0, n).toString('utf8');
      const end = text.lastIndexOf('\n') + 1;
      rec.ctlRead[what] = from + Buffer.byteLength(text.slice(0, end));
      out[what] = text.slice(0, end).split('\n').filter(Boolean);
    } finally {
      fs.closeSync(fd);
    }
  }
  return out;
}
