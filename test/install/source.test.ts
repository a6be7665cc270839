// Where install takes envhook's files from: a checkout laid out in the test, or an installed tree
// (the prefix); anything else is named in one line. The installed copy installing with no
// checkout beside it: the built executable copied out of an installed tree, run as the admin runs it.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { findSource } from '../../src/install/source.ts';
import { HAS_SEA, install, REAL_NODE, realSource, snapshot } from '../helpers/install/install.ts';

const FRONT = '#!/bin/sh\n# front\n';
const ELF = '\x7fELF single executable';
const bundle = { hooks: { 'envhook-runtime': FRONT }, dist: { 'envhook.cjs': '// launcher\n', 'envhook-main.cjs': '// main\n' } };
const sea = { hooks: { 'envhook-runtime': FRONT }, dist: { envhook: ELF } };

t.test('a checkout: the front, a build, the templates it ships', async (t) => {
  const dir = t.testdir({ sea, bundle: { ...bundle, hooks: { ...bundle.hooks, 'envhook-precreate.json': '{"p":1}' } } });
  const s = findSource(path.join(dir, 'sea'));
  t.equal(s.dir, path.join(dir, 'sea'));
  t.equal(s.sea, path.join(dir, 'sea/dist/envhook'));
  t.equal(s.front.toString(), FRONT);
  const b = findSource(path.join(dir, 'bundle/../bundle'));
  t.equal(b.dir, path.join(dir, 'bundle'));
  t.equal(b.sea, undefined);
  t.equal(b.lib, path.join(dir, 'bundle/dist/envhook.cjs'));
  t.same(Object.keys(b.hooks), ['precreate']);
});

t.test('an installed tree: the single executable or the bundle beside the front', async (t) => {
  const dir = t.testdir({
    sea: { envhook: ELF, 'envhook-runtime': FRONT, 'envhook-runtime.conf': 'runtime=runc\n' },
    bundle: {
      envhook: '#!/bin/sh\nexec node "${self%/*}/envhook.cjs"\n',
      'envhook.cjs': '',
      'envhook-main.cjs': '',
      'envhook-runtime': FRONT,
    },
  });
  t.equal(findSource(path.join(dir, 'sea')).sea, path.join(dir, 'sea/envhook'));
  const b = findSource(path.join(dir, 'bundle'));
  t.equal(b.sea, undefined, 'the sh wrapper is not copied');
  t.equal(b.libMain, path.join(dir, 'bundle/envhook-main.cjs'));
  t.equal(b.front.toString(), FRONT);
});

t.test('anything else: one line naming both layouts', async (t) => {
  const dir = t.testdir({
    half: { hooks: { 'envhook-runtime': FRONT }, dist: { 'envhook.cjs': '' } },
    wrapperOnly: { envhook: '#!/bin/sh\n', 'envhook-runtime': FRONT },
    none: {},
  });
  for (const bad of ['half', 'wrapperOnly', 'none'])
    t.throws(() => findSource(path.join(dir, bad)), {
      message: `--source ${path.join(dir, bad)}: neither a checkout (hooks/envhook-runtime and dist/envhook, or dist/envhook.cjs with dist/envhook-main.cjs) nor an installed envhook (envhook-runtime beside envhook, or beside envhook.cjs and envhook-main.cjs): name one, or leave --source out`,
    });
});

// The installed copy, as an admin runs it: a copy of an installed prefix in a directory with no
// checkout above it, run by its own path (the single executable, or the wrapper and the bundle).
const variants = [
  ['the single executable', false, !HAS_SEA && 'dist/envhook not built'],
  ['the bundle', true, false],
] as const;
for (const [name, bundleOnly, skip] of variants)
  t.test(`${name}, installed: installs, reinstalls (--source itself) and uninstalls with no checkout`, { skip }, async (t) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-installed-'));
    t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const [a, b, copy] = ['a', 'b', 'copy'].map((d) => path.join(tmp, d)) as [string, string, string];
    for (const d of [a, b]) fs.mkdirSync(d);
    const first = install({ runtime: 'podman', root: a, source: realSource(path.join(tmp, 'src'), { bundleOnly }) });
    t.equal(first.status, 0, first.stderr);
    fs.cpSync(path.join(a, 'usr/local/lib/envhook'), copy, { recursive: true });
    const run = (args: string[]) =>
      spawnSync(path.join(copy, 'envhook'), [...args, '--runtime', 'podman', '--root', b, ...(bundleOnly ? ['--node', REAL_NODE] : [])], {
        encoding: 'utf8',
        cwd: tmp,
        env: { PATH: '/usr/bin:/bin' },
        timeout: 120_000,
      });
    const r = run(['install']);
    t.equal(r.stderr, '');
    t.equal(r.status, 0);
    t.match(r.stdout, /^paths below are the node's, under --root .*\ncreate \/usr\/local\/lib\/envhook\/envhook(-main\.cjs)?\n/);
    t.same(snapshot(b), snapshot(a), 'the same files as the install from the checkout, byte for byte');
    const again = run(['install', '--source', copy]);
    t.equal(again.status, 0, again.stderr);
    t.equal(again.stdout, 'nothing changed: envhook is already installed for podman under /usr/local/lib/envhook\n');
    const u = spawnSync(path.join(copy, 'envhook'), ['uninstall', '--runtime', 'podman', '--root', b], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin' },
    });
    t.equal(u.status, 0, u.stderr);
    t.same(fs.readdirSync(b), [], 'nothing left');
  });
