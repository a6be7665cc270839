// The one PATH lookup: an executable regular file as a shell of the node would find it (PATH
// order, an empty entry the working directory on this machine); for a runtime fronts skipped;
// under a root, PATH's directories inside it then the usual places, run there with chroot;
// runtimeFault says why a path is no runtime; versionMatch reads a real program's --version.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import {
  failureWords,
  FRONT_MARKER,
  findExecutable,
  findNodeBinary,
  findRuntimeBinary,
  missingBinary,
  pathFor,
  runRuntimeBinary,
  runtimeFault,
  versionMatch,
} from '../../src/oci/runtime-binary.ts';
import { nodeRootWith } from '../helpers/install/node-root.ts';

function script(dir: string, name: string, body: string, mode = 0o755): string {
  fs.mkdirSync(dir, { recursive: true });
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode });
  return p;
}

t.test('PATH: the first executable regular file; not a directory, not a file without x, not a front', async (t) => {
  const d = t.testdir();
  script(path.join(d, 'a'), 'tool', 'exit 0', 0o644);
  fs.mkdirSync(path.join(d, 'b', 'tool'), { recursive: true });
  script(path.join(d, 'f'), 'tool', `# ${FRONT_MARKER} a front installed as tool`);
  const c = script(path.join(d, 'c'), 'tool', 'exit 0');
  script(path.join(d, 'e'), 'tool', 'exit 0');
  const PATH = ['a', 'b', 'f', 'c', 'e'].map((x) => path.join(d, x)).join(':');
  t.same(findRuntimeBinary('tool', { envPath: PATH }), { path: c, root: '/' });
  t.same(
    findRuntimeBinary('tool', { envPath: PATH, front: c }),
    { path: path.join(d, 'e', 'tool'), root: '/' },
    'the front that called us',
  );
  t.equal(findRuntimeBinary('absent', { envPath: PATH }), undefined);
  const cwd = process.cwd();
  process.chdir(path.dirname(c));
  t.teardown(() => process.chdir(cwd));
  t.same(
    findRuntimeBinary('tool', { envPath: `${path.join(d, 'a')}::${path.join(d, 'e')}` })?.path,
    'tool',
    'an empty entry is the working directory',
  );
});

t.test('findExecutable: any program, first dirs then PATH; no directory, no file without x, no relative entry when asked', async (t) => {
  const d = t.testdir();
  const [plain, dir, first, bin, marked] = ['plain', 'dir', 'first', 'bin', 'marked'].map((x) => path.join(d, x)) as [
    string,
    string,
    string,
    string,
    string,
  ];
  script(plain, 'tool', 'exit 0', 0o644);
  fs.mkdirSync(path.join(dir, 'tool'), { recursive: true });
  const exe = script(bin, 'tool', 'exit 0');
  t.equal(
    findExecutable('tool', { envPath: [plain, dir, bin].join(':') }),
    exe,
    'the executable file after a non-executable and a directory',
  );
  t.equal(findExecutable('tool', { envPath: [plain, dir].join(':') }), undefined, 'none');
  const inFirst = script(first, 'tool', 'exit 0');
  t.equal(findExecutable('tool', { envPath: bin, first: [first] }), inFirst, 'the first directories before PATH');
  const front = script(marked, 'tool', `# ${FRONT_MARKER} not a runtime, still a program`);
  t.equal(findExecutable('tool', { envPath: marked }), front, 'no front refusal: that is for runtimes');
  t.equal(findRuntimeBinary('tool', { envPath: marked }), undefined, 'a runtime lookup skips it');
  script(path.join(d, 'rel'), 'tool', 'exit 0');
  const cwd = process.cwd();
  process.chdir(d);
  t.teardown(() => process.chdir(cwd));
  t.equal(findExecutable('tool', { envPath: `rel:${bin}` }), path.join('rel', 'tool'), 'a relative entry, from the working directory');
  t.equal(findExecutable('tool', { envPath: `rel::${bin}`, absoluteOnly: true }), exe, 'relative and empty entries ignored when asked');
  const root = path.join(d, 'root');
  script(path.join(root, 'usr/bin'), 'tool', 'exit 0');
  t.equal(findExecutable('tool', { root, envPath: 'rel', usual: true }), '/usr/bin/tool', 'under a root: the path as the node sees it');
});

t.test('runtimeFault: why a path is no runtime to exec', async (t) => {
  const d = t.testdir();
  const ok = script(d, 'runc', 'exit 0');
  t.equal(runtimeFault(ok), undefined);
  t.equal(runtimeFault(path.join(d, 'absent')), 'missing');
  t.equal(runtimeFault(script(d, 'plain', 'exit 0', 0o644)), 'not executable');
  t.equal(runtimeFault(d), 'not executable', 'a directory');
  t.equal(runtimeFault(script(d, 'front', `# ${FRONT_MARKER} x`)), 'front');
  t.equal(runtimeFault(ok, ok), 'front', 'the front that called us');
  fs.symlinkSync(ok, path.join(d, 'link'));
  t.equal(runtimeFault(path.join(d, 'link'), ok), 'front', 'through a symlink');
});

