// The settings file under --root: absent (the defaults), valid, or the one line that says why not.
import t from 'tap';
import { readNode } from '../../src/doctor/node.ts';
import { settingsCheck } from '../../src/doctor/settings-check.ts';

type Files = Parameters<typeof t.testdir>[0];

const check = (files: Files) => settingsCheck(readNode({ root: t.testdir(files), prefix: '/usr/local/lib/envhook' }, {}));

t.test('no file: ok, the defaults', async (t) => {
  t.same(check({}), { check: 'settings', state: 'ok', what: 'no /etc/envhook/config.json: the defaults' });
});

t.test('a valid file: ok', async (t) => {
  t.same(check({ etc: { envhook: { 'config.json': '{"kubeletRoot": "/data/kubelet"}' } } }), {
    check: 'settings',
    state: 'ok',
    what: '/etc/envhook/config.json is valid',
  });
});

t.test('a file that is not valid: a problem naming the file, line and column, no byte of it', async (t) => {
  const r = check({ etc: { envhook: { 'config.json': '{"kubeletroot": "CANARY"}' } } });
  t.equal(r.state, 'problem');
  t.equal(r.what, 'config file /etc/envhook/config.json:1:2: /: unknown field "kubeletroot"');
  t.match(r.todo, /^fix or remove the file: every envhook the runtime starts/);
  t.notMatch(JSON.stringify(r), 'CANARY');
});
