import t from 'tap';
import path from 'node:path';
import fc from 'fast-check';
import {
  describeMappings,
  hostUid,
  isIdmappedMount,
  mapId,
  mountsOf,
  resolvedPath,
  volumeTranslation,
} from '../../src/ownership/uidmap.ts';
import type { Spec } from '../../src/oci/spec.ts';
import { factsFromSpec } from '../../src/facts/spec-facts.ts';

/** The rule for a volume of a config.json: its mounts and linux.uidMappings, as the pipeline reads them. */
const translation = (spec: Spec, dir: string) => volumeTranslation(factsFromSpec(spec), dir);

const USERNS = [{ containerID: 0, hostID: 100000, size: 65536 }];

t.test('mapping through linux.uidMappings', async (t) => {
  t.equal(mapId(0, USERNS), 100000);
  t.equal(mapId(1000, USERNS), 101000);
  t.equal(mapId(65535, USERNS), 165535);
  t.equal(mapId(65536, USERNS), undefined, 'one past the range');
  const split = [
    { containerID: 0, hostID: 5000, size: 1 },
    { containerID: 1000, hostID: 200000, size: 10 },
  ];
  t.equal(mapId(0, split), 5000);
  t.equal(mapId(1, split), undefined, 'a hole between ranges');
  t.equal(mapId(1009, split), 200009);
  t.equal(mapId(5, [{ containerID: 0, hostID: 0, size: 0 }]), undefined, 'an empty range maps nothing');
  t.equal(mapId(1, [{ containerID: 0, hostID: 0xfffffffe, size: 4 }]), undefined, 'never (uid_t)-1 or beyond');
  t.equal(describeMappings(split), '0-0 → 5000-5000, 1000-1009 → 200000-200009');
});

t.test('idmapped mounts: uidMappings or the idmap/ridmap option', async (t) => {
  t.ok(isIdmappedMount({ options: ['rbind', 'idmap'] }));
  t.ok(isIdmappedMount({ options: ['ridmap'] }));
  t.ok(isIdmappedMount({ uidMappings: USERNS }));
  t.notOk(isIdmappedMount({ uidMappings: [] }));
  t.ok(isIdmappedMount({ idmapped: true }), "NRI's mount of a container in a user namespace (nri/wire/plain-data.ts)");
  t.notOk(isIdmappedMount({ idmapped: 'yes' }));
  t.notOk(isIdmappedMount({ options: ['rbind', 'ro'] }));
  t.notOk(isIdmappedMount({}));
});

t.test('which rule applies to a volume (docs/design.md#ownership)', async (t) => {
  const vol = '/var/lib/kubelet/pods/p/volumes/kubernetes.io~secret/keys';
  const spec = (mountExtra: object, linux?: object): Spec =>
    ({
      mounts: [
        { destination: '/proc', source: 'proc', type: 'proc' },
        { destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'], ...mountExtra },
        { destination: '/other', source: vol + '-other', type: 'bind', options: ['idmap'] },
      ],
      ...(linux ? { linux } : {}),
    }) as Spec;
  t.same(translation(spec({}), vol), { kind: 'none' });
  t.same(translation(spec({}, { uidMappings: USERNS }), vol), { kind: 'userns', mappings: USERNS });
  t.same(translation(spec({}, { uidMappings: [] }), vol), { kind: 'none' }, 'empty mappings: no user namespace');
  t.same(
    translation(spec({ options: ['rbind', 'ro', 'idmap'] }, { uidMappings: USERNS }), vol),
    { kind: 'idmapped' },
    'idmapped wins over the user namespace',
  );
  t.same(translation(spec({ uidMappings: USERNS, gidMappings: USERNS }, { uidMappings: USERNS }), vol), { kind: 'idmapped' });
  t.same(
    translation(spec({ source: vol + '/..data/key', options: ['idmap'] }), vol),
    { kind: 'idmapped' },
    'a file of the volume mounted alone',
  );
  t.same(translation(spec({ source: vol + '-other' }), vol), { kind: 'none' }, 'a sibling with a common prefix is not the volume');
  const twice = spec({});
  (twice.mounts as object[]).push({ destination: '/keys2', source: vol, options: ['idmap'] });
  t.equal(translation(twice, vol), 'mixed');
  t.equal(mountsOf([{ source: `${vol}/../keys` }], vol).length, 1, 'sources are normalised');

  t.equal(hostUid(1000, { kind: 'none' }), 1000);
  t.equal(hostUid(1000, { kind: 'idmapped' }), 1000);
  t.equal(hostUid(1000, { kind: 'userns', mappings: USERNS }), 101000);
  t.equal(hostUid(70000, { kind: 'userns', mappings: USERNS }), undefined);
});

t.test('resolvedPath: what path.resolve gives, for any path', async (t) => {
  const piece = fc.constantFrom('/', '.', '..', 'a', 'b.c', '/', '//');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 10 }), fc.boolean(), (pieces, absolute) => {
      const p = (absolute ? '/' : '') + pieces.join('');
      return resolvedPath(p) === path.resolve(p);
    }),
    { numRuns: 2000 },
  );
  for (const p of ['/', '/a', '/a/b.c', '/a/', '//a', '/a/./b', '/a/../b', '/a/.', '/a/..', '/.a/..b/...', 'a/b', ''])
    t.equal(resolvedPath(p), path.resolve(p), JSON.stringify(p));
});