t.test('under a root: PATH inside it (absolute entries only), then the usual places; never this machine', async (t) => {
  const d = t.testdir({ root: {} });
  const root = path.join(d, 'root');
  script(path.join(root, 'usr/sbin'), 'runc', 'exit 0');
  t.same(findRuntimeBinary('runc', { root, envPath: '/opt/x/bin', usual: true }), { path: '/usr/sbin/runc', root });
  script(path.join(root, 'opt/x/bin'), 'runc', 'exit 0');
  t.same(findRuntimeBinary('runc', { root, envPath: '/opt/x/bin', usual: true }), { path: '/opt/x/bin/runc', root });
  t.equal(findRuntimeBinary('sh', { root, envPath: '/usr/bin:/bin', usual: true }), undefined, "this machine's /bin/sh is not the node's");
  t.equal(findRuntimeBinary('runc', { root, envPath: '', usual: false }), undefined, 'PATH only when the usual places are not asked');
  t.equal(pathFor({ path: '/usr/bin/x', root }, root, '/etc/a'), '/etc/a', 'a binary inside the root gets node paths');
  t.equal(
    pathFor({ path: '/usr/bin/x', root: '/' }, root, '/etc/a'),
    path.join(root, 'etc/a'),
    "one of this machine's gets them under the root",
  );
  t.equal(
    missingBinary('crio', root),
    `no crio under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin`,
  );
});

t.test(
  "run inside the root: the node's own files, not this machine's",
  { skip: process.getuid?.() !== 0 && 'chroot needs root' },
  async (t) => {
    const root = nodeRootWith(t, { '/usr/bin/cat': '/usr/bin/cat' });
    fs.mkdirSync(path.join(root, 'etc'), { recursive: true });
    fs.writeFileSync(path.join(root, 'etc/hostname'), 'the-node\n');
    const cat = findNodeBinary('cat', undefined, root);
    t.same(cat, { path: '/usr/bin/cat', root });
    const r = runRuntimeBinary(cat!, ['/etc/hostname']);
    t.equal(r.stdout, 'the-node\n');
    t.equal(r.status, 0);
  },
);

t.test('versionMatch: the match in what --version prints; a failure names the program and the exit', async (t) => {
  const d = t.testdir();
  const at = (p: string) => ({ path: p, root: '/' });
  const ok = script(d, 'rt', 'echo "rt version 1.36.3"');
  t.equal(versionMatch(at(ok), 'rt', /version (\d+)\.(\d+)/)[0], 'version 1.36');
  t.throws(() => versionMatch(at(ok), 'rt', /v(9)/), { message: `${ok} --version did not print a rt version (exit 0)` });
  const bad = script(d, 'bad', 'echo "bad version 1.0"; exit 3');
  t.throws(() => versionMatch(at(bad), 'bad', /version/), { message: `${bad} --version did not print a bad version (exit 3)` });
  const missing = path.join(d, 'missing');
  t.throws(() => versionMatch(at(missing), 'x', /./), {
    message: `cannot run ${missing} --version: no such file or directory (ENOENT)`,
  });
});

t.test("failureWords: a runtime's own words for a failed run (its last stderr line, logrus's msg unquoted), else why", async (t) => {
  const run = (script: string) => runRuntimeBinary({ path: '/bin/sh', root: '/' }, ['-c', script]);
  t.equal(
    failureWords(
      run(
        `echo 'time="2026-11-27T19:00:00Z" level=info msg="starting"' >&2; echo 'time="2026-11-27T19:00:01Z" level=fatal msg="unable to decode configuration /etc/crio/crio.conf: toml: line 1 (last key \\"crio\\"): bad"' >&2; exit 1`,
      ),
    ),
    'unable to decode configuration /etc/crio/crio.conf: toml: line 1 (last key "crio"): bad',
  );
  t.equal(
    failureWords(run("echo 'containerd: failed to load TOML: /etc/containerd/config.toml: (2, 2): bad' >&2; exit 1")),
    'containerd: failed to load TOML: /etc/containerd/config.toml: (2, 2): bad',
  );
  t.equal(failureWords(run('exit 3')), 'exit 3', 'nothing said: the exit status');
  t.equal(
    failureWords(runRuntimeBinary({ path: '/nonexistent/crio', root: '/' }, ['config'])),
    'no such file or directory (ENOENT)',
    'not run: why',
  );
});
