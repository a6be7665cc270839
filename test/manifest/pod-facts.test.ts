// What lint and convert know of one pod: its envhook.io/* annotations as written, its
// containers (init ones first), and its volumes with the files they list and whether that is all.
import t from 'tap';
import { parseManifest } from '../../src/manifest/read.ts';
import { podsOf } from '../../src/manifest/pods.ts';
import { normalPath, pairFor, podFacts } from '../../src/manifest/pod-facts.ts';

const facts = (pod: object) => podFacts(podsOf(parseManifest('pod.json', JSON.stringify({ kind: 'Pod', ...pod })).docs[0]!)[0]!);

t.test('annotations: only envhook.io/*, in order, values as written (a map stays data)', async (t) => {
  const f = facts({
    metadata: {
      annotations: {
        'other.io/x': 'y',
        'envhook.io/env': '{"app": []}',
        'envhook.io/envFrom': { app: [] },
        'envhook.io/evictUnapplied': true,
      },
    },
  });
  t.same([...f.annotations.keys()], ['envhook.io/env', 'envhook.io/envFrom', 'envhook.io/evictUnapplied']);
  t.equal(f.annotations.get('envhook.io/env')!.value, '{"app": []}');
  t.same(f.annotations.get('envhook.io/envFrom')!.value, { app: [] });
  t.equal(f.annotations.get('envhook.io/evictUnapplied')!.value, true);
  t.equal(pairFor(f, 'other.io/x')?.value?.toString(), 'y');
  t.equal(facts({}).annotations.size, 0, 'no metadata');
  t.equal(pairFor(facts({}), 'envhook.io/env'), undefined);
});

t.test('containers: init containers first, each with its list and index; nameless ones skipped', async (t) => {
  const f = facts({ spec: { containers: [{ name: 'app' }, { image: 'x' }, { name: 'side' }], initContainers: [{ name: 'init' }] } });
  t.same(
    f.containers.map((c) => [c.name, c.list, c.index]),
    [
      ['init', 'initContainers', 0],
      ['app', 'containers', 0],
      ['side', 'containers', 2],
    ],
  );
});

t.test('volumes: type, listed files, and whether the list is complete', async (t) => {
  const f = facts({
    spec: {
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'cm-all', configMap: { name: 'c' } },
        {
          name: 'cm-some',
          configMap: {
            name: 'c',
            items: [
              { key: 'k', path: 'a.env' },
              { key: 'j', path: 'sub//b.env' },
            ],
          },
        },
        { name: 'info', downwardAPI: { items: [{ path: 'labels' }] } },
        { name: 'unknown', someDriver: {} },
        { path: 'no name', secret: {} },
      ],
    },
  });
  const v = Object.fromEntries(f.volumes.map((x) => [x.name, [x.type, x.files.map((l) => l.path), x.complete]]));
  t.same(v, {
    scratch: ['emptyDir', [], false],
    'cm-all': ['configMap', [], false],
    'cm-some': ['configMap', ['a.env', 'sub//b.env'], true],
    info: ['downwardAPI', ['labels'], true],
    unknown: [undefined, [], false],
  });
});

t.test('projected: each source kind lists its files; a source without items makes the list incomplete', async (t) => {
  const projected = (sources: object[]) => facts({ spec: { volumes: [{ name: 'p', projected: { sources } }] } }).volumes[0]!;
  const listed = projected([
    { secret: { name: 's', items: [{ key: 'k', path: 'tls.key' }] } },
    { downwardAPI: { items: [{ path: 'name' }] } },
    { serviceAccountToken: { path: 'token' } },
    { clusterTrustBundle: { path: 'ca.pem' } },
    { podCertificate: { credentialBundlePath: 'bundle.pem', keyPath: 'key.pem' } },
  ]);
  t.same(
    listed.files.map((f) => f.path),
    ['tls.key', 'name', 'token', 'ca.pem', 'bundle.pem', 'key.pem'],
  );
  t.equal(listed.complete, true);
  t.equal(listed.files.at(-1)!.node, undefined, 'podCertificate: one user covers its files, no per-path node');
  t.equal(projected([{ configMap: { name: 'c' } }]).complete, false, 'every key of the configMap');
  t.equal(projected([{ futureSource: { path: 'x' } }]).complete, false, 'a source kind not known');
});

t.test('normalPath: one spelling for comparing, an invalid path as is', async (t) => {
  t.equal(normalPath('./a//b'), 'a/b');
  t.equal(normalPath('a/b/'), 'a/b');
  t.equal(normalPath('../x'), '../x');
  t.equal(normalPath('/abs'), '/abs');
});
