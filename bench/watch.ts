// The owner watcher (src/watch/) against the kubelet's atomic writer, as root:
//   A. time from the `..data` rename to every new file carrying the owner (p50, p99, max over
//      1,000 rewrites at 100/s) and how many rewrites were owned before the rename; once at
//      the watcher's default priority and once at nice -10;
//   B. reads that fail (EACCES) for a UID-1000 reader looping on a 0400 file during 1,000
//      rewrites at 100/s, with the watcher and without it;
//   C. the watcher's RSS and watches every 2,500 of 20,000 rewrites;
//   D. event-loop delay of the watcher's process (other work waiting for its turn) under a
//      100/s rewrite churn against none.
// The writer is a child process (bench/watch-writer.ts), as the kubelet is another process.
// Volumes on /dev/shm (secret volumes are tmpfs). Prints a markdown section and writes it into
// bench/RESULTS.md (replacing the previous one). Run: node_modules/.bin/node --expose-gc bench/watch.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createRegistry, type Registry } from '../src/watch/registry.ts';
import { silentLogger } from '../src/log.ts';
import { normalize } from '../src/ownership/annotation.ts';
import { atomicWrite } from '../scripts/kubelet-pod.ts';

const REPO = path.resolve(import.meta.dirname, '..');
const UID = 1000;
const BUSYBOX = ['/bin/busybox', '/usr/bin/busybox'].find((p) => fs.existsSync(p))!;
const root = fs.mkdtempSync('/dev/shm/envhook-bench-watch-');
fs.chmodSync(root, 0o755); // the UID-1000 reader walks into it
let volumes = 0;

function newVolume(): string {
  const vol = path.join(root, `pods/p${++volumes}/volumes/kubernetes.io~secret/keys`);
  atomicWrite(vol, { ssh_host_ed25519_key: { data: 'k\n', mode: 0o400 }, 'ssh_host_ed25519_key.pub': 'p\n', 'tls/server.key': { data: 't\n', mode: 0o400 } });
  for (let d = vol; d !== root; d = path.dirname(d)) fs.chmodSync(d, 0o755);
  return vol;
}

function watch(vol: string): Registry {
  const r = createRegistry({ log: silentLogger });
  r.add('bench', [{ dir: vol, owners: normalize([{ volume: 'keys', defaultUser: UID }])[0]!, uidMapping: { kind: 'none' } }]);
  return r;
}

async function writer(vol: string, count: number, intervalMs: number, mode: 'time' | 'churn') {
  const child = spawn(process.execPath, [path.join(REPO, 'bench/watch-writer.ts'), vol, String(count), String(intervalMs), String(UID), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.on('exit', r));
  return JSON.parse(out) as { count: number; ownedBeforeRename: number; timeouts: number; latenciesUs: number[] };
}

const settle = (ms = 300) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const ms = (us: number) => (us / 1000).toFixed(2);

async function latency(nice: number) {
  os.setPriority(nice);
  const vol = newVolume();
  const reg = watch(vol);
  await settle();
  const r = await writer(vol, 1000, 10, 'time');
  reg.close();
  os.setPriority(0);
  const l = r.latenciesUs.sort((a, b) => a - b);
  return `| nice ${nice} | ${r.count} | ${r.ownedBeforeRename} (${((100 * r.ownedBeforeRename) / r.count).toFixed(1)}%) | ${ms(pct(l, 0.5))} | ${ms(pct(l, 0.99))} | ${ms(l[l.length - 1]!)} | ${r.timeouts} |`;
}

async function reader(withWatcher: boolean) {
  const vol = newVolume();
  const reg = withWatcher ? watch(vol) : undefined;
  await settle();
  const stop = path.join(root, `stop-${volumes}`);
  const script = `ok=0; fail=0; while [ ! -e ${stop} ]; do if read -r l < ${vol}/ssh_host_ed25519_key; then ok=$((ok+1)); else fail=$((fail+1)); fi; done 2>/dev/null; echo "$ok $fail"`;
  const child = spawn(BUSYBOX, ['sh', '-c', script], { uid: UID, gid: UID, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const done = new Promise((r) => child.on('exit', r));
  await settle(100);
  await writer(vol, 1000, 10, 'churn');
  await settle(100);
  fs.writeFileSync(stop, '');
  await done;
  reg?.close();
  const [ok, fail] = out.trim().split(' ').map(Number) as [number, number];
  return `| ${withWatcher ? 'envhook watcher' : 'none (baseline)'} | ${ok + fail} | ${fail} | ${((100 * fail) / (ok + fail)).toFixed(2)}% |`;
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
    rows.push(`| ${n.toLocaleString('en')} | ${mib(m.rss)} | ${mib(m.heapTotal)} | ${mib(m.heapUsed)} | ${mib(m.external)} | ${reg.stats().watches} |`);
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
const A = only.includes('A') ? [await latency(0), await latency(-10)] : [];
const B = only.includes('B') ? [await reader(false), await reader(true)] : [];
const C = only.includes('C') ? await memory() : '';
const D = only.includes('D') ? [await loopDelay(false), await loopDelay(true)] : [];
fs.rmSync(root, { recursive: true, force: true });

const section = `<!-- bench/watch.ts -->
## Watcher: owners across the kubelet's rewrites (bench/watch.ts)

Generated by \`node --expose-gc bench/watch.ts\` on ${new Date().toISOString()}; ${os.cpus().length} CPUs, load average
(1 min) ${load0} at start, ${os.loadavg()[0]!.toFixed(2)} at end; Node ${process.version}. The writer is a child process
doing the kubelet's atomic-writer operations in its order (three files, one nested); volumes on tmpfs.

Time from the \`..data\` rename to every new file carrying the owner (1,000 rewrites at 100/s; 0 when
the files were owned before the rename; target p99 ≤ 10 ms):

| watcher priority | rewrites | owned before the rename | p50 ms | p99 ms | max ms | not owned within 1 s |
|---|---|---|---|---|---|---|
${A.join('\n')}

Reads by a UID-1000 process looping on the 0400 file (\`read\` builtin of busybox sh) during 1,000
rewrites at 100/s:

| watcher | reads | failed (EACCES) | failed share |
|---|---|---|---|
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
