// hooks/envhook-runtime on `exec`: the same argv table as src/oci/runc-exec-args.ts; the
// bundle from the runtime's `state` (with this call's global options); envhook only for
// `--process` into a container whose config.json carries the names mark. A fake runtime
// answers `state` as runc prints it; a fake envhook shows what it was given.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { BUSYBOX, whichSync } from '../helpers/bundle.ts';
import { fakeExecutable, runFront } from '../helpers/shim/front.ts';
import { EXEC_ARGV_CASES } from '../oci/runc-exec-args.cases.ts';
import { EXEC_SIDECAR, writeExecSidecar } from '../../src/bundle/exec-sidecar.ts';
import { execEnv } from '../../src/apply/exec-env.ts';

const SHELLS: [string, string[] | undefined][] = [
  ['dash', whichSync('dash') ? ['dash'] : undefined],
  ['busybox ash', BUSYBOX ? [BUSYBOX, 'sh'] : undefined],
  ['bash --posix', whichSync('bash') ? ['bash', '--posix'] : undefined],
];

const MARK = '{"set":["A"],"removed":[]}';

/** `runc state` output (Go's MarshalIndent, two spaces), annotations one level deeper. */
function stateJson(bundle: string, annotations: Record<string, string> = {}): string {
  const escaped = JSON.stringify(bundle).replace(/&/g, '\\u0026');
  const ann = JSON.stringify(annotations, null, 2).replace(/\n/g, '\n  ');
  return `{\n  "ociVersion": "1.0.2-dev",\n  "id": "c1",\n  "pid": 42,\n  "status": "running",\n  "bundle": ${escaped},\n  "rootfs": "/r",\n  "created": "2026-01-01T00:00:00Z",\n  "annotations": ${ann},\n  "owner": ""\n}\n`;
}

function setup(dir: string) {
  const stateFile = path.join(dir, 'state.json');
  const stateLog = path.join(dir, 'state.log');
  const runtime = fakeExecutable(
    path.join(dir, 'bin/real-runc'),
    'runtime',
    `case " $* " in *" state "*) printf '%s\\n' "$*" >>${JSON.stringify(stateLog)}; cat ${JSON.stringify(stateFile)}; exit "\${FAKE_STATE_STATUS:-0}" ;; esac\n`,
  );
  const envhook = fakeExecutable(path.join(dir, 'bin/envhook'), 'envhook', 'echo "BUNDLE=${ENVHOOK_EXEC_BUNDLE-unset}"\n');
  fs.writeFileSync(path.join(dir, 'envhook.json'), '{}');
  const bundle = (name: string, annotations: string | undefined) => {
    const b = path.join(dir, name);
    fs.mkdirSync(b, { recursive: true });
    if (annotations !== undefined) fs.writeFileSync(path.join(b, 'config.json'), `{"ociVersion":"1.0.2","annotations":{${annotations}}}`);
    return b;
  };
  return {
    env: { ENVHOOK_RUNTIME: runtime, ENVHOOK_BIN: envhook, ENVHOOK_CONFIG: path.join(dir, 'envhook.json') },
    state: (bundleDir: string, annotations?: Record<string, string>) => fs.writeFileSync(stateFile, stateJson(bundleDir, annotations)),
    stateCalls: () => (fs.existsSync(stateLog) ? fs.readFileSync(stateLog, 'utf8').split('\n').filter(Boolean) : []),
    bundle,
  };
}

