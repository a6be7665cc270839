// The names-only view of the changes that logs and --dry-run show: no value can reach it.
import t from 'tap';
import { summarize, type Changes } from '../../src/plan/changes.ts';

const CANARY = 'CANARY-summary-3c';

t.test('names, sources, removals, skipped and owned files; never a value', async (t) => {
  const changes: Changes = {
    container: 'app',
    sandbox: false,
    env: {
      env: [`A=${CANARY}`],
      values: new Map([['A', CANARY]]),
      set: [{ name: 'A', source: 'value' }],
      removed: ['X_PORT'],
      skipped: [{ name: 'M', source: 's' }],
    },
    owners: [],
    mark: 'sha256:00',
  };
  const owned = [{ volume: 'keys', path: 'k', uid: 1000, hostUid: 1000 }];
  const plan = summarize(changes, owned);
  t.same(plan, {
    container: 'app',
    sandbox: false,
    env: [{ name: 'A', source: 'value' }],
    removed: ['X_PORT'],
    skipped: [{ name: 'M', source: 's' }],
    owners: owned,
  });
  t.notMatch(JSON.stringify(plan), CANARY);
});

t.test('no env asked: no skipped list; a sandbox: nothing', async (t) => {
  t.same(
    summarize(
      {
        container: 'app',
        sandbox: false,
        env: undefined,
        owners: [],
        mark: undefined,
      },
      [],
    ),
    { container: 'app', sandbox: false, env: [], removed: [], owners: [] },
  );
  t.same(
    summarize(
      {
        container: undefined,
        sandbox: true,
        env: undefined,
        owners: [],
        mark: undefined,
      },
      [],
    ),
    { container: undefined, sandbox: true, env: [], removed: [], owners: [] },
  );
});
