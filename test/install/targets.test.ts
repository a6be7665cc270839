// targets: the hooks.d file (built in, or the source's template with hook.path set to the
// installed executable; a template that would match unanchored or run another stage is refused)
// and the RuntimeClass.
import t from 'tap';
import { parse } from 'yaml';
import { makeLayout } from '../../src/install/layout.ts';
import { HOOK_ANNOTATION, hookFile, runtimeClass } from '../../src/install/targets.ts';

const layout = makeLayout('podman', { prefix: '/srv/eh' });
const json = (b: Buffer) => JSON.parse(b.toString('utf8'));

t.test('the built-in hooks.d files name the installed envhook and match envhook.io/ annotations', async (t) => {
  t.same(json(hookFile(layout, 'precreate')), {
    version: '1.0.0',
    hook: { path: '/srv/eh/envhook', args: ['envhook', 'precreate'] },
    when: { annotations: { '^envhook\\.io/': '.*' } },
    stages: ['precreate'],
  });
  t.same(json(hookFile(layout, 'createRuntime')).hook.args, ['envhook', 'hook']);
  t.ok(new RegExp(HOOK_ANNOTATION).test('envhook.io/env'));
  t.notOk(new RegExp(HOOK_ANNOTATION).test('x.envhook.io/env'), 'anchored');
  t.ok(hookFile(layout, 'precreate').toString().endsWith('}\n'));
});

t.test('a template: kept as written, hook.path replaced', async (t) => {
  const tpl = {
    version: '1.0.0',
    hook: { path: '/elsewhere', args: ['envhook', 'hook'], timeout: 5 },
    when: { annotations: { '^envhook\\.io/env$': '.*' } },
    stages: ['createRuntime'],
  };
  t.same(json(hookFile(layout, 'createRuntime', Buffer.from(JSON.stringify(tpl)))), {
    ...tpl,
    hook: { ...tpl.hook, path: '/srv/eh/envhook' },
  });
});

t.test('a bad template: one line naming the stage, never its text', async (t) => {
  t.throws(() => hookFile(layout, 'precreate', Buffer.from('{ CANARY')), {
    message: 'hooks.d template for precreate is not valid JSON',
    cause: { message: 'JSON syntax error' },
  });
  const want = { message: 'hooks.d template for precreate: needs hook.path, stages ["precreate"] and anchored annotation regexes' };
  const base = { hook: { path: '/x' }, when: { annotations: { '^a': '.*' } }, stages: ['precreate'] };
  for (const bad of [
    { ...base, hook: {} },
    { ...base, stages: ['createRuntime'] },
    { ...base, stages: ['precreate', 'poststop'] },
    { ...base, when: { annotations: { 'envhook\\.io/': '.*' } } },
  ])
    t.throws(() => hookFile(layout, 'precreate', Buffer.from(JSON.stringify(bad))), want, JSON.stringify(bad));
});

t.test('the RuntimeClass names the envhook handler', async (t) => {
  t.same(parse(runtimeClass().toString()), {
    apiVersion: 'node.k8s.io/v1',
    kind: 'RuntimeClass',
    metadata: { name: 'envhook' },
    handler: 'envhook',
  });
});