for (const [name, shell] of SHELLS) {
  t.test(`exec under ${name}: the argv table, a marked container`, { skip: shell ? false : `${name} not installed` }, async (t) => {
    const s = setup(t.testdir({}));
    const marked = s.bundle('marked', `"io.kubernetes.cri.container-name":"app","envhook.io/applied-env":${JSON.stringify(MARK)}`);
    s.state(marked);
    for (const c of EXEC_ARGV_CASES) {
      const argv = [...(c.globals ?? []), 'exec', ...c.argv];
      const before = s.stateCalls().length;
      const r = runFront(argv, s.env, { shell: shell! });
      t.equal(r.status, 0, r.stderr);
      const needed = c.process !== undefined && c.id !== undefined;
      const expected = needed ? [`BUNDLE=${marked}`, 'envhook', 'shim', ...argv, 'runtime', ...argv] : ['runtime', ...argv];
      t.same(r.lines, expected, JSON.stringify(argv));
      t.same(
        s.stateCalls().slice(before),
        needed ? [[...(c.globals ?? []), 'state', c.id].join(' ')] : [],
        `${JSON.stringify(argv)}: state asked ${needed ? 'once, with the global options' : 'never'}`,
      );
    }
  });

  t.test(`exec under ${name}: which containers reach envhook`, { skip: shell ? false : `${name} not installed` }, async (t) => {
    const s = setup(t.testdir({}));
    const argv = ['--root', '/r', 'exec', '--process', '/p.json', 'c1'];
    const run = (what: string, expected: 'runtime' | 'envhook', bundleHint?: string) => {
      const r = runFront(argv, s.env, { shell: shell! });
      t.equal(r.status, 0, `${what}: ${r.stderr}`);
      t.same(
        r.lines,
        expected === 'runtime' ? ['runtime', ...argv] : [`BUNDLE=${bundleHint ?? 'unset'}`, 'envhook', 'shim', ...argv, 'runtime', ...argv],
        what,
      );
    };
    const plain = s.bundle('plain', '"io.kubernetes.cri.container-name":"app","envhook.io/env":"{}","envhook.io/applied":"sha256:00"');
    s.state(plain);
    run('no names mark (not even with other envhook annotations)', 'runtime');
    const marked = s.bundle('marked', `"envhook.io/applied-env":${JSON.stringify(MARK)}`);
    s.state(plain, { bundle: marked, 'io.kubernetes.cri.sandbox-id': 'x' });
    run('a "bundle" annotation pointing at a marked bundle is not the bundle', 'runtime');
    s.state(marked);
    run('marked', 'envhook', marked);
    const escapedMark = s.bundle('escaped', `"envhook.io\\/applied-env":${JSON.stringify(MARK)}`);
    s.state(escapedMark);
    run('the mark written with \\/', 'envhook', escapedMark);
    const uMark = s.bundle('u-escaped', `"envhook.io/\\u0061pplied-env":${JSON.stringify(MARK)}`);
    s.state(uMark);
    run('the mark written with \\u0061', 'envhook', uMark);
    const amp = s.bundle('a&b', `"envhook.io/applied-env":${JSON.stringify(MARK)}`);
    s.state(amp);
    run('a bundle path the state escapes (&): envhook reads the state itself', 'envhook');
    const gone = s.bundle('gone', undefined);
    s.state(gone);
    run('a bundle without config.json: envhook reports it', 'envhook', gone);
    s.state(marked);
    const failed = runFront(argv, { ...s.env, FAKE_STATE_STATUS: '1' }, { shell: shell! });
    t.same(failed.lines, ['runtime', ...argv], 'state fails (no such container): the runtime says so itself');
    const stale = runFront(['exec', 'c1', 'env'], { ...s.env, ENVHOOK_EXEC_BUNDLE: '/stale' }, { shell: shell! });
    t.same(stale.lines, ['runtime', 'exec', 'c1', 'env'], 'without --process: the runtime at once');
  });
}

// The exec sidecar (src/bundle/exec-sidecar.ts) that envhook's create leaves: the front swaps the
// process file's env for the exec env itself, with no Node, only when every guard holds.
const HOSTILE = `CANARY'"env":["x"]\\ $(id) \`id\`\n'\\''`;
const ORIGINAL_ENV = ['PATH=/bin', `A=old ${HOSTILE}`, 'KEEP=1', 'GONE_SERVICE_HOST=10.0.0.1'];
const FINAL_ENV = ['PATH=/bin', `A=new ${HOSTILE}`, 'KEEP=1', `B=added ${HOSTILE}`];
const SIDECAR_MARK = { set: ['A', 'B'], removed: ['GONE_SERVICE_HOST'] };

