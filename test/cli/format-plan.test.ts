// The --dry-run plan as text: names, sources, removals, owners; never a value.
import t from 'tap';
import { formatPlan } from '../../src/cli/format-plan.ts';

t.test('every part of the plan, one line each', async (t) => {
  t.equal(
    formatPlan({
      container: 'app',
      sandbox: false,
      env: [{ name: 'A', source: 'value' }],
      skipped: [{ name: 'M', source: 'volume "v": file "f": key "K" (optional, key not found)' }],
      removed: ['X_PORT'],
      owners: [{ volume: 'keys', path: 'a/b', uid: 1000, hostUid: 101000 }],
    }),
    [
      'container: app',
      'env: 1',
      '  set A from value',
      '  not set M: volume "v": file "f": key "K" (optional, key not found)',
      'removed service variables: 1',
      '  X_PORT',
      'owners: 1',
      '  volume "keys" "a/b" uid 1000 (host 101000)',
      '',
    ].join('\n'),
  );
});

t.test('a sandbox, an unnamed container', async (t) => {
  t.equal(
    formatPlan({ container: undefined, sandbox: true, env: [], removed: [], owners: [] }),
    'container: (unnamed)\nsandbox: passed through untouched\n',
  );
  t.equal(
    formatPlan({ container: 'a', sandbox: false, env: [], removed: [], owners: [] }),
    'container: a\nenv: 0\nremoved service variables: 0\nowners: 0\n',
  );
});

t.test('a path or file name the pod author wrote: bidi and format characters escaped, one line each', async (t) => {
  t.equal(
    formatPlan({
      container: 'app',
      sandbox: false,
      env: [{ name: 'A', source: 'volume "v": file "x\u202etxt.sh": key "A"' }],
      removed: [],
      owners: [{ volume: 'keys', path: 'a\u2066b\u200b', uid: 1, hostUid: 1 }],
    }),
    [
      'container: app',
      'env: 1',
      '  set A from volume "v": file "x\\u202etxt.sh": key "A"',
      'removed service variables: 0',
      'owners: 1',
      '  volume "keys" "a\\u2066b\\u200b" uid 1 (host 1)',
      '',
    ].join('\n'),
  );
});
