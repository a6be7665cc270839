// Podman end to end with what `envhook install --runtime podman` puts on a node, installed into
// a temporary root (--root) with the default paths. Podman runs in a private mount namespace in
// which the root's /usr/local/lib and /etc/containers (a copy of this machine's, plus the
// installed drop-in) are bind-mounted at their host paths, so the hooks.d files' `hook.path`
// (/usr/local/lib/envhook/envhook) is the installed executable, as on a node; /var/log is a
// directory of the test's, where the hooks.d files' --log-file arguments land. The container is
// named with io.kubernetes.container.name (Podman puts no name of its own into the OCI spec);
// the precreate stage sets a value and a $(VAR) expansion, the createRuntime hook agrees; without
// the name, the start fails. Then uninstall restores the root byte for byte.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeRootfs, missingForRunc, parseEnvOutput } from '../helpers/bundle.ts';
import { HAS_SEA, install, realSource, snapshot, uninstall } from '../helpers/install/install.ts';
import { makePodman, missingForPodman } from '../helpers/shim/podman.ts';

const missing = missingForRunc() ?? missingForPodman();
const PREFIX = '/usr/local/lib/envhook';
const ENV = {
  app: [
    { name: 'GREETING', value: 'hello' },
    { name: 'MESSAGE', value: '$(GREETING) from envhook' },
  ],
};
const ANNOTATIONS = { 'io.kubernetes.container.name': 'app', 'envhook.io/env': JSON.stringify(ENV) };

// mount --bind SRC DST for each pair, then exec podman: nothing outside this process changes
const SCRIPT = 'while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done; shift; exec "$@"';

function setup(t: Test) {
  const dir = fs.mkdtempSync('/tmp/envhook-ipodman-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
  const root = path.join(dir, 'root');
  // the admin's files: this machine's /etc/containers (its own drop-ins left out: podman here
  // reads exactly what install wrote)
  for (const e of fs.readdirSync('/etc/containers'))
    if (e !== 'containers.conf.d') fs.cpSync(path.join('/etc/containers', e), path.join(root, 'etc/containers', e), { recursive: true });
  fs.mkdirSync(path.join(root, 'usr/local/lib'), { recursive: true });
  const original = snapshot(root);
  const r = install({ runtime: 'podman', root, source: realSource() });
  t.equal(r.status, 0, r.stderr);
  const varLog = path.join(dir, 'var-log');
  fs.mkdirSync(varLog);
  const binds = [
    path.join(root, 'usr/local/lib'),
    '/usr/local/lib',
    path.join(root, 'etc/containers'),
    '/etc/containers',
    varLog,
    '/var/log',
  ];
  const podman = makePodman({ via: ['unshare', '-m', 'sh', '-c', SCRIPT, 'sh', ...binds, '--'] });
  t.teardown(() => podman.cleanup());
  const rootfs = makeRootfs(path.join(dir, 'rootfs'));
  const logOf = (name: string) => fs.readFileSync(path.join(varLog, 'envhook', name), 'utf8');
  return { root, original, podman, rootfs, logOf };
}

t.test(
  'the installed files: executables first, hooks.d naming them, the drop-in naming the hooks.d directory',
  { skip: missing },
  async (t) => {
    const { root, original } = setup(t);
    const inRoot = (p: string) => path.join(root, p);
    t.same(
      fs.readdirSync(inRoot(PREFIX)).sort(),
      [
        ...(HAS_SEA ? ['envhook'] : ['envhook', 'envhook-main.cjs', 'envhook.cjs']),
        'envhook-runtime',
        'envhook-runtime.conf',
        'hooks.d',
        'state.json',
      ].sort(),
    );
    for (const f of ['envhook-precreate.json', 'envhook-createruntime.json']) {
      t.equal(JSON.parse(fs.readFileSync(inRoot(`${PREFIX}/hooks.d/${f}`), 'utf8')).hook.path, `${PREFIX}/envhook`, f);
    }
    t.match(
      fs.readFileSync(inRoot('etc/containers/containers.conf.d/50-envhook.conf'), 'utf8'),
      `hooks_dir = ["/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d", "${PREFIX}/hooks.d"]`,
    );
    t.equal(uninstall({ runtime: 'podman', root }).status, 0);
    t.same(snapshot(root), original, 'byte for byte');
  },
);

t.test(
  'podman --hooks-dir <installed dir>, then the installed drop-in alone: the container sees the variables; uninstall restores the root',
  { skip: missing },
  async (t) => {
    const { root, original, podman, rootfs, logOf } = setup(t);
    for (const hooksDirs of [[`${PREFIX}/hooks.d`], []]) {
      const r = podman.run({ hooksDirs, annotations: ANNOTATIONS, rootfs, cmd: ['env'] });
      t.equal(r.status, 0, r.stderr);
      const env = parseEnvOutput(r.stdout);
      t.equal(env.get('GREETING'), 'hello', `value (${hooksDirs.length ? '--hooks-dir' : 'containers.conf.d drop-in'})`);
      t.equal(env.get('MESSAGE'), 'hello from envhook', '$(VAR) expansion');
    }
    // without the name annotation: Podman shows only that the hook failed; envhook's log says why
    const unnamed = podman.run({ hooksDirs: [], annotations: { 'envhook.io/env': ANNOTATIONS['envhook.io/env'] }, rootfs, cmd: ['env'] });
    t.not(unnamed.status, 0);
    t.match(
      unnamed.stderr,
      /Error: setting up OCI Hooks: executing \[envhook precreate --log-file \/var\/log\/envhook\/precreate\.log\]: exit status 1\n$/,
    );
    t.match(
      logOf('precreate.log'),
      '"message":"annotation \\"envhook.io/env\\": the container has no name (no Kubernetes annotations in config.json): add the annotation io.kubernetes.container.name=NAME',
    );
    t.equal(
      logOf('precreate.log').match(/"container":"app"[^\n]*"msg":"precreate done"/g)?.length,
      2,
      'the installed precreate stage ran for both',
    );
    t.equal(logOf('hook.log').match(/"msg":"hook done"/g)?.length, 2, 'the installed createRuntime hook agreed');
    t.notMatch(logOf('precreate.log') + logOf('hook.log'), /hello/);
    const un = uninstall({ runtime: 'podman', root });
    t.equal(un.status, 0, un.stderr);
    t.same(snapshot(root), original, 'byte for byte');
    t.notOk(fs.existsSync(path.join(root, PREFIX)));
  },
);