for (const [name, shell] of SHELLS) {
  t.test(`exec under ${name}: the sidecar, no Node`, { skip: shell ? false : `${name} not installed` }, async (t) => {
    const dir = t.testdir({});
    const s = setup(dir);
    const bundle = s.bundle('sidecar', undefined);
    // config.json as containerd writes it (Go: compact, & < > escaped), and PID 1's env after envhook.
    const goJson = (v: unknown) => JSON.stringify(v).replace(/&/g, '\\u0026').replace(/</g, '\\u003c').replace(/>/g, '\\u003e');
    const original = goJson({
      ociVersion: '1.0.2',
      process: { args: ['sleep'], env: ORIGINAL_ENV, cwd: '/' },
      annotations: { 'envhook.io/applied-env': JSON.stringify(SIDECAR_MARK) },
    });
    fs.writeFileSync(path.join(bundle, 'config.json'), original);
    const sidecar = {
      bundle,
      id: 'c1',
      original,
      originalEnv: ORIGINAL_ENV,
      finalEnv: FINAL_ENV,
      mark: SIDECAR_MARK,
      where: 'config.json',
    };
    t.ok(writeExecSidecar(sidecar), 'sidecar written');
    t.equal(fs.statSync(path.join(bundle, EXEC_SIDECAR)).mode & 0o777, 0o600, 'sidecar 0600: it holds values');
    s.state(bundle);
    const procDir = path.join(dir, 'tmp');
    fs.mkdirSync(procDir);
    const processFile = path.join(procDir, 'runc-process1');
    const execProcess = (env: string[], extra = {}) =>
      goJson({ terminal: false, user: { uid: 0, gid: 0 }, args: ['sh', '-c', 'env'], env, cwd: '/', ...extra }) + '\n';
    const argv = ['--root', '/r', 'exec', '--process', processFile, '--detach', 'c1'];
    const expectedEnv = execEnv(ORIGINAL_ENV, SIDECAR_MARK, FINAL_ENV, 'x');

    fs.writeFileSync(processFile, execProcess(ORIGINAL_ENV), { mode: 0o600 });
    let r = runFront(argv, s.env, { shell: shell! });
    t.equal(r.status, 0, r.stderr);
    t.same(r.lines, ['runtime', ...argv], 'the runtime at once: no envhook run');
    const written = JSON.parse(fs.readFileSync(processFile, 'utf8'));
    t.same(written.env, expectedEnv, 'the exec env: set names with PID 1 values, removed names gone, the rest in place');
    t.same(
      { ...written, env: undefined },
      { ...JSON.parse(execProcess(ORIGINAL_ENV)), env: undefined },
      'everything else as the runtime gave it',
    );
    t.equal(fs.statSync(processFile).mode & 0o777, 0o600, 'process file 0600');
    t.same(fs.readdirSync(procDir), ['runc-process1'], 'no temporary file left');
    t.notMatch(r.stdout + r.stderr, /CANARY|old|added/, 'no value printed');

    const reached = (what: string, write: () => void) => {
      write();
      const before = fs.readFileSync(processFile, 'utf8');
      const r2 = runFront(argv, s.env, { shell: shell! });
      t.equal(r2.status, 0, `${what}: ${r2.stderr}`);
      t.equal(r2.lines[1], 'envhook', `${what}: envhook decides`);
      t.equal(fs.readFileSync(processFile, 'utf8'), before, `${what}: the front left the file alone`);
    };
    reached('an exec with its own env (TERM of a tty exec)', () =>
      fs.writeFileSync(processFile, execProcess([...ORIGINAL_ENV, 'TERM=xterm'])),
    );
    reached('an env array that only starts like the original', () => fs.writeFileSync(processFile, execProcess(ORIGINAL_ENV.slice(0, 2))));
    reached('the original env under another key ("xenv")', () =>
      fs.writeFileSync(processFile, execProcess(['X=1'], { note: { env: ORIGINAL_ENV } }).replace('"note":{"env"', '"note":{"xenv"')),
    );
    reached('a process file written another way (pretty-printed)', () =>
      fs.writeFileSync(processFile, JSON.stringify(JSON.parse(execProcess(ORIGINAL_ENV)), null, 2)),
    );
    fs.writeFileSync(processFile, execProcess(ORIGINAL_ENV));
    const link = path.join(procDir, 'link');
    fs.symlinkSync(processFile, link);
    r = runFront(['exec', '--process', link, 'c1'], s.env, { shell: shell! });
    t.equal(r.lines[1], 'envhook', 'a process file that is a symlink: envhook decides');
    fs.rmSync(link);
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(path.join(bundle, 'config.json'), later, later);
    reached('config.json newer than the sidecar (rewritten since)', () => fs.writeFileSync(processFile, execProcess(ORIGINAL_ENV)));
    fs.utimesSync(path.join(bundle, 'config.json'), new Date(0), new Date(0));
    fs.chownSync(path.join(bundle, EXEC_SIDECAR), 1000, 1000);
    reached('a sidecar owned by another user', () => fs.writeFileSync(processFile, execProcess(ORIGINAL_ENV)));
    fs.chownSync(path.join(bundle, EXEC_SIDECAR), 0, 0);
    writeExecSidecar({ ...sidecar, id: 'c0' });
    reached("the sidecar of another container (an earlier create's id)", () => fs.writeFileSync(processFile, execProcess(ORIGINAL_ENV)));
    writeExecSidecar({ ...sidecar, id: '1e1' });
    fs.writeFileSync(processFile, execProcess(ORIGINAL_ENV));
    const numeric = runFront(
      argv.map((a) => (a === 'c1' ? '10' : a)),
      s.env,
      { shell: shell! },
    );
    t.equal(numeric.lines[1], 'envhook', 'ids compared as text: the sidecar of "1e1" is not the one of "10"');
    writeExecSidecar(sidecar);
    fs.writeFileSync(
      path.join(bundle, EXEC_SIDECAR),
      fs.readFileSync(path.join(bundle, EXEC_SIDECAR), 'utf8').replace('sidecar 1\n', 'sidecar 2\n'),
    );
    reached('a sidecar of another format', () => fs.writeFileSync(processFile, execProcess(ORIGINAL_ENV)));
    writeExecSidecar(sidecar);
    r = runFront(argv, s.env, { shell: shell! });
    t.same(r.lines, ['runtime', ...argv], 'all guards hold again: the runtime at once');
  });
}
