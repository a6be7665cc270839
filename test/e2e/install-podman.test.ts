// Podman end to end: the installed hooks directory runs envhook's precreate stage, given with
// --hooks-dir and, in a private mount namespace, through the installed containers.conf.d
// drop-in alone. Installed into temporary host paths (--prefix, --config) so that the paths the
// hooks.d files name exist on this machine.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { PODMAN, makeRootfs, missingForRunc, parseEnvOutput } from '../helpers/bundle.ts';
import { fakeSource, install, repoSource, uninstall } from '../helpers/install.ts';
import { annotationArg } from '../helpers/podman.ts';

const missing = missingForRunc() ?? (!PODMAN ? 'podman not installed (apt-get install podman)' : undefined);

function setup(t: Test) {
  const dir = fs.mkdtempSync('/tmp/envhook-podman-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const real = repoSource();
  if (!real) t.comment('envhook precreate is not on this branch yet: a stand-in envhook is installed');
  const prefix = path.join(dir, 'usr/local/lib/envhook');
  const config = path.join(dir, 'etc/containers/containers.conf.d/50-envhook.conf');
  const r = install({ runtime: 'podman', root: '/', source: real ?? fakeSource(path.join(dir, 'src')), extra: ['--prefix', prefix, '--config', config] });
  t.equal(r.status, 0, r.stderr);
  return { dir, prefix, config, real, rootfs: makeRootfs(path.join(dir, 'rootfs')) };
}

function podmanArgs(dir: string, rootfs: string, real: string | undefined, extra: string[] = []): string[] {
  const annotations = real
    ? ['--annotation', 'io.kubernetes.container.name=app', '--annotation', annotationArg('envhook.io/env', JSON.stringify({ app: [{ name: 'GREETING', value: 'hello from envhook' }] }))]
    : ['--annotation', 'envhook.io/env={}'];
  return [
    '--root', path.join(dir, 'storage'), '--runroot', path.join(dir, 'run'), '--runtime', 'runc', '--cgroup-manager', 'cgroupfs', ...extra,
    'run', '--rm', '--net', 'none', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024', ...annotations, '--rootfs', rootfs, 'env',
  ];
}

function check(t: Test, r: SpawnSyncReturns<string>, real: string | undefined) {
  t.equal(r.status, 0, r.stderr);
  const env = parseEnvOutput(r.stdout);
  if (real) t.equal(env.get('GREETING'), 'hello from envhook', 'injected by the precreate stage');
  else t.equal(env.get('ENVHOOK_STANDIN'), 'precreate', 'the precreate stage ran');
}

t.test('podman --hooks-dir <installed dir>: the container sees the variables', { skip: missing }, async (t) => {
  const { dir, prefix, config, real, rootfs } = setup(t);
  check(t, spawnSync(PODMAN!, podmanArgs(dir, rootfs, real, ['--hooks-dir', path.join(prefix, 'hooks.d')]), { encoding: 'utf8', timeout: 120_000 }), real);
  t.equal(uninstall({ runtime: 'podman', root: '/', extra: ['--prefix', prefix] }).status, 0);
  t.notOk(fs.existsSync(prefix));
  t.notOk(fs.existsSync(config));
});

t.test('podman with the installed containers.conf.d drop-in only (private mount namespace)', { skip: missing }, async (t) => {
  const { dir, real, rootfs } = setup(t);
  // this machine's /etc/containers, plus the drop-in, mounted over /etc/containers for podman only
  const etc = path.join(dir, 'etc/containers');
  for (const e of fs.readdirSync('/etc/containers')) if (e !== 'containers.conf.d') fs.cpSync(path.join('/etc/containers', e), path.join(etc, e), { recursive: true });
  const script = 'mount --bind "$1" /etc/containers && shift && exec "$@"';
  const r = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', etc, PODMAN!, ...podmanArgs(dir, rootfs, real)], { encoding: 'utf8', timeout: 120_000 });
  check(t, r, real);
});
