// `envhook hook`: container state on stdin; refuses a container whose requested env was not
// applied (hook-only registration); never writes config.json; logs to its own file.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { envhook } from '../helpers/bundle.ts';

function bundleWith(dir: string, annotations: Record<string, string>): string {
  const bundle = path.join(dir, 'bundle');
  fs.mkdirSync(bundle, { recursive: true });
  fs.writeFileSync(path.join(bundle, 'config.json'), JSON.stringify({ ociVersion: '1.0.2', process: { env: ['A=1'] }, annotations }, null, 2));
  return bundle;
}

function hook(dir: string, state: string) {
  const log = path.join(dir, 'hook.log');
  const r = envhook(['hook', '--log-file', log], { input: state, env: { ENVHOOK_CONFIG: path.join(dir, 'none.json') } });
  return { ...r, log: fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '' };
}

const state = (bundle: string, extra = {}) => JSON.stringify({ ociVersion: '1.0.2', id: 'c1', status: 'creating', pid: 42, bundle, annotations: {}, ...extra });

t.test('passes: nothing requested, env applied by the shim or precreate, sandboxes', async (t) => {
  const cases: Record<string, string>[] = [
    {},
    { 'io.kubernetes.cri.container-name': 'app' },
    { 'envhook.io/env': '{"app":[]}', 'envhook.io/applied': 'create' },
    { 'envhook.io/envFrom': '{"app":[]}', 'envhook.io/applied': 'precreate' },
    { 'envhook.io/env': '{"app":[]}', 'io.kubernetes.cri-o.ContainerType': 'sandbox' },
  ];
  for (const annotations of cases) {
    const dir = t.testdir({ 'none.json': '{}' });
    const bundle = bundleWith(dir, annotations);
    const before = fs.readFileSync(path.join(bundle, 'config.json'));
    const r = hook(dir, state(bundle));
    t.equal(r.status, 0, `${JSON.stringify(annotations)}: ${r.stderr}`);
    t.equal(r.stdout, '');
    t.equal(r.stderr, '');
    t.same(fs.readFileSync(path.join(bundle, 'config.json')), before, 'config.json untouched');
    t.match(r.log, /"msg":"hook done"/);
  }
});

t.test('env requested but not applied: the start fails, saying the shim or precreate stage is needed', async (t) => {
  for (const key of ['envhook.io/env', 'envhook.io/envFrom', 'envhook.io/serviceLinks']) {
    const dir = t.testdir({ 'none.json': '{}' });
    const bundle = bundleWith(dir, { [key]: '{"app":[{"name":"A","value":"CANARY_hook_1"}]}', 'io.kubernetes.cri.container-name': 'app' });
    const before = fs.readFileSync(path.join(bundle, 'config.json'));
    const r = hook(dir, state(bundle));
    t.equal(r.status, 1);
    t.equal(r.stdout, '');
    t.equal(
      r.stderr,
      `envhook: annotation "${key}" asks for env, but it was not applied before the runtime's create: register envhook as the runtime shim (hooks/envhook-runtime in place of runc) or as the precreate hook (Podman); the createRuntime hook alone cannot set variables\n`,
    );
    t.match(r.log, /"level":50.*"msg":"hook failed"/);
    t.notMatch(r.stderr + r.log, /CANARY/);
    t.same(fs.readFileSync(path.join(bundle, 'config.json')), before);
  }
});

t.test('bad state on stdin: one line naming the input', async (t) => {
  const dir = t.testdir({ 'none.json': '{}' });
  for (const [input, message] of [
    ['', /^envhook: container state on stdin is not valid JSON \(empty\)\n$/],
    ['{"bundle": CANARY_state}', /^envhook: container state on stdin is not valid JSON/],
    ['{"id":"x"}', /^envhook: container state on stdin: \/: must have required property 'bundle'\n$/],
    [state(path.join(dir, 'missing')), /^envhook: cannot read \S+missing\/config\.json: ENOENT\n$/],
  ] as const) {
    const r = hook(dir, input);
    t.equal(r.status, 1, input);
    t.match(r.stderr, message);
    t.notMatch(r.stderr, /CANARY/);
  }
});
