// fsops: the one place install touches the host. Changes applied on real files under a test root
// (backups first, the oldest kept, files removed, backups dropped), reverted, described, and the
// directories they create found, pruned and removed.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeLayout } from '../../src/install/layout.ts';
import {
  applyChanges,
  changed,
  createdDirs,
  deepestFirst,
  describeChanges,
  missingDirs,
  pruneEmptyDirs,
  readHost,
  removeEmptyDirs,
  revertChanges,
  sha256,
  type Change,
} from '../../src/install/fsops.ts';

const B = (s: string) => Buffer.from(s);
const layoutIn = (root: string) => makeLayout('containerd', { root, prefix: '/opt/eh' });
const read = (root: string, p: string) => fs.readFileSync(path.join(root, p), 'utf8');

t.test('readHost: bytes, undefined when absent, an error for a directory or a symlink', async (t) => {
  const root = t.testdir({ etc: { 'a.toml': 'x = 1\n', d: {}, link: t.fixture('symlink', 'a.toml') } });
  const l = layoutIn(root);
  t.same(readHost(l, '/etc/a.toml'), B('x = 1\n'));
  t.equal(readHost(l, '/etc/none'), undefined);
  t.throws(() => readHost(l, '/etc/d'), { message: `${root}/etc/d: not a regular file` });
  t.throws(() => readHost(l, '/etc/link'), { message: `${root}/etc/link: not a regular file` }, 'a symlink is not followed');
  t.throws(() => readHost(l, '/etc/a.toml/x'), {
    message: `cannot read ${root}/etc/a.toml/x: a part of the path is not a directory (ENOTDIR)`,
  });
});

t.test('changed: bytes differ, a file appears or goes, or a backup is to be dropped', async (t) => {
  const c = (before?: string, after?: string, dropBackup = false): Change => ({
    file: '/f',
    before: before === undefined ? undefined : B(before),
    after: after === undefined ? undefined : B(after),
    mode: 0o644,
    dropBackup,
  });
  t.equal(changed(c('a', 'a')), false);
  t.equal(changed(c('a', 'b')), true);
  t.equal(changed(c(undefined, 'a')), true);
  t.equal(changed(c('a', undefined)), true);
  t.equal(changed(c(undefined, undefined)), false);
  t.equal(changed(c('a', 'a', true)), true);
  t.equal(changed(c(undefined, undefined, true)), true);
});

t.test('applyChanges writes, backs up the first original only, removes; revertChanges puts all back', async (t) => {
  const root = t.testdir({
    etc: { 'admin.toml': 'admin\n', 'old.conf': 'old\n' },
    opt: { eh: { backup: { etc: { 'kept.toml': 'first\n' } } } },
  });
  const l = layoutIn(root);
  fs.writeFileSync(path.join(root, 'etc/kept.toml'), 'second\n');
  const changes: Change[] = [
    { file: '/etc/admin.toml', before: B('admin\n'), after: B('admin\nours\n'), mode: 0o644, backup: true },
    { file: '/etc/kept.toml', before: B('second\n'), after: B('third\n'), mode: 0o644, backup: true },
    { file: '/opt/eh/new/bin', before: undefined, after: B('#!/bin/sh\n'), mode: 0o755 },
    { file: '/etc/old.conf', before: B('old\n'), after: undefined, mode: 0o644 },
    { file: '/etc/same', before: B('s'), after: B('s'), mode: 0o644 },
  ];
  const created = applyChanges(l, changes);
  t.same(created, ['/opt/eh/backup/etc/admin.toml'], 'the backup that existed is not replaced');
  t.equal(read(root, 'etc/admin.toml'), 'admin\nours\n');
  t.equal(read(root, 'opt/eh/backup/etc/admin.toml'), 'admin\n');
  t.equal(fs.statSync(path.join(root, 'opt/eh/backup/etc/admin.toml')).mode & 0o777, 0o600);
  t.equal(read(root, 'opt/eh/backup/etc/kept.toml'), 'first\n', 'the oldest backup is the admin original');
  t.equal(fs.statSync(path.join(root, 'opt/eh/new/bin')).mode & 0o777, 0o755);
  t.notOk(fs.existsSync(path.join(root, 'etc/old.conf')));
  t.notOk(fs.existsSync(path.join(root, 'etc/same')), 'an unchanged change writes nothing');

  revertChanges(l, changes, created);
  t.equal(read(root, 'etc/admin.toml'), 'admin\n');
  t.equal(read(root, 'etc/kept.toml'), 'second\n');
  t.equal(read(root, 'etc/old.conf'), 'old\n');
  t.notOk(fs.existsSync(path.join(root, 'opt/eh/new/bin')));
  t.notOk(fs.existsSync(path.join(root, 'opt/eh/backup/etc/admin.toml')), 'the backup it created is gone');
  t.equal(read(root, 'opt/eh/backup/etc/kept.toml'), 'first\n');
});

