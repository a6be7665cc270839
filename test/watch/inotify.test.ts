// A real inotify failure: in a child process whose descriptors are used up (prlimit), the first
// watch fails with the kernel's EMFILE. It is logged once, nothing throws, the volume is polled
// and still owned after a rewrite; once descriptors are free again, a new volume gets a watch.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { NODE, whichSync } from '../helpers/bundle.ts';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';

const PRLIMIT = whichSync('prlimit');
const SRC = path.resolve(import.meta.dirname, '../../src');

const CHILD = `
import fs from 'node:fs';
import { createRegistry } from '${SRC}/watch/registry.ts';
import { createLogger } from '${SRC}/log.ts';
import { normalize } from '${SRC}/ownership/annotation.ts';
const [log, vol1, vol2] = process.argv.slice(-3);
const reg = createRegistry({ log: createLogger(log, 'info'), pollMs: 20 });
const vol = (dir) => ({ dir, owners: normalize([{ volume: 'keys', defaultUser: 1000 }])[0], uidMapping: { kind: 'none' } });
const filler = [];
try { for (;;) filler.push(fs.openSync('/dev/null', 'r')); } catch (e) { if (e.code !== 'EMFILE') throw e; }
reg.add('p1', [vol(vol1)]);
const a = reg.stats();
for (const fd of filler) fs.closeSync(fd);
const wait = (f) => new Promise((res, rej) => { const end = Date.now() + 10000; const i = setInterval(() => { if (f()) { clearInterval(i); res(); } else if (Date.now() > end) { clearInterval(i); rej(new Error('timeout')); } }, 10); });
const owner = (v) => fs.lstatSync(v + '/..data/key').uid;
await wait(() => owner(vol1) === 1000);
fs.writeFileSync(vol1 + '/rewrite-now', '');
await wait(() => !fs.existsSync(vol1 + '/rewrite-now'));
await wait(() => owner(vol1) === 1000);
reg.add('p2', [vol(vol2)]);
const b = reg.stats();
reg.close();
console.log(JSON.stringify({ a, b }));
`;

t.test(
  'EMFILE from the kernel: logged once, polled, owned; later volumes are watched',
  { skip: PRLIMIT ? false : 'prlimit not installed' },
  async (t) => {
    const dir = t.testdir({});
    const [vol1, vol2] = ['v1', 'v2'].map((v) => path.join(dir, v));
    atomicWrite(vol1!, { key: { data: 'K', mode: 0o400 } });
    atomicWrite(vol2!, { key: { data: 'K', mode: 0o400 } });
    const log = path.join(dir, 'log');
    // The child asks for a rewrite by creating a file; the test's writer is this process.
    const writer = setInterval(() => {
      if (fs.existsSync(path.join(vol1!, 'rewrite-now'))) {
        atomicWrite(vol1!, { key: { data: 'K2', mode: 0o400 } });
        fs.rmSync(path.join(vol1!, 'rewrite-now'));
      }
    }, 10);
    t.teardown(() => clearInterval(writer));
    const child = spawn(PRLIMIT!, ['--nofile=256:256', NODE, '--input-type=module', '-e', CHILD, log, vol1!, vol2!], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_EXTRA_CA_CERTS: '' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise((r) => child.on('exit', r));
    t.equal(code, 0, err);
    const { a, b } = JSON.parse(out);
    t.same(
      a,
      {
        pods: 1,
        volumes: 1,
        watches: 0,
        polled: 1,
        queued: 1,
        refusedByKernel: 1,
        refusedByBound: 0,
        ownedBeforeSwap: 0,
        ownedAfterSwap: 0,
        copies: 0,
        copyUpdates: 0,
        copyFailures: 0,
        copyLatency: { buckets: Array(12).fill(0), sum: 0, count: 0 },
      },
      'the volume is polled for want of a watch; the refusal is counted',
    );
    t.equal(b.polled, 1, 'the first volume stays polled');
    t.equal(b.watches, 1, 'a volume added after descriptors were freed is watched');
    const lines = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.includes('inotify limit reached'));
    t.equal(lines.length, 1, 'logged once');
    t.match(lines[0], '"code":"EMFILE"');
    t.equal(fs.lstatSync(path.join(vol1!, '..data/key')).uid, 1000, 'the rewrite was owned by polling');
  },
);
