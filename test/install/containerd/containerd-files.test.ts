// containerd's load order, as LoadConfig builds it: the root, then imports breadth first, each
// file once; relative imports against the importing file (2.x: patterns too; 1.x: patterns
// against the working directory, / under systemd); a missing import skipped by 2.x, fatal to 1.x.
// The orders were taken from the binaries (1.6 lists the files it read in `config dump`).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { loadOrder, type HostReader } from '../../../src/install/containerd/containerd-files.ts';
import { hostFiles } from '../../helpers/install/install.ts';

function reader(root: string): HostReader {
  return {
    read: (p) => (fs.existsSync(path.join(root, p)) ? fs.readFileSync(path.join(root, p), 'utf8') : undefined),
    list: (d) => {
      try {
        return fs.readdirSync(path.join(root, d));
      } catch {
        return undefined;
      }
    },
  };
}

t.test('breadth first, each file once, blocks of envhook left out', async (t) => {
  const root = t.testdir({});
  hostFiles(root, {
    'etc/containerd/config.toml': "version = 3\nimports = ['conf.d/*.toml', '/etc/containerd/last.toml']\n",
    'etc/containerd/conf.d/10-a.toml': "version = 3\nimports = ['../nested.toml', '20-b.toml']\n",
    'etc/containerd/conf.d/20-b.toml':
      'version = 3\n# BEGIN envhook (written by envhook install; removed by envhook uninstall)\nx = 1\n# END envhook\n',
    'etc/containerd/nested.toml': 'version = 3\n',
    'etc/containerd/last.toml': "version = 3\nimports = ['/etc/containerd/config.toml']\n",
  });
  const files = loadOrder('/etc/containerd/config.toml', '2.x', reader(root));
  t.same(
    files.map((f) => f.path),
    [
      '/etc/containerd/config.toml',
      '/etc/containerd/conf.d/10-a.toml',
      '/etc/containerd/conf.d/20-b.toml',
      '/etc/containerd/last.toml',
      '/etc/containerd/nested.toml',
    ],
    "the root's imports first, then the imports of the imported files; a cycle ends",
  );
  const b = files[2]!;
  t.equal(b.hadBlock, true);
  t.same(b.doc, { version: 3 }, "envhook's own block is not the admin's layout");
  t.equal(files[4]!.importedBy, '/etc/containerd/conf.d/10-a.toml');
});

t.test('1.x expands a relative pattern against / (containerd under systemd), 2.x against the file', async (t) => {
  const root = t.testdir({});
  hostFiles(root, {
    'etc/containerd/config.toml': 'version = 2\nimports = ["conf.d/*.toml", "plain.toml"]\n',
    'etc/containerd/conf.d/a.toml': 'version = 2\n',
    'etc/containerd/plain.toml': 'version = 2\n',
    'conf.d/at-slash.toml': 'version = 2\n',
  });
  const paths = (family: '1.x' | '2.x') => loadOrder('/etc/containerd/config.toml', family, reader(root)).map((f) => f.path);
  t.same(paths('2.x'), ['/etc/containerd/config.toml', '/etc/containerd/conf.d/a.toml', '/etc/containerd/plain.toml']);
  t.same(paths('1.x'), ['/etc/containerd/config.toml', '/conf.d/at-slash.toml', '/etc/containerd/plain.toml']);
});

t.test('a missing import: skipped by 2.x, refused for 1.x; a missing root is a new file', async (t) => {
  const root = t.testdir({});
  hostFiles(root, { 'etc/containerd/config.toml': 'version = 2\nimports = ["gone.toml"]\n' });
  t.same(
    loadOrder('/etc/containerd/config.toml', '2.x', reader(root)).map((f) => f.path),
    ['/etc/containerd/config.toml'],
  );
  t.throws(
    () => loadOrder('/etc/containerd/config.toml', '1.x', reader(root)),
    /imports \/etc\/containerd\/gone\.toml, which does not exist: containerd 1\.x does not start with it/,
  );
  const none = loadOrder('/etc/containerd/other.toml', '2.x', reader(root));
  t.same(
    none.map((f) => [f.path, f.exists]),
    [['/etc/containerd/other.toml', false]],
  );
});
