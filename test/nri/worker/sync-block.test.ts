// Which runtimes hold plugin syncs back while they create a container (containerd's source: the
// release that first calls NRI's BlockPluginSync in its CRI plugin).
import t from 'tap';
import { needsPostCreateCheck } from '../../../src/nri/worker/sync-block.ts';

t.test('containerd from 1.7.26 and 2.0.3 on: no check needed', async (t) => {
  for (const v of ['1.7.26', '1.7.34', '2.0.3', '2.0.9', '2.1.9+unknown', '2.1.0', 'v2.2.7', '2.4.0-beta.0', '3.0.0'])
    t.equal(needsPostCreateCheck('containerd', v), false, v);
});

t.test('containerd before them, CRI-O, a runtime or version not known: the check', async (t) => {
  for (const v of ['1.7.24~ds1', '1.7.25', '1.6.20~ds1', '2.0.0', '2.0.2', 'devel', ''])
    t.equal(needsPostCreateCheck('containerd', v), true, `containerd ${v || '(no version)'}`);
  t.equal(needsPostCreateCheck('cri-o', '1.36.3'), true, 'CRI-O');
  t.equal(needsPostCreateCheck('fake-runtime', '0.0'), true);
});
