import t from 'tap';
import { toNative } from '../../src/convert/to-native.ts';
import { MOVED_MARK } from '../../src/convert/note.ts';
import { convertPod } from '../helpers/convert-pod.ts';

const run = (yaml: string) => convertPod(toNative, yaml);
const pod = (annotations: Record<string, unknown>, spec: string) =>
  `kind: Pod\nmetadata:\n  name: p\n  annotations:\n${Object.entries(annotations)
    .map(([k, v]) => `    ${k}: '${JSON.stringify(v)}'\n`)
    .join('')}spec:\n${spec}`;

t.test('env entries reading an emptyDir move after the container env, the first marked; the annotation goes', async (t) => {
  const env = {
    app: [
      { name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'env', key: 'A' } } },
      { name: 'B', value: '$(A)' },
    ],
  };
  const r = run(
    pod(
      { 'envhook.io/env': env },
      `  containers:\n    - name: app\n      env: [{name: OWN, value: '1'}]\n  volumes: [{name: cfg, emptyDir: {}}]\n`,
    ),
  );
  t.equal(r.changed, true);
  t.same(r.notes, []);
  t.same(r.out.spec.containers[0].env, [{ name: 'OWN', value: '1' }, ...env.app]);
  t.same(r.out.metadata, { name: 'p' });
  t.ok(r.text.includes(`#${MOVED_MARK}\n`), 'the moved mark is written before the first moved entry');
});

t.test('env stays an annotation, with the reason, for each case without a native form', async (t) => {
  const cases: [string, Record<string, unknown[]>, string, string][] = [
    ['no such container', { other: [{ name: 'A', value: '1' }] }, '/other', 'stays an annotation: the pod has no container of that name'],
    [
      'fileRef',
      {
        app: [
          { name: 'A', value: '1' },
          { name: 'B', valueFrom: { fileRef: { volumeName: 'cfg', path: 'b' } } },
        ],
      },
      '/app/1',
      'stays an annotation: fileRef (a whole file as the value) has no native form; KEP-3721 has fileKeyRef only',
    ],
    [
      'fileKeyRef on a configMap',
      { app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cm', path: 'env', key: 'A' } } }] },
      '/app/0',
      `stays an annotation: its fileKeyRef reads volume "cm", not an emptyDir of the pod; KEP-3721's fileKeyRef reads emptyDirs only`,
    ],
  ];
  for (const [name, env, path, message] of cases) {
    const r = run(
      pod(
        { 'envhook.io/env': env },
        `  containers: [{name: app}]\n  volumes: [{name: cfg, emptyDir: {}}, {name: cm, configMap: {name: c}}]\n`,
      ),
    );
    t.equal(r.changed, false, name);
    t.same(r.notes, [{ annotation: 'envhook.io/env', path, message }], name);
    t.same(JSON.parse(r.out.metadata.annotations['envhook.io/env']), env, name);
  }
});

t.test('envFrom: always a note; it keeps the same container env as an annotation', async (t) => {
  const r = run(
    pod(
      {
        'envhook.io/envFrom': { app: [{ fileRef: { volumeName: 'cfg', path: 'all.env' } }] },
        'envhook.io/env': { app: [{ name: 'A', value: '1' }] },
      },
      `  containers: [{name: app}]\n  volumes: [{name: cfg, emptyDir: {}}]\n`,
    ),
  );
  t.equal(r.changed, false);
  t.same(
    r.notes.map((n) => `${n.annotation} ${n.path}`),
    ['envhook.io/env /app', 'envhook.io/envFrom /app'],
  );
  t.match(r.notes[0]!.message, /^stays an annotation: the container also has envhook\.io\/envFrom sources/);
  t.notOk('env' in r.out.spec.containers[0]);
});

t.test('serviceLinks {"*": false} becomes enableServiceLinks: false; per-container switches stay with a note', async (t) => {
  const off = run(pod({ 'envhook.io/serviceLinks': { '*': false } }, `  containers: [{name: app}]\n`));
  t.equal(off.changed, true);
  t.equal(off.out.spec.enableServiceLinks, false);
  t.same(off.out.metadata, { name: 'p' }, 'the emptied annotations map goes');

  const per = run(pod({ 'envhook.io/serviceLinks': { app: false } }, `  containers: [{name: app}]\n`));
  t.equal(per.changed, false);
  t.notOk('enableServiceLinks' in per.out.spec);
  t.same(
    per.notes.map((n) => n.message),
    ['stays an annotation: only {"*": false} has a native form (enableServiceLinks: false); per-container switches have none'],
  );
});

t.test('volumeOwners: movable entries become defaultUser / items[].user, the others stay with their index', async (t) => {
  const owners = [
    { volume: 's', defaultUser: 1000, items: [{ path: './a/b', user: 2000 }] },
    { volume: 'e', defaultUser: 1 },
    { volume: 'c', items: [{ path: 'missing', user: 3 }] },
    { volume: 'd', defaultUser: 4 },
  ];
  const r = run(
    pod(
      { 'envhook.io/volumeOwners': owners },
      `  containers: [{name: app}]
  volumes:
    - {name: s, secret: {secretName: s, items: [{key: k, path: a/b}]}}
    - {name: e, emptyDir: {}}
    - {name: c, configMap: {name: c, items: [{key: k, path: x}]}}
    - {name: d, configMap: {name: d, defaultUser: 9}}
`,
    ),
  );
  t.equal(r.changed, true);
  t.same(r.out.spec.volumes[0].secret, { secretName: 's', items: [{ key: 'k', path: 'a/b', user: 2000 }], defaultUser: 1000 });
  t.same(
    r.notes.map((n) => `${n.path} ${n.message}`),
    [
      '/1 stays an annotation: the pod has no configMap, secret, projected or downwardAPI volume of that name',
      '/2 stays an annotation: an item path is not among the files the volume lists in its items (a native user needs the item)',
      '/3 stays an annotation: the volume already has a defaultUser',
    ],
  );
  t.same(JSON.parse(r.out.metadata.annotations['envhook.io/volumeOwners']), owners.slice(1));
  t.equal(r.out.spec.volumes[3].configMap.defaultUser, 9);
});

t.test('runtimeClassName: envhook goes with the last envhook annotation, with a note; stays while one is left', async (t) => {
  const spec = (rc: string) => `  runtimeClassName: ${rc}\n  containers: [{name: app}]\n`;
  const all = run(pod({ 'envhook.io/serviceLinks': { '*': false } }, spec('envhook')));
  t.equal(all.changed, true);
  t.equal(all.out.spec.runtimeClassName, undefined);
  t.same(
    all.notes.map((n) => `${n.annotation}: ${n.message}`),
    ['spec.runtimeClassName: removed: the pod has no envhook annotation left, and the native fields need no runtime class'],
  );
  const left = run(pod({ 'envhook.io/serviceLinks': { '*': false }, 'envhook.io/envFrom': { app: [] } }, spec('envhook')));
  t.equal(left.out.spec.runtimeClassName, 'envhook', 'an annotation left (envFrom): the handler is still needed');
  const other = run(pod({ 'envhook.io/serviceLinks': { '*': false } }, spec('gvisor')));
  t.equal(other.out.spec.runtimeClassName, 'gvisor', "another runtime class is the pod's own");
  t.same(other.notes, []);
});
