// Settings: flag, then environment, then the config file, then the default (docs/design.md#settings).
import t from 'tap';
import path from 'node:path';
import { fifoNumber, loadSettings } from '../src/settings.ts';
import { EnvhookError } from '../src/errors.ts';

t.test('precedence', async (t) => {
  const dir = t.testdir({ 'c.json': JSON.stringify({ kubeletRoot: '/file', runtime: 'crun', logLevel: 'warn' }) });
  const env = { ENVHOOK_CONFIG: path.join(dir, 'c.json'), ENVHOOK_KUBELET_ROOT: '/env', ENVHOOK_RUNTIME: '' };
  const rest = {
    runtime: 'crun',
    logFile: undefined,
    logLevel: 'warn',
    runDir: '/run/envhook',
    runDirOnDisk: 'warn',
    fileGroup: undefined,
    podCopyBytes: 33554432,
    podCopyFiles: 8192,
    podCopyVolumes: 32,
    nodeCopyBytes: undefined,
    nriSocket: '/var/run/nri/nri.sock',
    nriIndex: '50',
    metricsAddress: undefined,
    criSocket: undefined,
    evictUnapplied: false,
    fifoPriority: undefined,
    handoverWait: 0,
  };
  t.same(loadSettings({ kubeletRoot: '/flag' }, env), { kubeletRoot: '/flag', ...rest });
  t.same(loadSettings({}, env), { kubeletRoot: '/env', ...rest }, 'an empty variable does not count');
  t.same(loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'c.json') }).kubeletRoot, '/file');
});

t.test('defaults without a config file; errors name the source', async (t) => {
  const dir = t.testdir({ 'bad.json': '{', 'wrong.json': '{"logLevel":"loud"}' });
  t.same(loadSettings({}, { ENVHOOK_CONFIG: '' }).kubeletRoot, '/var/lib/kubelet');
  t.throws(
    () => loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'none.json') }),
    new EnvhookError(`cannot read config file ${path.join(dir, 'none.json')}: no such file or directory (ENOENT)`),
    'a named file must exist',
  );
  t.throws(
    () => loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'bad.json') }),
    new EnvhookError(`config file ${path.join(dir, 'bad.json')}:1:2: not valid JSON`),
  );
  t.throws(
    () =>
      loadSettings(
        {},
        {
          ENVHOOK_CONFIG: path.join(dir, 'wrong.json'),
        },
      ),
    { message: new RegExp(`^config file ${path.join(dir, 'wrong.json')}:1:2: /logLevel: `) },
  );
  t.throws(() => loadSettings({}, { ENVHOOK_CONFIG: '', ENVHOOK_LOG_LEVEL: 'loud' }), {
    message: /^ENVHOOK_LOG_LEVEL "loud": must be one of /,
  });
});

t.test(
  'the budgets of owned copies: flag over environment over config file; whole numbers, at least 1, wherever they come from',
  async (t) => {
    const dir = t.testdir({
      'c.json': JSON.stringify({ podCopyBytes: 1000, podCopyFiles: 10, nodeCopyBytes: 5000 }),
      'bad.json': JSON.stringify({ podCopyVolumes: 0 }),
    });
    const env = { ENVHOOK_CONFIG: path.join(dir, 'c.json'), ENVHOOK_POD_COPY_FILES: '20', ENVHOOK_POD_COPY_VOLUMES: '3' };
    const s = loadSettings({ podCopyVolumes: 4 }, env);
    t.same([s.podCopyBytes, s.podCopyFiles, s.podCopyVolumes, s.nodeCopyBytes], [1000, 20, 4, 5000]);
    t.throws(() => loadSettings({}, { ENVHOOK_CONFIG: '', ENVHOOK_NODE_COPY_BYTES: '64Mi' }), {
      message: 'ENVHOOK_NODE_COPY_BYTES "64Mi": must be a whole number, at least 1',
    });
    t.throws(() => loadSettings({}, { ENVHOOK_CONFIG: '', ENVHOOK_POD_COPY_BYTES: '0' }), {
      message: 'ENVHOOK_POD_COPY_BYTES "0": must be a whole number, at least 1',
    });
    t.throws(() => loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'bad.json') }), {
      message: new RegExp(`^config file ${path.join(dir, 'bad.json')}:1:2: /podCopyVolumes: `),
    });
  },
);

