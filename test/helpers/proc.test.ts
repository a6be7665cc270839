// The /proc readers the end-to-end tests judge a container's environment by: a process still in
// `runc init` is waited for, an empty command line or environment (an exec half done, a zombie)
// is never read as "no variables".
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { procEnviron, readProc, waitExeced } from './proc.ts';
import { sleep } from './wait.ts';

t.test('a process that shows itself as runc init is waited for until it execs its program', async (t) => {
  const dir = t.testdir({ init: 'sleep 0.4\nexec sleep 30\n' });
  // bash reading the script "init" with argv[0] "runc": /proc/PID/cmdline is runc\0init\0, as runc's own init shows.
  const child = spawn('bash', ['init'], { argv0: 'runc', cwd: dir, env: { PATH: process.env.PATH, PROC_CANARY: 'one' }, stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  const pid = child.pid!;
  await sleep(100);
  t.equal(readProc(pid, 'cmdline'), 'runc\0init\0');
  await waitExeced(pid, 10_000);
  t.equal(readProc(pid, 'cmdline'), 'sleep\x0030\0', 'returned only once the program runs');
  t.equal(procEnviron(pid).get('PROC_CANARY'), 'one');
});

t.test('still runc init after the time given: an error that says so', async (t) => {
  const dir = t.testdir({ init: 'sleep 30\n' });
  const child = spawn('bash', ['init'], { argv0: 'runc', cwd: dir, stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  await sleep(100);
  await t.rejects(waitExeced(child.pid!, 200), { message: `PID ${child.pid} still runc init after 200 ms` });
});

t.test('a zombie (empty command line and environment) is neither done nor read as no variables', async (t) => {
  // The background sleep exits at once; its parent became `sleep 30` and never reaps it.
  const dir = t.testdir();
  const out = path.join(dir, 'pid');
  const child = spawn('sh', ['-c', `sleep 0 & echo $! > ${out}; exec sleep 30`], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  let zombie = 0;
  while (!(zombie = Number(readProc(child.pid!, 'cmdline') === 'sleep\x0030\0' && fs.readFileSync(out, 'utf8')))) await sleep(20);
  while (!/^State:\s+Z/m.test(readProc(zombie, 'status'))) await sleep(20);
  t.equal(readProc(zombie, 'cmdline'), '');
  await t.rejects(waitExeced(zombie, 200), { message: `PID ${zombie} shows no command line (exiting, or gone) after 200 ms` });
  t.throws(() => procEnviron(zombie), { code: 'ESRCH' }, 'the kernel refuses the read: no memory left to show');
});

t.test('a process that is gone: an error, not an empty environment', async (t) => {
  const r = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' });
  const gone = Number(r.stdout);
  await t.rejects(waitExeced(gone, 100), { message: `PID ${gone} shows no command line (exiting, or gone) after 100 ms` });
  t.throws(() => procEnviron(gone), { code: 'ENOENT' });
});
