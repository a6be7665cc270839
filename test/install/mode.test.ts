// The name each install is recorded under: the runtime handler and the NRI plugin are separate.
import t from 'tap';
import { installKey, MODES } from '../../src/install/mode.ts';

t.test('install keys', async (t) => {
  t.same(MODES, ['shim', 'nri']);
  t.equal(installKey('containerd', undefined), 'containerd', 'the default is the runtime handler');
  t.equal(installKey('containerd', 'shim'), 'containerd');
  t.equal(installKey('containerd', 'nri'), 'containerd-nri');
  t.equal(installKey('crio', 'nri'), 'crio-nri');
});
