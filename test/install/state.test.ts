// state.json: read back (absent is an empty state; a broken one an error that quotes nothing),
// written as a change (removed once no install is left), and the questions install and
// uninstall ask of it.
import t, { type Test } from 'tap';
import { makeLayout } from '../../src/install/layout.ts';
import {
  markedFiles,
  marks,
  ownedByOther,
  readState,
  recordedHash,
  stateChange,
  type RuntimeRecord,
  type State,
} from '../../src/install/state.ts';

const edit = {
  file: '/etc/containerd/conf.d/nri.toml',
  table: ['plugins', 'io.containerd.nri.v1.nri'],
  key: 'disable',
  from: 'disable = true',
  to: 'disable = false',
};
const rec = (files: Record<string, string>, blocks: string[] = [], more: Partial<RuntimeRecord> = {}): RuntimeRecord => ({
  config: '/etc/containerd/config.toml',
  files,
  blocks,
  ...more,
});

function layoutWith(t: Test, state?: string) {
  const root = t.testdir(state === undefined ? {} : { opt: { eh: { 'state.json': state } } });
  return makeLayout('containerd', { root, prefix: '/opt/eh' });
}

t.test('readState: no file is an empty state; a valid one reads back', async (t) => {
  t.same(readState(layoutWith(t)), { version: 1, runtimes: {} });
  const s: State = {
    version: 1,
    runtimes: { containerd: rec({ '/opt/eh/envhook': 'ab' }, ['/etc/containerd/config.toml'], { edits: [edit], dirs: ['/opt/eh'] }) },
  };
  t.same(readState(layoutWith(t, JSON.stringify(s))), s);
  const nri: State = { version: 1, runtimes: { 'crio-nri': rec({}, [], { nriRequired: true }), 'containerd-nri': rec({}) } };
  t.same(readState(layoutWith(t, JSON.stringify(nri))), nri, 'nriRequired recorded, or absent (a state file from before it was)');
});

t.test('readState: anything but our shape is refused in one line, naming the file only', async (t) => {
  const bad = [
    'CANARY{',
    '{"version":2,"runtimes":{}}',
    '{"version":1,"runtimes":null}',
    '{"version":1,"runtimes":{"crio":{"files":{},"blocks":"x"}}}',
    '{"version":1,"runtimes":{"crio":{"files":null,"blocks":[]}}}',
    '{"version":1,"runtimes":{"crio":{"files":{},"blocks":[],"dirs":[1]}}}',
    '{"version":1,"runtimes":{"crio-nri":{"files":{},"blocks":[],"nriRequired":"yes"}}}',
    '{"version":1,"runtimes":{"crio":{"files":{},"blocks":[],"edits":[{"file":"/f","table":[],"key":"k","to":"x"}]}}}',
  ];
  for (const text of bad) {
    t.throws(
      () => readState(layoutWith(t, text)),
      { message: '/opt/eh/state.json is not an envhook install state file', cause: { message: 'state syntax' } },
      text,
    );
  }
  const root = t.testdir({ opt: { eh: { 'state.json': {} } } });
  t.throws(() => readState(makeLayout('crio', { root, prefix: '/opt/eh' })), {
    message: 'cannot read /opt/eh/state.json: is a directory, not a file (EISDIR)',
  });
});

t.test('stateChange: the state as indented JSON, or removed when no runtime is left', async (t) => {
  const l = layoutWith(t);
  const s: State = { version: 1, runtimes: { crio: rec({}) } };
  const c = stateChange(l, s, Buffer.from('old'));
  t.equal(c.file, '/opt/eh/state.json');
  t.equal(c.after!.toString(), JSON.stringify(s, null, 2) + '\n');
  t.same(c.before, Buffer.from('old'));
  t.equal(c.mode, 0o644);
  t.equal(stateChange(l, { version: 1, runtimes: {} }, Buffer.from('old')).after, undefined);
});

t.test('ownedByOther, recordedHash, marks, markedFiles', async (t) => {
  const s: State = {
    version: 1,
    runtimes: {
      containerd: rec({ '/opt/eh/envhook': 'h1' }, ['/etc/containerd/config.toml']),
      'containerd-nri': rec({ '/opt/eh/envhook': 'h2', '/opt/nri/plugins/50-envhook': 'h3' }, [], { edits: [edit] }),
    },
  };
  t.equal(ownedByOther(s, 'containerd', '/opt/eh/envhook'), true);
  t.equal(ownedByOther(s, 'containerd-nri', '/opt/nri/plugins/50-envhook'), false, 'its own file');
  t.equal(ownedByOther(s, 'crio', '/opt/nri/plugins/50-envhook'), true);
  t.same(recordedHash(s, '/opt/eh/envhook'), ['h1', 'h2']);
  t.same(recordedHash(s, '/nope'), []);
  t.equal(marks(s.runtimes.containerd!, '/etc/containerd/config.toml'), true);
  t.equal(marks(s.runtimes['containerd-nri']!, edit.file), true);
  t.equal(marks(s.runtimes['containerd-nri']!, '/etc/containerd/config.toml'), false);
  t.same(
    markedFiles(
      rec({}, ['/a', '/b'], {
        edits: [
          { ...edit, file: '/a' },
          { ...edit, file: '/c' },
        ],
      }),
    ),
    ['/a', '/b', '/c'],
  );
});
