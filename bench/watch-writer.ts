// Child process of bench/watch.ts: the kubelet's side. Rewrites a volume with the atomic-writer
// double (scripts/atomic-writer.ts: the kubelet's operations in its order), `count` times,
// one every `intervalMs`, and after each `..data` rename times how long until every new file
// carries the owner (spinning on lstat, up to 1 s), and for each file (in the writer's order)
// whether it was owned before the rename and else how long after. Prints one JSON line.
// MODE 'churn' only rewrites (no timing, no spinning), for the runs that measure something else.
// Run by bench/watch.ts: node bench/watch-writer.ts VOLUME COUNT INTERVAL_MS UID [time|churn]
import fs from 'node:fs';
import path from 'node:path';
import { atomicWriteSteps } from '../scripts/kubelet-pod.ts';

const [vol, countArg, intervalArg, uidArg] = process.argv.slice(2);
const count = Number(countArg);
const intervalMs = Number(intervalArg);
const uid = Number(uidArg);
const timing = process.argv[6] !== 'churn';
const FILES = ['ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'tls/server.key'];

const ownedFile = (tsDir: string, f: string) => fs.lstatSync(path.join(tsDir, f)).uid === uid;
const latenciesUs: number[] = [];
let ownedBeforeRename = 0;
let filesOwnedBeforeRename = 0;
/** Per file, in the writer's order: how often it was still root's when ..data pointed at it, and for how long (µs). */
const lateUs: number[][] = FILES.map(() => []);
let timeouts = 0;
for (let i = 0; i < count; i++) {
  const payload = Object.fromEntries(FILES.map((f) => [f, { data: `${f} ${i}\n`, mode: 0o400 }]));
  const steps = atomicWriteSteps(vol!, payload);
  for (let r = steps.next(); !r.done; r = steps.next()) {
    if (!timing) continue;
    if (r.value.step === 'written') {
      const n = FILES.filter((f) => ownedFile(r.value.tsDir, f)).length;
      filesOwnedBeforeRename += n;
      if (n === FILES.length) ownedBeforeRename++;
    }
    if (r.value.step !== 'renamed') continue;
    const t0 = process.hrtime.bigint();
    const late = FILES.map((f, k) => (ownedFile(r.value.tsDir, f) ? -1 : k)).filter((k) => k >= 0);
    if (late.length === 0) {
      latenciesUs.push(0); // carried the owner the moment ..data pointed at it
      continue;
    }
    let left = late;
    while (left.length > 0 && process.hrtime.bigint() - t0 < 1_000_000_000n) {
      const us = Number(process.hrtime.bigint() - t0) / 1000;
      left = left.filter((k) => {
        if (!ownedFile(r.value.tsDir, FILES[k]!)) return true;
        lateUs[k]!.push(us);
        return false;
      });
    }
    if (left.length > 0) timeouts++;
    for (const k of left) lateUs[k]!.push(1e6);
    latenciesUs.push(left.length === 0 ? Number(process.hrtime.bigint() - t0) / 1000 : 1e6);
  }
  if (intervalMs > 0) await new Promise((r) => setTimeout(r, intervalMs));
  else if (i % 100 === 0) await new Promise((r) => setImmediate(r));
}
process.stdout.write(
  JSON.stringify({ count, files: FILES, ownedBeforeRename, filesOwnedBeforeRename, timeouts, latenciesUs, lateUs }) + '\n',
);
