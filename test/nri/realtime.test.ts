// The worker under SCHED_FIFO through the real chrt, on a real process; what is said when it cannot be.
import t from 'tap';
import { spawn } from 'node:child_process';
import { findChrt, schedPolicy, setFifo } from '../../src/nri/realtime.ts';

const CHRT = findChrt('');
t.test(
  'a process and all its threads under SCHED_FIFO; its policy read back from /proc',
  { skip: CHRT ? false : 'no chrt (util-linux) on this machine' },
  async (t) => {
    const chrt = CHRT!;
    t.match(chrt, /^\/(usr\/)?bin\/chrt$/, 'found where a runtime-started plugin finds it, without PATH');
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    t.teardown(() => child.kill('SIGKILL'));
    await new Promise((r) => child.once('spawn', r));
    t.equal(schedPolicy(child.pid!), 0, 'ordinary at first');
    t.equal(setFifo(child.pid!, 10, chrt), undefined);
    t.equal(schedPolicy(child.pid!), 1, 'SCHED_FIFO');
    t.match(setFifo(child.pid!, 100, chrt), new RegExp(`^${chrt} exited 1: `), "chrt's refusal, one line");
  },
);

t.test('no chrt, or one that cannot run: the reason, never a throw', async (t) => {
  t.equal(setFifo(process.pid, 10, '/nonexistent/chrt'), '/nonexistent/chrt: no such file or directory (ENOENT)');
});
