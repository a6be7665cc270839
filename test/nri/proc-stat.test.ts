// /proc/<pid>/stat as the daemon and `envhook status` read it, on real processes.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { mainThreadCpuNs, procStat } from '../../src/nri/proc-stat.ts';
import { sleep } from '../helpers/wait.ts';

t.test('a running process: its state, a start time that stays its own, ordinary policy', async (t) => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  await sleep(50);
  const a = procStat(child.pid!)!;
  t.match(a.state, /^[RS]$/);
  t.equal(a.policy, 0);
  t.ok(Number.isSafeInteger(a.startTicks) && a.startTicks > 0, `start ticks ${a.startTicks}`);
  t.equal(procStat(child.pid!)!.startTicks, a.startTicks, 'the same process, the same start time');
  t.ok(procStat(process.pid)!.startTicks <= a.startTicks, 'this process started no later than its child');
  child.kill('SIGSTOP');
  await sleep(50);
  t.equal(procStat(child.pid!)!.state, 'T', 'stopped');
});

t.test('a command name with spaces and parentheses: fields counted after its last parenthesis', async (t) => {
  const dir = t.testdir();
  const odd = path.join(dir, 'a) b (c');
  fs.copyFileSync(spawnSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).stdout.trim(), odd);
  fs.chmodSync(odd, 0o755);
  const child = spawn(odd, ['30'], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  await sleep(50);
  t.match(fs.readFileSync(`/proc/${child.pid}/stat`, 'latin1'), `(a) b (c)`);
  const s = procStat(child.pid!)!;
  t.match(s.state, /^[RS]$/);
  t.equal(s.policy, 0);
  t.equal(s.startTicks, procStat(child.pid!)!.startTicks);
});

t.test('a gone process, another /proc root', async (t) => {
  const gone = spawnSync('true').pid!;
  t.equal(procStat(gone), undefined);
  // Fields 3 to 52 as the kernel writes them: state S, start time (22) 987654, policy (41) SCHED_FIFO.
  const fields = Array.from({ length: 50 }, () => '0');
  [fields[0], fields[19], fields[38]] = ['S', '987654', '1'];
  const root = t.testdir({ '4242': { stat: `4242 (x) ${fields.join(' ')}\n` } });
  t.same(procStat(4242, root), { state: 'S', startTicks: 987654, policy: 1 }, 'read under the root given');
});

t.test("a thread's CPU time: the kernel's first schedstat field; a gone process, another /proc root", async (t) => {
  const ns = mainThreadCpuNs(process.pid)!;
  t.ok(Number.isSafeInteger(ns) && ns > 0, `${ns} ns`);
  t.ok(mainThreadCpuNs(process.pid)! >= ns, 'it only grows');
  t.equal(mainThreadCpuNs(spawnSync('true').pid!), undefined);
  const root = t.testdir({ '4242': { schedstat: '123456789 2000 7\n' } });
  t.equal(mainThreadCpuNs(4242, root), 123456789);
});

t.test('a file larger than the reading buffer: read whole all the same', async (t) => {
  const fields = Array.from({ length: 50 }, () => '0');
  [fields[0], fields[19], fields[38]] = ['R', '55', '0'];
  const root = t.testdir({ '7': { stat: `7 (${'x'.repeat(9000)}) ${fields.join(' ')}\n` } });
  t.same(procStat(7, root), { state: 'R', startTicks: 55, policy: 0 });
});

t.test('a read takes no new buffer: the supervisor reads both files five times a second for as long as it runs', async (t) => {
  procStat(process.pid);
  const sizes: number[] = [];
  const names = ['alloc', 'allocUnsafe', 'allocUnsafeSlow'] as const;
  const saved = names.map((k) => Buffer[k]);
  const restore = () => names.forEach((k, i) => (Buffer[k] = saved[i]!));
  t.teardown(restore);
  names.forEach((k, i) => {
    const real = saved[i]! as (size: number, ...rest: unknown[]) => Buffer;
    Buffer[k] = ((size: number, ...rest: unknown[]) => (sizes.push(size), real(size, ...rest))) as never;
  });
  for (let i = 0; i < 100; i++) {
    t.equal(procStat(process.pid)?.state, 'R');
    t.ok(mainThreadCpuNs(process.pid)! > 0);
  }
  restore();
  t.same(sizes, [], 'no buffer allocated by 200 reads');
});