t.test('evictUnapplied and criSocket: flag over environment over config file; a boolean wherever it comes from', async (t) => {
  const dir = t.testdir({
    'c.json': JSON.stringify({ evictUnapplied: true, criSocket: '/file.sock' }),
    'bad.json': JSON.stringify({ evictUnapplied: 'yes' }),
  });
  const file = path.join(dir, 'c.json');
  t.same(pick(loadSettings({}, { ENVHOOK_CONFIG: '' })), [false, undefined], "off, and no socket (the runtime's own) by default");
  t.same(pick(loadSettings({}, { ENVHOOK_CONFIG: file })), [true, '/file.sock']);
  t.same(pick(loadSettings({}, { ENVHOOK_CONFIG: file, ENVHOOK_EVICT_UNAPPLIED: 'false', ENVHOOK_CRI_SOCKET: '/env.sock' })), [
    false,
    '/env.sock',
  ]);
  t.same(
    pick(
      loadSettings(
        {
          evictUnapplied: true,
          criSocket: '/flag.sock',
        },
        { ENVHOOK_CONFIG: file, ENVHOOK_EVICT_UNAPPLIED: 'false', ENVHOOK_CRI_SOCKET: '/env.sock' },
      ),
    ),
    [true, '/flag.sock'],
  );
  t.throws(
    () =>
      loadSettings(
        {},
        {
          ENVHOOK_CONFIG: '',
          ENVHOOK_EVICT_UNAPPLIED: '1',
        },
      ),
    { message: 'ENVHOOK_EVICT_UNAPPLIED: must be true or false' },
  );
  t.throws(
    () =>
      loadSettings(
        {},
        {
          ENVHOOK_CONFIG: path.join(dir, 'bad.json'),
        },
      ),
    { message: new RegExp(`^config file ${path.join(dir, 'bad.json')}:1:2: /evictUnapplied: must be boolean`) },
  );
});

const pick = (s: ReturnType<typeof loadSettings>) => [s.evictUnapplied, s.criSocket];

t.test('metricsAddress: off by default, from each source, its shape checked wherever it comes from', async (t) => {
  const FORMS = 'expected host:port, [IPv6 or IPv4]:port or :port (every interface), port 0-65535';
  const dir = t.testdir({
    'c.json': JSON.stringify({ metricsAddress: '127.0.0.1:9901' }),
    'bad.json': JSON.stringify({ metricsAddress: '9901' }),
  });
  t.equal(loadSettings({}, { ENVHOOK_CONFIG: '' }).metricsAddress, undefined);
  t.equal(loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'c.json') }).metricsAddress, '127.0.0.1:9901');
  t.equal(
    loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'c.json'), ENVHOOK_METRICS_ADDRESS: '[::1]:9902' }).metricsAddress,
    '[::1]:9902',
  );
  t.equal(
    loadSettings(
      {
        metricsAddress: ':9903',
      },
      { ENVHOOK_CONFIG: path.join(dir, 'c.json'), ENVHOOK_METRICS_ADDRESS: '[::1]:9902' },
    ).metricsAddress,
    ':9903',
  );
  t.throws(
    () =>
      loadSettings(
        {},
        {
          ENVHOOK_CONFIG: path.join(dir, 'bad.json'),
        },
      ),
    { message: `config file ${path.join(dir, 'bad.json')}:1:2: /metricsAddress: ${FORMS}` },
  );
  t.throws(
    () =>
      loadSettings(
        {},
        {
          ENVHOOK_CONFIG: '',
          ENVHOOK_METRICS_ADDRESS: 'localhost',
        },
      ),
    { message: `ENVHOOK_METRICS_ADDRESS "localhost": ${FORMS}` },
  );
  t.throws(
    () =>
      loadSettings(
        {
          metricsAddress: '::1:9901',
        },
        { ENVHOOK_CONFIG: '' },
      ),
    { message: `--metrics-address "::1:9901": ${FORMS}` },
  );
  // the node's IP in brackets, either family (examples/nri-daemonset.yaml's [$(HOST_IP)]:9901)
  for (const a of ['[192.0.2.10]:9901', '[2001:db8::10]:9901'])
    t.equal(loadSettings({ metricsAddress: a }, { ENVHOOK_CONFIG: '' }).metricsAddress, a);
  // a host the pattern lets by but that is no address: refused naming where it came from
  t.throws(() => loadSettings({ metricsAddress: '[192.0.2.300]:9901' }, { ENVHOOK_CONFIG: '' }), {
    message: `--metrics-address "[192.0.2.300]:9901": ${FORMS}`,
  });
  const file = path.join(t.testdir({ 'host.json': '{"logLevel": "info",\n "metricsAddress": "-x:1"}' }), 'host.json');
  t.throws(() => loadSettings({}, { ENVHOOK_CONFIG: file }), { message: `config file ${file}:2:2: /metricsAddress: ${FORMS}` });
});

