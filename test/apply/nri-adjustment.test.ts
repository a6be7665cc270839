// The NRI applier: variables with values in first-set order, the mark, removals refused unless
// the runtime is known to apply them; a message with names and counts, never a value.
import t from 'tap';
import { toNriAdjustment } from '../../src/apply/nri-adjustment.ts';
import { EMPTY_ADJUSTMENT } from '../../src/apply/nri-adjustment.ts';
import { EnvhookError } from '../../src/errors.ts';
import type { Changes } from '../../src/plan/changes.ts';

const CANARY = 'CANARY-apply-nri-77';
const changes = (removed: string[] = []): Changes => ({
  container: 'app',
  sandbox: false,
  env: {
    env: [],
    values: new Map([
      ['Z', CANARY],
      ['A', '1'],
    ]),
    set: [
      { name: 'A', source: 'value' },
      { name: 'Z', source: 'value' },
    ],
    removed,
    skipped: [],
  },
  owners: [],
  mark: 'sha256:11',
});

t.test('env in the order first set, the mark, no removal', async (t) => {
  t.same(toNriAdjustment(changes()), {
    env: [
      { key: 'Z', value: CANARY },
      { key: 'A', value: '1' },
    ],
    removeEnv: [],
    annotations: { 'envhook.io/applied': 'sha256:11' },
  });
});

t.test('nothing asked of the env: the empty adjustment', async (t) => {
  t.equal(toNriAdjustment({ container: 'app', sandbox: false, env: undefined, owners: [], mark: undefined }), EMPTY_ADJUSTMENT);
});

t.test('removals: refused by default, with what to do; given when the runtime applies them', async (t) => {
  const err = t.throws(() => toNriAdjustment(changes(['X_SERVICE_HOST'])), EnvhookError) as EnvhookError;
  t.equal(
    err.message,
    'annotation "envhook.io/serviceLinks": container "app" would have 1 service variable removed, but NRI on this runtime drops removals: ' +
      "set enableServiceLinks: false in the pod spec instead, or give the pod runtimeClassName: envhook (envhook's runtime handler removes them)",
  );
  t.notMatch(err.message, CANARY);
  t.same(toNriAdjustment(changes(['X_SERVICE_HOST', 'X_PORT']), { removeEnv: true }).removeEnv, ['X_SERVICE_HOST', 'X_PORT']);
  t.equal(toNriAdjustment(changes(['X_SERVICE_HOST']), { guarded: true }), EMPTY_ADJUSTMENT, 'guarded: left to the runtime handler');
});

t.test('owned copies: each mount of a copied volume again, same destination and options, the copy as source', async (t) => {
  const copy = {
    place: { runDir: '/run/envhook', podUid: 'p', volume: 'keys' },
    dir: '/run/envhook/volumes/p/keys',
    snapshot: { volume: 'keys', root: { mode: 0o755, uid: 0, gid: 0 }, entries: [], visible: [], files: 0, bytes: 0 },
    mounts: [{ destination: '/keys', source: '/run/envhook/volumes/p/keys', type: 'bind', options: ['rbind', 'ro'], original: {} }],
  };
  const owners = [{ copy }] as unknown as Changes['owners'];
  const mounts = [{ destination: '/keys', source: '/run/envhook/volumes/p/keys', type: 'bind', options: ['rbind', 'ro'] }];
  t.same(toNriAdjustment({ ...changes(), env: undefined, mark: undefined, owners }), { env: [], removeEnv: [], annotations: {}, mounts });
  t.same(toNriAdjustment({ ...changes(), owners }).mounts, mounts, 'beside the env');
  t.same(
    toNriAdjustment({ ...changes(['DB_PORT']), owners }, { guarded: true }),
    { env: [], removeEnv: [], annotations: {}, mounts },
    "left to the guard's front: the mounts still point at the copies",
  );
});
