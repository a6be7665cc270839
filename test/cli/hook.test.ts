// `envhook hook`: container state on stdin; refuses a container whose requested env was not
// applied (hook-only registration); never writes config.json; logs to its own file.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { envhook } from '../helpers/bundle.ts';
import { appliedDigest } from '../../src/plan/mark.ts';
import { refused } from '../helpers/refusal.ts';

function bundleWith(dir: string, annotations: Record<string, string>): string {
  const bundle = path.join(dir, 'bundle');
  fs.mkdirSync(bundle, { recursive: true });
  fs.writeFileSync(
    path.join(bundle, 'config.json'),
    JSON.stringify({ ociVersion: '1.0.2', process: { env: ['A=1'] }, annotations }, null, 2),
  );
  return bundle;
}

function hook(dir: string, state: string) {
  const log = path.join(dir, 'hook.log');
  const r = envhook(['hook', '--log-file', log], { input: state, env: { ENVHOOK_CONFIG: path.join(dir, 'none.json') } });
  return { ...r, log: fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '' };
}

const state = (bundle: string, extra = {}) =>
  JSON.stringify({
    ociVersion: '1.0.2',
    id: 'c1',
    status: 'creating',
    pid: 42,
    bundle,
    annotations: {},
    ...extra,
  });

/** The mark the shim or precreate stage leaves for these annotations. */
function applied(annotations: Record<string, string>): Record<string, string> {
  return { ...annotations, 'envhook.io/applied': appliedDigest({ annotations, container: 'app' }) };
}

t.test('passes: nothing requested, env applied by the shim or precreate, sandboxes', async (t) => {
  const app = { 'io.kubernetes.cri.container-name': 'app' };
  const cases: Record<string, string>[] = [
    {},
    app,
    { ...app, 'envhook.io/env': '{"other":[{"name":"A","value":"b"}]}' },
    applied({ ...app, 'envhook.io/env': '{"app":[]}' }),
    applied({ ...app, 'envhook.io/envFrom': '{"app":[]}', 'envhook.io/serviceLinks': '{"*":false}' }),
    { ...app, 'envhook.io/env': '{"app":[]}', 'io.kubernetes.cri-o.ContainerType': 'sandbox' },
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
  for (const key of ['envhook.io/env', 'envhook.io/envFrom', 'envhook.io/serviceLinks'] as const) {
    const dir = t.testdir({ 'none.json': '{}' });
    const value = {
      'envhook.io/env': '{"app":[{"name":"A","value":"CANARY_hook_1"}]}',
      'envhook.io/envFrom': '{"app":[{"fileRef":{"volumeName":"config","path":"CANARY_hook_2"}}]}',
      'envhook.io/serviceLinks': '{"app":false}',
    }[key];
    const bundle = bundleWith(dir, { [key]: value, 'io.kubernetes.cri.container-name': 'app' });
    const before = fs.readFileSync(path.join(bundle, 'config.json'));
    const r = hook(dir, state(bundle));
    t.equal(r.status, 1);
    t.equal(r.stdout, '');
    t.equal(
      r.stderr,
      `envhook: env requested by annotation "${key}" was not applied before the runtime's create: the runtime shim (hooks/envhook-runtime in place of runc) or the precreate hook (Podman) is needed; the createRuntime hook alone cannot set variables\n`,
    );
    t.match(r.log, /"level":50.*"msg":"hook failed"/);
    t.notMatch(r.stderr + r.log, /CANARY/);
    t.same(fs.readFileSync(path.join(bundle, 'config.json')), before);
  }
});

t.test('a mark that belongs to other annotations (forged, or annotations changed) fails too', async (t) => {
  const dir = t.testdir({ 'none.json': '{}' });
  const annotations = { 'io.kubernetes.cri.container-name': 'app', 'envhook.io/env': '{"app":[]}' };
  const bundle = bundleWith(dir, { ...applied(annotations), 'envhook.io/env': '{"app":[{"name":"A","value":"b"}]}' });
  const r = hook(dir, state(bundle));
  refused(
    t,
    r,
    'envhook: env requested by annotation "envhook.io/env" was not applied before the runtime\'s create ("envhook.io/applied" belongs to other annotations): the runtime shim (hooks/envhook-runtime in place of runc) or the precreate hook (Podman) is needed; the createRuntime hook alone cannot set variables\n',
  );
});

t.test('bad state on stdin: one line naming the input', async (t) => {
  const dir = t.testdir({ 'none.json': '{}' });
  for (const [input, message] of [
    ['', /^envhook: container state on stdin is not valid JSON \(empty\)\n$/],
    ['{"bundle": CANARY_state}', /^envhook: container state on stdin is not valid JSON/],
    ['{"id":"x"}', /^envhook: container state on stdin: \/: missing field "bundle"\n$/],
    [state(path.join(dir, 'missing')), /^envhook: cannot read \S+missing\/config\.json: no such file or directory \(ENOENT\)\n$/],
  ] as const) {
    const r = hook(dir, input);
    refused(t, r, message, input);
    t.notMatch(r.stderr, /CANARY/);
  }
});
