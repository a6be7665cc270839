// The envhook.io/* annotations of one pod read with the node's own readers: valid ones parsed,
// each invalid one a problem with the node's message, unknown and misspelt keys named.
import t from 'tap';
import { parseManifest } from '../../src/manifest/read.ts';
import { podsOf } from '../../src/manifest/pods.ts';
import { podFacts } from '../../src/manifest/pod-facts.ts';
import { readPodAnnotations } from '../../src/lint/read-annotations.ts';

/** Reads the annotations of a Pod written as YAML lines under `annotations:`. */
function read(annotations: string) {
  const doc = parseManifest('pod.yaml', `kind: Pod\nmetadata:\n  annotations:\n${annotations}\nspec: {containers: [{name: app}]}\n`)
    .docs[0]!;
  return readPodAnnotations(podFacts(podsOf(doc)[0]!));
}

const CANARY = 'CANARY-read-annotations-value';

t.test('valid annotations: parsed as the node parses them', async (t) => {
  const { values, problems } = read(
    [
      `    envhook.io/env: '{"app": [{"name": "A", "value": "${CANARY}"}]}'`,
      `    envhook.io/envFrom: '{"app": [{"fileRef": {"volumeName": "cfg", "path": "a.env"}}]}'`,
      `    envhook.io/serviceLinks: '{"app": false}'`,
      `    envhook.io/volumeOwners: '[{"volume": "keys", "defaultUser": 1000}]'`,
      `    envhook.io/evictUnapplied: "true"`,
    ].join('\n'),
  );
  t.same(problems, []);
  t.same(values.env, { app: [{ name: 'A', value: CANARY }] });
  t.same(values.serviceLinks, { app: false });
  t.equal(values.envFrom?.app?.length, 1);
  t.same(values.ownersRaw, [{ volume: 'keys', defaultUser: 1000 }], 'written back as written');
  t.equal(values.owners?.[0]?.volume, 'keys');
});

t.test("invalid: the node's message, at its JSON path; no value echoed", async (t) => {
  const { problems } = read(
    [
      `    envhook.io/env: '{"app": [{"name": "A"}]}'`,
      `    envhook.io/serviceLinks: '{"app": ${CANARY}'`,
      '    envhook.io/envFrom: {app: []}',
    ].join('\n'),
  );
  t.same(problems, [
    { key: 'envhook.io/env', path: '/app/0', message: 'must have exactly one of "value" or "valueFrom"', severity: 'error' },
    { key: 'envhook.io/serviceLinks', path: '', message: 'is not valid JSON', severity: 'error' },
    { key: 'envhook.io/envFrom', path: '', message: 'must be a string', severity: 'error' },
  ]);
  t.notMatch(JSON.stringify(problems), CANARY);
});

t.test('evictUnapplied: a string; only "true" asks', async (t) => {
  t.same(read('    envhook.io/evictUnapplied: true').problems, [
    { key: 'envhook.io/evictUnapplied', path: '', severity: 'error', message: 'must be a string: "true" (quoted)' },
  ]);
  t.match(read('    envhook.io/evictUnapplied: "yes"').problems, [{ severity: 'warning', message: /only "true" asks for eviction/ }]);
  t.same(read('    envhook.io/evictUnapplied: "false"').problems, []);
});

t.test('the applied mark: a warning; an unknown key: an error naming the nearest one', async (t) => {
  t.match(read('    envhook.io/applied: sha256:00').problems, [
    { key: 'envhook.io/applied', severity: 'warning', message: /set by envhook on the node/ },
  ]);
  t.same(read(`    envhook.io/evn: '{}'`).problems, [
    { key: 'envhook.io/evn', path: '', severity: 'error', message: 'not an envhook annotation (did you mean "envhook.io/env"?)' },
  ]);
  t.same(
    read(`    envhook.io/something: x`).problems.map((p) => p.message),
    ['not an envhook annotation'],
  );
  t.same(read('    other.io/x: y').problems, [], 'other annotations are not ours');
});
