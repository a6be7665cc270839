// The two processes of `envhook nri` tell each other apart by environment: the worker's role,
// the runtime's connection.
import t from 'tap';
import { inheritedFd, parseRole, roleOf } from '../../src/nri/roles.ts';

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