t.test('applyChanges: saveAs keeps the admin edit (0600) and dropBackup deletes the backup', async (t) => {
  const root = t.testdir({ etc: { 'c.toml': 'edited\n' }, opt: { eh: { backup: { etc: { 'c.toml': 'orig\n' } } } } });
  const l = layoutIn(root);
  const created = applyChanges(l, [
    { file: '/etc/c.toml', before: B('edited\n'), after: B('orig\n'), mode: 0o644, dropBackup: true, saveAs: '/etc/c.toml.envhook-saved' },
  ]);
  t.same(created, []);
  t.equal(read(root, 'etc/c.toml'), 'orig\n');
  t.equal(read(root, 'etc/c.toml.envhook-saved'), 'edited\n');
  t.equal(fs.statSync(path.join(root, 'etc/c.toml.envhook-saved')).mode & 0o777, 0o600);
  t.notOk(fs.existsSync(path.join(root, 'opt/eh/backup/etc/c.toml')));
});

t.test('describeChanges: a line a change, notes, diffs of admin files and size and hash of our own', async (t) => {
  const l = layoutIn(t.testdir());
  const bin = B('\0ELF binary');
  const changes: Change[] = [
    { file: '/etc/c.toml', before: B('a\n'), after: B('a\nb\n'), mode: 0o644, backup: true, note: 'why' },
    { file: l.bin, before: B('old'), after: bin, mode: 0o755 },
    { file: '/etc/new.conf', before: undefined, after: B('\0\0'), mode: 0o644 },
    { file: l.state, before: B('{}'), after: undefined, mode: 0o644 },
    { file: '/etc/same', before: B('x'), after: B('x'), mode: 0o644 },
    { file: '/etc/noted', before: B('x'), after: B('x'), mode: 0o644, note: 'left alone' },
  ];
  t.equal(
    describeChanges(l, changes),
    [
      'update /etc/c.toml (original saved as /opt/eh/backup/etc/c.toml)',
      '  note: why',
      'update /opt/eh/envhook',
      'create /etc/new.conf',
      'remove /opt/eh/state.json',
      'keep /etc/noted',
      '  note: left alone',
    ].join('\n'),
  );
  t.equal(
    describeChanges(l, changes, { dryRun: true, diffs: true }),
    [
      'would update /etc/c.toml (original saved as /opt/eh/backup/etc/c.toml)',
      '  note: why',
      '--- /etc/c.toml\n+++ /etc/c.toml\n@@ -1,1 +1,2 @@\n a\n+b',
      'would update /opt/eh/envhook',
      `  ${bin.length} bytes, sha256 ${sha256(bin)}; replaces 3 bytes, sha256 ${sha256(B('old'))}`,
      'would create /etc/new.conf',
      '  (2 bytes)',
      'would remove /opt/eh/state.json',
      `  2 bytes, sha256 ${sha256(B('{}'))}`,
      'would keep /etc/noted',
      '  note: left alone',
    ].join('\n'),
  );
  t.equal(sha256(B('')), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

t.test('createdDirs, missingDirs: the directories a change would make, deepest first / outermost', async (t) => {
  const root = t.testdir({ etc: {} });
  const l = layoutIn(root);
  const changes: Change[] = [
    { file: '/etc/a/b/c.conf', before: undefined, after: B('x'), mode: 0o644 },
    { file: '/opt/eh/envhook', before: undefined, after: B('x'), mode: 0o755 },
    { file: '/etc/gone/x', before: B('x'), after: undefined, mode: 0o644 },
  ];
  t.same(createdDirs(l, changes), ['/etc/a/b', '/etc/a', '/opt/eh', '/opt']);
  t.same(missingDirs(l, changes), ['/etc/a', '/opt']);
  t.same(deepestFirst(['/a', '/b/c', '/a/b/c', '/b/c', '/a/a']), ['/a/b/c', '/a/a', '/b/c', '/a']);
});

t.test('removeEmptyDirs: only empty ones (a dry run counts the removed files as gone); pruneEmptyDirs', async (t) => {
  const root = t.testdir({ etc: { a: { b: { 'ours.conf': 'x' } }, keep: { 'admin.conf': 'y' } }, opt: { eh: { x: { y: {} }, f: 'z' } } });
  const l = layoutIn(root);
  const rm: Change[] = [{ file: '/etc/a/b/ours.conf', before: B('x'), after: undefined, mode: 0o644 }];
  const dirs = ['/etc/a/b', '/etc/a', '/etc/keep', '/etc/none'];
  t.same(removeEmptyDirs(l, dirs, rm, true), ['/etc/a/b', '/etc/a']);
  t.ok(fs.existsSync(path.join(root, 'etc/a/b/ours.conf')), 'a dry run removes nothing');
  t.same(removeEmptyDirs(l, dirs, [], false), [], 'not empty without the change');
  applyChanges(l, rm);
  t.same(removeEmptyDirs(l, dirs, [], false), ['/etc/a/b', '/etc/a']);
  t.notOk(fs.existsSync(path.join(root, 'etc/a')));
  t.ok(fs.existsSync(path.join(root, 'etc/keep/admin.conf')));

  pruneEmptyDirs(l, '/opt/eh');
  t.notOk(fs.existsSync(path.join(root, 'opt/eh/x')), 'empty subdirectories pruned');
  t.ok(fs.existsSync(path.join(root, 'opt/eh/f')));
  fs.rmSync(path.join(root, 'opt/eh/f'));
  pruneEmptyDirs(l, '/opt/eh');
  t.notOk(fs.existsSync(path.join(root, 'opt/eh')), 'and the prefix once empty');
  t.doesNotThrow(() => pruneEmptyDirs(l, '/opt/eh'), 'a missing prefix is nothing to prune');
});

t.test("an envhook build replaced by another: the report names both builds' versions and commits", async (t) => {
  const l = layoutIn(t.testdir());
  const build = (mark: string) => Buffer.concat([Buffer.from('\x7fELF'), Buffer.from(`x'@(#)envhook '${mark}`), Buffer.alloc(8)]);
  const next = build('@(#)envhook 0.1.1 (def5678)');
  const lines = (before: Buffer) =>
    describeChanges(l, [{ file: l.bin, before, after: next, mode: 0o755 }], { dryRun: false, diffs: true }).split('\n');
  t.same(lines(build('@(#)envhook 0.1.0 (abc1234)')).slice(0, 2), [`update ${l.bin}`, '  envhook 0.1.0 (abc1234) → 0.1.1 (def5678)']);
  t.same(lines(build('@(#)envhook 0.1.0 (unknown)'))[1], '  envhook 0.1.0 (unknown) → 0.1.1 (def5678)');
  t.same(lines(Buffer.from('\x7fELF old'))[1], '  envhook (a build without a version mark) → 0.1.1 (def5678)');
  t.match(lines(Buffer.from('\x7fELF old'))[2], /^ {2}\d+ bytes, sha256 [0-9a-f]{64}; replaces 8 bytes, sha256 [0-9a-f]{64}$/);
});
