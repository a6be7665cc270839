// The two processes of `envhook nri` tell each other apart by environment: the worker's role,
// the runtime's connection.
import t from 'tap';
import { inheritedFd, parseRole, pluginFileOf, roleOf, startedFromPluginFile } from '../../src/nri/roles.ts';

t.test('NRI_PLUGIN_SOCKET: a number or nothing', async (t) => {
  t.equal(inheritedFd({}), undefined);
  t.equal(inheritedFd({ NRI_PLUGIN_SOCKET: '' }), undefined);
  t.equal(inheritedFd({ NRI_PLUGIN_SOCKET: '3' }), 3);
  t.throws(() => inheritedFd({ NRI_PLUGIN_SOCKET: '-1' }), /not a file descriptor number/);
  t.throws(() => inheritedFd({ NRI_PLUGIN_SOCKET: '3 ' }), /not a file descriptor number/);
});

t.test("the worker's role: what the supervisor wrote, or the one line that says the variable is internal", async (t) => {
  t.same(parseRole('{"name":"envhook","index":"50","preinstalled":false}'), { name: 'envhook', index: '50', preinstalled: false });
  for (const bad of ['', 'x', '{"name":"envhook","index":"5","preinstalled":false}', '{"name":1,"index":"50","preinstalled":true}'])
    t.throws(() => parseRole(bad), { message: "ENVHOOK_NRI_WORKER is internal to envhook nri (its worker's role): unset it" }, bad);
});

t.test('a pre-installed plugin takes the name and index the runtime gave it; a dialling one its own', async (t) => {
  const env = { NRI_PLUGIN_NAME: 'hook', NRI_PLUGIN_IDX: '10' };
  t.same(roleOf(3, env, '50'), { name: 'hook', index: '10', preinstalled: true });
  t.same(roleOf(undefined, env, '50'), { name: 'envhook', index: '50', preinstalled: false });
  t.same(roleOf(3, {}, '60'), { name: 'envhook', index: '60', preinstalled: true });
});

t.test('started by its plugin file without a connection (an upgrade): the name and index passed on, ending with the runtime', async (t) => {
  const env = {
    NRI_PLUGIN_NAME: 'hook',
    NRI_PLUGIN_IDX: '10',
    ENVHOOK_NRI_HANDED: '1',
    ENVHOOK_NRI_PLUGIN_FILE: '/opt/nri/plugins/10-hook',
  };
  t.ok(startedFromPluginFile(undefined, env));
  t.same(roleOf(undefined, env, '50'), { name: 'hook', index: '10', preinstalled: true });
  t.notOk(startedFromPluginFile(3, env), 'with the runtime connection: the pre-installed plugin itself');
  t.notOk(startedFromPluginFile(undefined, { ...env, ENVHOOK_NRI_HANDED: undefined }), 'not through the file (no ENVHOOK_NRI_HANDED)');
  t.same(roleOf(undefined, { ...env, ENVHOOK_NRI_PLUGIN_FILE: 'plugins/10-hook' }, '50'), {
    name: 'envhook',
    index: '50',
    preinstalled: false,
  });
  t.equal(pluginFileOf(env), '/opt/nri/plugins/10-hook');
  t.equal(pluginFileOf({ ENVHOOK_NRI_PLUGIN_FILE: 'relative' }), undefined, 'only an absolute path');
  t.equal(pluginFileOf({}), undefined);
});
