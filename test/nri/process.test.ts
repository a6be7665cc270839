import t from 'tap';
import {
  DAEMON_NODE_OPTION,
  hasPoolSize,
  reexecArgs,
  SUPERVISOR_NODE_OPTION,
  SUPERVISOR_OPTION_ENV,
  workerNodeOptions,
} from '../../src/nri/process.ts';

t.test(
  "the bundle on Node: Node flags, the script and the arguments kept; the options added to NODE_OPTIONS, the supervisor's marked",
  async (t) => {
    const next = reexecArgs({
      execPath: '/usr/bin/node',
      execArgv: ['--enable-source-maps'],
      argv: ['/usr/bin/node', '/opt/envhook/envhook.cjs', 'nri', '--socket', '/run/nri.sock'],
      env: { PATH: '/bin', NODE_OPTIONS: ' --max-old-space-size=100 ' },
      sea: false,
    });
    t.same(next, {
      file: '/usr/bin/node',
      args: ['/usr/bin/node', '--enable-source-maps', '/opt/envhook/envhook.cjs', 'nri', '--socket', '/run/nri.sock'],
      env: {
        PATH: '/bin',
        NODE_OPTIONS: '--max-old-space-size=100 --v8-pool-size=1 --jitless',
        [SUPERVISOR_OPTION_ENV]: SUPERVISOR_NODE_OPTION,
      },
    });
  },
);

t.test('the single executable: its path, then its arguments (Node options only in NODE_OPTIONS)', async (t) => {
  const next = reexecArgs({
    execPath: '/usr/local/bin/envhook',
    execArgv: ['--max-semi-space-size=8'],
    argv: ['/usr/local/bin/envhook', '/usr/local/bin/envhook', 'nri'],
    env: { HOME: '/root' },
    sea: true,
  });
  t.same(next, {
    file: '/usr/local/bin/envhook',
    args: ['/usr/local/bin/envhook', 'nri'],
    env: { HOME: '/root', NODE_OPTIONS: '--v8-pool-size=1 --jitless', ENVHOOK_NRI_SUPERVISOR_OPTION: '--jitless' },
  });
});

t.test('once, and never against the admin: NODE_OPTIONS with any pool size means no execve', async (t) => {
  const facts = (NODE_OPTIONS: string) => ({ execPath: '/n', execArgv: [], argv: ['/n', 's', 'nri'], env: { NODE_OPTIONS }, sea: false });
  t.equal(reexecArgs(facts(DAEMON_NODE_OPTION)), undefined, 'the re-executed process');
  t.equal(reexecArgs(facts('--trace-gc --v8-pool-size=4')), undefined, "the admin's own pool size");
  t.ok(hasPoolSize({ NODE_OPTIONS: '--v8-pool-size=2' }));
  t.notOk(hasPoolSize({ NODE_OPTIONS: '--max-old-space-size=64' }));
  t.notOk(hasPoolSize({}));
});

t.test("the worker's NODE_OPTIONS: without the supervisor's own option, with the pool size, the admin's kept", async (t) => {
  const supervisor = (NODE_OPTIONS?: string) =>
    reexecArgs({ execPath: '/n', execArgv: [], argv: ['/n', 's'], env: { NODE_OPTIONS }, sea: false })!.env;
  t.equal(workerNodeOptions(supervisor()), DAEMON_NODE_OPTION, 'NODE_OPTIONS unset before');
  t.equal(workerNodeOptions(supervisor(' --trace-gc ')), `--trace-gc ${DAEMON_NODE_OPTION}`);
  t.equal(workerNodeOptions(supervisor('--jitless')), `--jitless ${DAEMON_NODE_OPTION}`, "the admin's own --jitless kept");
  t.equal(workerNodeOptions({}), DAEMON_NODE_OPTION, 'not re-executed: the pool size added');
  t.equal(workerNodeOptions({ NODE_OPTIONS: '--v8-pool-size=2 --jitless' }), '--v8-pool-size=2 --jitless', 'no marker: nothing taken out');
  t.equal(
    workerNodeOptions({ NODE_OPTIONS: '--v8-pool-size=2 --trace-gc', [SUPERVISOR_OPTION_ENV]: '--jitless' }),
    '--v8-pool-size=2 --trace-gc',
    'the marker without its option last (the admin changed NODE_OPTIONS): nothing taken out',
  );
});