t.test('fifoPriority: 1 to 99 from the environment, the file or a flag; anything else one line', async (t) => {
  const dir = t.testdir({ 'f.json': JSON.stringify({ fifoPriority: 20 }), 'bad.json': JSON.stringify({ fifoPriority: 0 }) });
  const none = { ENVHOOK_CONFIG: '' };
  t.equal(loadSettings({}, none).fifoPriority, undefined, 'ordinary by default');
  t.equal(loadSettings({}, { ...none, ENVHOOK_FIFO_PRIORITY: '10' }).fifoPriority, 10);
  t.equal(loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'f.json') }).fifoPriority, 20);
  t.equal(
    loadSettings({ fifoPriority: 5 }, { ENVHOOK_CONFIG: path.join(dir, 'f.json'), ENVHOOK_FIFO_PRIORITY: '10' }).fifoPriority,
    5,
    'the flag first',
  );
  for (const bad of ['0', '100', 'x', '-1', '1.5', '010']) {
    t.throws(() => loadSettings({}, { ...none, ENVHOOK_FIFO_PRIORITY: bad }), { message: /^ENVHOOK_FIFO_PRIORITY: / }, bad);
  }
  t.throws(() => loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'bad.json') }), { message: /fifoPriority/ }, 'in the file');
  t.throws(() => fifoNumber('100', '--fifo-priority'), { message: /^--fifo-priority: / });
});

t.test('a flag or variable of the wrong form: its name, its value and what is allowed; never a regex or a JSON path', async (t) => {
  const none = { ENVHOOK_CONFIG: '' };
  const cases: [() => unknown, string][] = [
    [() => loadSettings({ nriIndex: '5' }, none), '--index "5": must be two digits, 00 to 99 (the order among NRI plugins)'],
    [
      () => loadSettings({}, { ...none, ENVHOOK_NRI_INDEX: '100' }),
      'ENVHOOK_NRI_INDEX "100": must be two digits, 00 to 99 (the order among NRI plugins)',
    ],
    [
      () => loadSettings({ metricsAddress: '127.0.0.1:99999' }, none),
      '--metrics-address "127.0.0.1:99999": expected host:port, [IPv6 or IPv4]:port or :port (every interface), port 0-65535',
    ],
    [
      () => loadSettings({ logLevel: 'loud' as never }, none),
      '--log-level "loud": must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"',
    ],
  ];
  for (const [load, message] of cases) t.throws(load, { message }, message);
  for (const port of ['0', '9901', '65535']) t.equal(loadSettings({ metricsAddress: `:${port}` }, none).metricsAddress, `:${port}`);
});

t.test('runDirOnDisk: flag over environment over config file; refuse or warn, named where it came from', async (t) => {
  const dir = t.testdir({ 'c.json': JSON.stringify({ runDirOnDisk: 'refuse' }), 'bad.json': JSON.stringify({ runDirOnDisk: 'ignore' }) });
  const file = path.join(dir, 'c.json');
  t.equal(loadSettings({}, { ENVHOOK_CONFIG: '' }).runDirOnDisk, 'warn', 'warn by default');
  t.equal(loadSettings({}, { ENVHOOK_CONFIG: file }).runDirOnDisk, 'refuse');
  t.equal(loadSettings({}, { ENVHOOK_CONFIG: file, ENVHOOK_RUN_DIR_ON_DISK: 'warn' }).runDirOnDisk, 'warn');
  t.equal(loadSettings({ runDirOnDisk: 'refuse' }, { ENVHOOK_CONFIG: '', ENVHOOK_RUN_DIR_ON_DISK: 'warn' }).runDirOnDisk, 'refuse');
  t.throws(() => loadSettings({}, { ENVHOOK_CONFIG: '', ENVHOOK_RUN_DIR_ON_DISK: 'no' }), {
    message: 'ENVHOOK_RUN_DIR_ON_DISK "no": must be one of "refuse", "warn"',
  });
  t.throws(() => loadSettings({ runDirOnDisk: 'off' as never }, { ENVHOOK_CONFIG: '' }), {
    message: '--run-dir-on-disk "off": must be one of "refuse", "warn"',
  });
  t.throws(() => loadSettings({}, { ENVHOOK_CONFIG: path.join(dir, 'bad.json') }), {
    message: new RegExp(`^config file ${path.join(dir, 'bad.json')}:1:2: /runDirOnDisk: must be one of "refuse", "warn"$`),
  });
});
