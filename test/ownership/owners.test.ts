// The owners of a volume as written to disk, shared by the start and the watcher.
import t from 'tap';
import { ownersOf } from '../../src/ownership/owners.ts';
import { normalize } from '../../src/ownership/annotation.ts';

const [entry] = normalize([{ volume: 'keys', defaultUser: 1000, items: [{ path: 'a/b', user: 0 }] }]);
const USERNS = { kind: 'userns' as const, mappings: [{ containerID: 0, hostID: 100000, size: 65536 }] };

t.test('as is, idmapped as is, mapped through a user namespace', async (t) => {
  t.same(
    ownersOf(entry!, {
      kind: 'none',
    }),
    { defaultOwner: { uid: 1000, hostUid: 1000 }, items: new Map([['a/b', { uid: 0, hostUid: 0 }]]) },
  );
  t.same(ownersOf(entry!, { kind: 'idmapped' }).defaultOwner, { uid: 1000, hostUid: 1000 });
  t.same(ownersOf(entry!, USERNS), {
    defaultOwner: { uid: 1000, hostUid: 101000 },
    items: new Map([['a/b', { uid: 0, hostUid: 100000 }]]),
  });
  const [bare] = normalize([{ volume: 'keys' }]);
  t.same(ownersOf(bare!, USERNS), { defaultOwner: undefined, items: new Map() });
});

t.test("a UID outside the mapping: the start's message", async (t) => {
  const [out] = normalize([{ volume: 'keys', items: [{ path: 'k', user: 70000 }] }]);
  t.throws(() => ownersOf(out!, USERNS), {
    message:
      'volume "keys": item path "k": user 70000 is outside the container\'s user namespace (linux.uidMappings: 0-65535 → 100000-165535)',
  });
});
