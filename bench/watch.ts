// The owner watcher (src/watch/) against the kubelet's atomic writer, as root:
//   A. time from the `..data` swap to every new file carrying the owner (p50, p99, max over
//      1,000 rewrites at 100/s), how many rewrites and files were owned before the swap, and
//      which file was late and by how much; the watcher owning only after the swap (preSwap
//      false, the baseline) and before it too, each at the ordinary priority and in SCHED_FIFO
//      (chrt); quiet, then both CPUs busy;
//   B. reads that fail (EACCES) for a UID-1000 reader looping on a 0400 file during 1,000
//      rewrites at 100/s: no watcher, then the same four watchers; quiet, then busy;
//   C. the watcher's RSS and watches every 2,500 of 20,000 rewrites;
//   D. event-loop delay of the watcher's process (other work waiting for its turn) under a
//      100/s rewrite churn against none.
// The writer is a child process (bench/watch-writer.ts), as the kubelet is another process.
// Volumes on /dev/shm (secret volumes are tmpfs). Prints a markdown section and writes it into
// bench/RESULTS.md (replacing the previous one). Run: node_modules/.bin/node --expose-gc bench/watch.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createRegistry, type Registry } from '../src/watch/registry.ts';
import { silentLogger } from '../src/log.ts';
import { normalize } from '../src/ownership/annotation.ts';
import { atomicWrite } from '../scripts/kubelet-pod.ts';
import { ordinary, startBurners } from '../scripts/cpu-burners.ts';

const REPO = path.resolve(import.meta.dirname, '..');
const UID = 1000;
const BUSYBOX = ['/bin/busybox', '/usr/bin/busybox'].find((p) => fs.existsSync(p))!;
const root = fs.mkdtempSync('/dev/shm/envhook-bench-watch-');
fs.chmodSync(root, 0o755); // the UID-1000 reader walks into it
let volumes = 0;

function newVolume(): string {
  const vol = path.join(root, `pods/p${++volumes}/volumes/kubernetes.io~secret/keys`);
  atomicWrite(vol, {
    ssh_host_ed25519_key: { data: 'k\n', mode: 0o400 },
    'ssh_host_ed25519_key.pub': 'p\n',
    'tls/server.key': { data: 't\n', mode: 0o400 },
  });
  for (let d = vol; d !== root; d = path.dirname(d)) fs.chmodSync(d, 0o755);
  return vol;
}

function watch(vol: string, preSwap = true): Registry {
  const r = createRegistry({ log: silentLogger, preSwap });
  r.add('bench', [{ dir: vol, owners: normalize([{ volume: 'keys', defaultUser: UID }])[0]!, uidMapping: { kind: 'none' } }]);
  return r;
}

async function writer(vol: string, count: number, intervalMs: number, mode: 'time' | 'churn') {
  const [cmd, args] = ordinary([
    process.execPath,
    path.join(REPO, 'bench/watch-writer.ts'),
    vol,
    String(count),
    String(intervalMs),
    String(UID),
    mode,
  ]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.on('exit', r));
  return JSON.parse(out) as {
    count: number;
    files: string[];
    ownedBeforeRename: number;
    filesOwnedBeforeRename: number;
    timeouts: number;
    latenciesUs: number[];
    lateUs: number[][];
  };
}

async function loaded<T>(busy: boolean, fn: () => Promise<T>): Promise<T> {
  const stop = busy ? startBurners() : () => {};
  try {
    return await fn();
  } finally {
    stop();
  }
}
const LOAD = (busy: boolean) => (busy ? 'both CPUs busy' : 'quiet');
const MODE = (preSwap: boolean, fifo: boolean) =>
  `${preSwap ? 'before the swap, then after it' : 'after the swap only'}${fifo ? ', SCHED_FIFO' : ''}`;

