// readCrioFiles: crio.conf, then every file under crio.conf.d in filepath.Walk's order
// (subdirectories where their names sort), parsed; a file that is not TOML refused with its
// line and column.
import t from 'tap';
import path from 'node:path';
import { makeLayout } from '../../../src/install/layout.ts';
import { readCrioFiles } from '../../../src/install/crio/crio-files.ts';
import { hostFiles } from '../../helpers/install/install.ts';

t.test("CRI-O's order, parsed", async (t) => {
  const root = path.join(t.testdir(), 'root');
  hostFiles(root, {
    'etc/crio/crio.conf': 'a = 1\n',
    'etc/crio/crio.conf.d/60/off.toml': 'b = 2\n',
    'etc/crio/crio.conf.d/50-envhook-nri.conf': 'c = 3\n',
    'etc/crio/crio.conf.d/70.conf': 'd = 4\n',
  });
  const layout = makeLayout('crio', { root });
  t.same(readCrioFiles(layout), [
    { file: '/etc/crio/crio.conf', doc: { a: 1 } },
    { file: '/etc/crio/crio.conf.d/50-envhook-nri.conf', doc: { c: 3 } },
    { file: '/etc/crio/crio.conf.d/60/off.toml', doc: { b: 2 } },
    { file: '/etc/crio/crio.conf.d/70.conf', doc: { d: 4 } },
  ]);
  hostFiles(root, { 'etc/crio/crio.conf.d/80.conf': 'x = [\n' });
  t.throws(() => readCrioFiles(layout), { message: '/etc/crio/crio.conf.d/80.conf is not valid TOML (line 2, column 1)' });
});
