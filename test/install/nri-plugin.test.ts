// The pre-installed NRI plugin: its NN index, the wrapper the runtime starts (run here by a real
// sh with a stand-in envhook that prints what it got), and the note about re-dialling.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { makeLayout } from '../../src/install/layout.ts';
import { waitFor } from '../helpers/wait.ts';
import { NRI_DEFAULT_LOG, NRI_DEFAULT_SOCKET, nriIndex, pluginWrapper, redialNote } from '../../src/install/nri-plugin.ts';

// env -i: the runtime gives the plugin a bare environment (and tap's NODE_OPTIONS stays out)
const run = (wrapper: string, env: string[]) => spawnSync('/usr/bin/env', ['-i', ...env, wrapper], { encoding: 'utf8' });

t.test('nriIndex: two digits, 50 by default', async (t) => {
  t.equal(nriIndex(undefined), '50');
  t.equal(nriIndex('07'), '07');
  for (const bad of ['7', '100', 'ab', '5 '])
    t.throws(() => nriIndex(bad), { message: '--index must be two digits (00-99), as NRI names pre-installed plugins' }, bad);
});

t.test('the wrapper execs envhook nri with the socket, appends stderr to the log, adds the V8 options', async (t) => {
  const dir = t.testdir({ "it's": {} });
  const umask = process.umask(0o022); // the runtime's, as the wrapper inherits it
  t.teardown(() => void process.umask(umask));
  const prefix = path.join(dir, "it's");
  const l = makeLayout('containerd', { prefix });
  // a stand-in envhook at the wrapper's path: prints its argv and NODE_OPTIONS, writes to stderr
  fs.writeFileSync(l.bin, '#!/bin/sh\necho "$*|$NODE_OPTIONS"\necho to-stderr >&2\n', { mode: 0o755 });
  const log = path.join(dir, 'plugin log');
  const wrapper = path.join(dir, '50-envhook');
  fs.writeFileSync(wrapper, pluginWrapper(l, { socket: '/run/x nri.sock', log }), { mode: 0o755 });
  const r = run(wrapper, ['NODE_OPTIONS=--max-old-space-size=64']);
  t.equal(r.status, 0);
  t.equal(r.stdout, 'nri --socket /run/x nri.sock|--max-old-space-size=64 --v8-pool-size=1 --jitless\n');
  t.equal(r.stderr, '');
  t.equal(fs.readFileSync(log, 'utf8'), 'to-stderr\n');
  t.equal(fs.statSync(log).mode & 0o777, 0o600, "the log is made root's alone (the runtime's umask is 022 here)");
  fs.chmodSync(log, 0o644); // as an older wrapper made it
  run(wrapper, []);
  t.equal(fs.statSync(log).mode & 0o777, 0o600, 'an older 0644 log narrowed');
  t.equal(fs.readFileSync(log, 'utf8'), 'to-stderr\nto-stderr\n', 'appended to');

  // a log it cannot open: envhook starts all the same, stderr left as it was
  fs.writeFileSync(wrapper, pluginWrapper(l, { socket: NRI_DEFAULT_SOCKET, log: path.join(dir, 'no/such/dir/log') }));
  const r2 = run(wrapper, []);
  t.equal(r2.stdout, `nri --socket ${NRI_DEFAULT_SOCKET}|--v8-pool-size=1 --jitless\n`);
  t.equal(r2.stderr, 'to-stderr\n');
});

t.test('the wrapper hands the connection to envhook in the background and exits 0 at once; envhook goes on with fd 3', async (t) => {
  const dir = t.testdir();
  const l = makeLayout('containerd', { prefix: dir });
  const go = path.join(dir, 'go');
  const seen = path.join(dir, 'seen');
  // a stand-in envhook that waits for the test's word, then reports its parent, fd 3 and the hand-over variable
  fs.writeFileSync(
    l.bin,
    `#!/bin/sh\nwhile ! test -e ${go}; do sleep 0.05; done\necho "$PPID|$(readlink /proc/$$/fd/3)|$ENVHOOK_NRI_HANDED|$*" > ${seen}.tmp\nmv ${seen}.tmp ${seen}\n`,
    { mode: 0o755 },
  );
  const wrapper = path.join(dir, '50-envhook');
  fs.writeFileSync(wrapper, pluginWrapper(l, { socket: '/run/nri.sock', log: path.join(dir, 'log') }), { mode: 0o755 });
  // as the runtime starts it: a bare environment, the connection (here a file) as fd 3, stdout on /dev/null
  const conn = path.join(dir, 'conn');
  fs.writeFileSync(conn, '');
  const r = spawnSync('/usr/bin/env', ['-i', '/bin/sh', '-c', `exec "$0" 3<${conn}`, wrapper], { stdio: 'ignore' });
  t.equal(r.status, 0, 'the process the runtime started exited 0 while envhook had not even looked at its arguments');
  t.notOk(fs.existsSync(seen), 'envhook still waiting: it runs on its own');
  fs.writeFileSync(go, '');
  await waitFor(() => fs.existsSync(seen), 10_000, 'the stand-in envhook to report');
  const [ppid, fd3, handed, args] = fs.readFileSync(seen, 'utf8').trim().split('|');
  t.not(Number(ppid), r.pid, 'not a child of the exited process any more');
  t.equal(fd3, conn, "the runtime's connection is its fd 3");
  t.equal(handed, '1', 'ENVHOOK_NRI_HANDED=1: it is the supervisor, no hand-over of its own');
  t.equal(args, 'nri --socket /run/nri.sock');
});

t.test('the default wrapper: the default socket and log', async (t) => {
  const text = pluginWrapper(makeLayout('crio', {})).toString();
  t.match(text, /^#!\/bin\/sh\n/);
  t.match(text, `\nlog='${NRI_DEFAULT_LOG}'\n`);
  t.match(text, `\nexec '/usr/local/lib/envhook/envhook' nri --socket '${NRI_DEFAULT_SOCKET}' &\nexit 0\n`);
});

t.test('redialNote: each runtime names its own setting', async (t) => {
  t.equal(redialNote('crio', '/s', false), 'when its first worker exits or hangs, envhook registers again on /s as an external plugin');
  t.equal(
    redialNote('containerd', '/s', true),
    'containerd does not accept external NRI connections (disable_connections = true): a pre-installed envhook that exits or hangs is not replaced until containerd restarts',
  );
  t.match(redialNote('crio', '/s', true), /^crio does not accept external NRI connections \(nri_disable_connections = true\)/);
});
