// Podman with envhook's hooks.d files: the precreate stage applies env (and the createRuntime
// hook agrees); with only the createRuntime hook, a container asking for env fails to start.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeRootfs, missingForRunc, parseEnvOutput } from '../helpers/bundle.ts';
import { envhookWrapper } from '../helpers/front.ts';
import { hooksDir, makePodman, missingForPodman, type Podman } from '../helpers/podman.ts';

const missing = missingForRunc() ?? missingForPodman();
let podman: Podman;
let dir: string;
let precreateDir: string;
let createRuntimeDir: string;
let rootfs: string;

if (!missing) {
  t.before(() => {
    dir = t.testdir({ 'envhook.json': '{}' });
    podman = makePodman();
    rootfs = makeRootfs(path.join(dir, 'rootfs'));
    const envhook = envhookWrapper(path.join(dir, 'bin'));
    const env = [`ENVHOOK_CONFIG=${path.join(dir, 'envhook.json')}`];
    precreateDir = hooksDir(path.join(dir, 'precreate.d'), 'envhook-precreate.json', envhook, path.join(dir, 'precreate.log'), env);
    createRuntimeDir = hooksDir(path.join(dir, 'hooks.d'), 'envhook-createruntime.json', envhook, path.join(dir, 'hook.log'), env);
  });
  t.teardown(() => podman?.cleanup());
}

const logOf = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : '');

t.test('precreate and createRuntime hooks: the container starts, both stages ran', { skip: missing }, async (t) => {
  const r = podman.run({ hooksDirs: [precreateDir, createRuntimeDir], annotations: { 'envhook.io/marker': 'x' }, rootfs, cmd: ['sh', '-c', 'env'] });
  t.equal(r.status, 0, r.stderr);
  t.ok(parseEnvOutput(r.stdout).has('PATH'));
  t.match(logOf('precreate.log'), /"msg":"precreate done"/);
  t.match(logOf('hook.log'), /"msg":"hook done"/);
});

t.test('only the createRuntime hook: a container asking for env fails to start, saying the shim or precreate is needed', { skip: missing }, async (t) => {
  const r = podman.run({ hooksDirs: [createRuntimeDir], annotations: { 'envhook.io/env': '{"*":[{"name":"A","value":"CANARY_podman"}]}' }, rootfs, cmd: ['sh', '-c', 'env'] });
  t.not(r.status, 0);
  t.equal(r.stdout, '');
  t.match(
    r.stderr,
    /^Error: OCI runtime error: \S+runc: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: envhook: annotation "envhook\.io\/env" asks for env, but it was not applied before the runtime's create: register envhook as the runtime shim \(hooks\/envhook-runtime in place of runc\) or as the precreate hook \(Podman\); the createRuntime hook alone cannot set variables\n$/,
  );
  t.notMatch(r.stderr, /CANARY/);
  t.match(logOf('hook.log'), /"level":50,[^\n]*"msg":"hook failed"/);
});

t.test('a failing precreate: podman shows the hook failed, envhook\'s message is in its log', { skip: missing }, async (t) => {
  const r = podman.run({ hooksDirs: [precreateDir], annotations: { 'envhook.io/env': '{"*":[{"name":"A","value":"CANARY_podman"}]}', 'envhook.io/volumeOwners': '[]' }, rootfs, cmd: ['sh', '-c', 'env'] });
  t.not(r.status, 0);
  t.equal(r.stdout, '');
  t.match(r.stderr, /Error: setting up OCI Hooks: executing \[envhook precreate --log-file \S+precreate\.log\]: exit status 1\n$/);
  t.notMatch(r.stderr + logOf('precreate.log'), /CANARY/);
  t.match(logOf('precreate.log'), /"level":50,[^\n]*"msg":"precreate failed"/);
});