/** The watcher (this process: every thread) in SCHED_FIFO 10 or back to the ordinary policy; children are spawned ordinary(). */
function fifo(on: boolean): void {
  const r = spawnSync('chrt', ['-a', ...(on ? ['-f', '-p', '10'] : ['-o', '-p', '0']), String(process.pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`chrt: ${r.stderr}`);
}
const perFile: string[] = [];

const FILE_NAMES = ['ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'tls/server.key']; // bench/watch-writer.ts's, in its order
const settle = (ms = 300) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const ms = (us: number) => (us / 1000).toFixed(2);

async function latency(busy: boolean, preSwap: boolean, rt: boolean) {
  const vol = newVolume();
  const reg = watch(vol, preSwap);
  await settle();
  if (rt) fifo(true);
  const r = await loaded(busy, () => writer(vol, 1000, 10, 'time')).finally(() => rt && fifo(false));
  reg.close();
  const l = r.latenciesUs.sort((a, b) => a - b);
  const files = r.count * r.files.length;
  const row = `| ${LOAD(busy)} | ${MODE(preSwap, rt)}`;
  perFile.push(
    `${row} | ${r.files
      .map((_f, k) => {
        const late = r.lateUs[k]!.sort((a, b) => a - b);
        return late.length === 0 ? '0' : `${late.length}: ${ms(pct(late, 0.5))} / ${ms(late[late.length - 1]!)}`;
      })
      .join(' | ')} |`,
  );
  return `${row} | ${r.count} | ${r.ownedBeforeRename} (${((100 * r.ownedBeforeRename) / r.count).toFixed(1)}%) | ${((100 * r.filesOwnedBeforeRename) / files).toFixed(1)}% | ${ms(pct(l, 0.5))} | ${ms(pct(l, 0.99))} | ${ms(l[l.length - 1]!)} | ${r.timeouts} |`;
}

async function reader(busy: boolean, preSwap: boolean | undefined, rt = false) {
  const vol = newVolume();
  const reg = preSwap === undefined ? undefined : watch(vol, preSwap);
  await settle();
  const stop = path.join(root, `stop-${volumes}`);
  const script = `ok=0; fail=0; while [ ! -e ${stop} ]; do if read -r l < ${vol}/ssh_host_ed25519_key; then ok=$((ok+1)); else fail=$((fail+1)); fi; done 2>/dev/null; echo "$ok $fail"`;
  const [cmd, args] = ordinary([BUSYBOX, 'sh', '-c', script]);
  const child = spawn(cmd, args, { uid: UID, gid: UID, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const done = new Promise((r) => child.on('exit', r));
  await settle(100);
  if (rt) fifo(true);
  await loaded(busy, () => writer(vol, 1000, 10, 'churn')).finally(() => rt && fifo(false));
  await settle(100);
  fs.writeFileSync(stop, '');
  await done;
  reg?.close();
  const [ok, fail] = out.trim().split(' ').map(Number) as [number, number];
  return `| ${LOAD(busy)} | ${preSwap === undefined ? 'none (baseline)' : MODE(preSwap, rt)} | ${ok + fail} | ${fail} | ${((100 * fail) / (ok + fail)).toFixed(4)}% |`;
}

async function memory() {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const vol = newVolume();
  const reg = watch(vol);
  await writer(vol, 200, 0, 'time');
  const mib = (n: number) => (n / 2 ** 20).toFixed(1);
  const rows: string[] = [];
  const sample = async (n: number) => {
    await settle();
    gc();
    const m = process.memoryUsage();
    rows.push(
      `| ${n.toLocaleString('en')} | ${mib(m.rss)} | ${mib(m.heapTotal)} | ${mib(m.heapUsed)} | ${mib(m.external)} | ${reg.stats().watches} |`,
    );
  };
  await sample(0);
  let timeouts = 0;
  for (let n = 2500; n <= 20_000; n += 2500) {
    timeouts += (await writer(vol, 2500, 0, 'time')).timeouts;
    await sample(n);
  }
  reg.close();
  return rows.join('\n') + `\n\nNot owned within 1 s: ${timeouts} of 20,000.`;
}

async function loopDelay(churn: boolean) {
  const vol = newVolume();
  const reg = watch(vol);
  await settle();
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  if (churn) await writer(vol, 500, 10, 'churn');
  else await settle(5000);
  h.disable();
  reg.close();
  const f = (n: number) => (n / 1e6).toFixed(2);
  return `| ${churn ? '100 rewrites/s' : 'none'} | ${f(h.percentile(50))} | ${f(h.percentile(99))} | ${f(h.max)} |`;
}

const only = process.argv[2] ?? 'ABCD'; // while iterating: a subset, e.g. `C` (then nothing is written)
const load0 = os.loadavg()[0]!.toFixed(2);
const loads: string[] = [];
const sampled = async <T>(fn: () => Promise<T>): Promise<T> => {
  const r = await fn();
  loads.push(os.loadavg()[0]!.toFixed(1));
  return r;
};
const A: string[] = [];
const B: string[] = [];
for (const busy of [false, true]) {
  const rows = [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const; // [preSwap, SCHED_FIFO]
  if (only.includes('A')) for (const [preSwap, rt] of rows) A.push(await sampled(() => latency(busy, preSwap, rt)));
  if (only.includes('B')) {
    B.push(await sampled(() => reader(busy, undefined)));
    for (const [preSwap, rt] of rows) B.push(await sampled(() => reader(busy, preSwap, rt)));
  }
}
const C = only.includes('C') ? await memory() : '';
const D = only.includes('D') ? [await loopDelay(false), await loopDelay(true)] : [];
fs.rmSync(root, { recursive: true, force: true });

const section = `<!-- bench/watch.ts -->
## Watcher: owners across the kubelet's rewrites (bench/watch.ts)

Generated by \`node --expose-gc bench/watch.ts\` on ${new Date().toISOString()}; ${os.cpus().length} CPUs, load average
(1 min) ${load0} at start, ${os.loadavg()[0]!.toFixed(2)} at end (after each row of A and B: ${loads.join(', ')}); Node ${process.version}.
The writer is a child process doing the kubelet's atomic-writer operations in its order (three files, one nested);
volumes on tmpfs. "Both CPUs busy": one spinning shell per CPU beside the watcher and the writer. Every row in
the same run: the watcher owning the new directory only after the swap (the baseline) and before it too, at the
ordinary priority and in SCHED_FIFO (\`chrt -f 10\`, as a unit's CPUSchedulingPolicy=fifo; the writer, the reader
and the burners stay ordinary).

Time from the \`..data\` swap to every new file carrying the owner (1,000 rewrites at 100/s; 0 when
the files were owned before the swap; target p99 ≤ 10 ms):

| load | watcher | rewrites | all files owned before the swap | files owned before the swap | p50 ms | p99 ms | max ms | not owned within 1 s |
|---|---|---|---|---|---|---|---|---|
${A.join('\n')}

Which file was still root's at the swap (the writer's order; its last file is closed microseconds before
the swap), how often in 1,000 rewrites, and for how long after it: count: p50 / max ms:

| load | watcher | ${FILE_NAMES.join(' | ')} |
|---|---|${FILE_NAMES.map(() => '---').join('|')}|
${perFile.join('\n')}

Reads by a UID-1000 process looping on the 0400 file (\`read\` builtin of busybox sh) during 1,000
rewrites at 100/s:

| load | watcher | reads | failed (EACCES) | failed share |
|---|---|---|---|---|
${B.join('\n')}

Memory of the watcher's process over 20,000 rewrites as fast as the writer goes (after 200 to
warm up; each figure after a full GC):

| rewrites | RSS MiB | V8 heap total MiB | V8 heap used MiB | external MiB | inotify watches |
|---|---|---|---|---|---|
${C}

Event-loop delay of the watcher's process (how long other work, e.g. a CreateContainer request
of another pod, waits for its turn), \`monitorEventLoopDelay\`, 5 s:

| rewrite churn | p50 ms | p99 ms | max ms |
|---|---|---|---|
${D.join('\n')}
`;
console.log(section);
if (only !== 'ABCD') process.exit(0);
const results = path.join(REPO, 'bench/RESULTS.md');
const text = fs.readFileSync(results, 'utf8');
const at = text.indexOf('<!-- bench/watch.ts -->');
// its section ends where bench/before-after.mjs's begins (that one stays, after it)
const next = text.indexOf('## Before and after');
const after = next > at && at >= 0 ? `\n${text.slice(next)}` : '';
fs.writeFileSync(results, (at >= 0 ? text.slice(0, at) : text.trimEnd() + '\n\n') + section + after);
