import t from 'tap';
import { toAnnotations } from '../../src/convert/to-annotations.ts';
import { MOVED_MARK } from '../../src/convert/note.ts';
import { convertPod } from '../helpers/convert-pod.ts';

const run = (yaml: string) => convertPod(toAnnotations, yaml);
const fileKeyRef = (key: string) => ({ name: key, valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'env', key } } });

t.test('env from the first fileKeyRef on moves to envhook.io/env; the entries before it stay', async (t) => {
  const r = run(`apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: app
      env:
        - {name: KEEP, value: '1'}
        - {name: A, valueFrom: {fileKeyRef: {volumeName: cfg, path: env, key: A}}}
        - {name: B, value: 'x$(A)'}
  volumes: [{name: cfg, emptyDir: {}}]
`);
  t.equal(r.changed, true);
  t.same(r.notes, []);
  t.same(r.out.spec.containers[0].env, [{ name: 'KEEP', value: '1' }]);
  t.same(JSON.parse(r.out.metadata.annotations['envhook.io/env']), { app: [fileKeyRef('A'), { name: 'B', value: 'x$(A)' }] });
});

t.test("env after convert's own mark moves back even without a fileKeyRef, and goes before the annotation's entries", async (t) => {
  const r = run(`kind: Pod
metadata:
  annotations:
    envhook.io/env: '{"app":[{"name":"OLD","value":"o"}]}'
spec:
  containers:
    - name: app
      env:
        - {name: OWN, value: '1'}
        #${MOVED_MARK}
        - {name: MOVED, value: '2'}
`);
  t.equal(r.changed, true);
  t.same(r.out.spec.containers[0].env, [{ name: 'OWN', value: '1' }]);
  t.same(JSON.parse(r.out.metadata.annotations['envhook.io/env']), {
    app: [
      { name: 'MOVED', value: '2' },
      { name: 'OLD', value: 'o' },
    ],
  });
});

t.test('an env list that moves whole leaves no empty env key; a missing metadata is created before spec', async (t) => {
  const r = run(`kind: Pod
spec:
  containers:
    - name: app
      env:
        - {name: A, valueFrom: {fileKeyRef: {volumeName: cfg, path: env, key: A}}}
`);
  t.equal(r.changed, true);
  t.notOk('env' in r.out.spec.containers[0]);
  t.same(Object.keys(r.out), ['kind', 'metadata', 'spec']);
  t.match(r.text, /envhook\.io\/env: '\{"app":\[/);
});

t.test('env stays native with a note when an entry after the fileKeyRef is not a value or fileKeyRef', async (t) => {
  const r = run(`kind: Pod
spec:
  containers:
    - name: app
      env:
        - {name: A, valueFrom: {fileKeyRef: {volumeName: cfg, path: env, key: A}}}
        - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
`);
  t.equal(r.changed, false);
  t.same(r.notes, [
    {
      annotation: 'envhook.io/env',
      path: '/app',
      message: 'stays native: from /spec/containers/0/env/0 on, not every entry is a value or fileKeyRef entry (the order must be kept)',
    },
  ]);
  t.equal(r.out.spec.containers[0].env.length, 2);
});

t.test('env stays native when the container has envhook.io/envFrom sources', async (t) => {
  const r = run(`kind: Pod
metadata:
  annotations:
    envhook.io/envFrom: '{"app":[{"fileRef":{"volumeName":"cfg","path":"all.env"}}]}'
spec:
  containers:
    - name: app
      env:
        - {name: A, valueFrom: {fileKeyRef: {volumeName: cfg, path: env, key: A}}}
  volumes: [{name: cfg, emptyDir: {}}]
`);
  t.equal(r.changed, false);
  t.equal(r.notes.length, 1);
  t.equal(r.notes[0]!.path, '/app');
  t.match(
    r.notes[0]!.message,
    /^stays native: the container has envhook\.io\/envFrom sources, which would then apply before \/spec\/containers\/0\/env\/0/,
  );
});

t.test('enableServiceLinks: false becomes {"*": false}; true is left alone; an existing annotation wins with a note', async (t) => {
  const off = run(`kind: Pod
spec:
  enableServiceLinks: false
  containers: [{name: app}]
`);
  t.equal(off.changed, true);
  t.notOk('enableServiceLinks' in off.out.spec);
  t.same(JSON.parse(off.out.metadata.annotations['envhook.io/serviceLinks']), { '*': false });

  const on = run(`kind: Pod
spec:
  enableServiceLinks: true
  containers: [{name: app}]
`);
  t.equal(on.changed, false);
  t.equal(on.out.spec.enableServiceLinks, true);

  const both = run(`kind: Pod
metadata:
  annotations:
    envhook.io/serviceLinks: '{"app":true}'
spec:
  enableServiceLinks: false
  containers: [{name: app}]
`);
  t.equal(both.changed, false);
  t.same(
    both.notes.map((n) => n.message),
    ['enableServiceLinks stays native: the pod already has an envhook.io/serviceLinks annotation'],
  );
});

t.test('KEP-5936 defaultUser and items[].user move to envhook.io/volumeOwners', async (t) => {
  const r = run(`kind: Pod
spec:
  containers: [{name: app}]
  volumes:
    - name: s
      secret:
        secretName: s
        defaultUser: 1000
        items:
          - {key: k, path: a/b, user: 2000}
          - {key: l, path: c}
    - name: e
      emptyDir: {}
`);
  t.equal(r.changed, true);
  t.same(r.notes, []);
  t.same(JSON.parse(r.out.metadata.annotations['envhook.io/volumeOwners']), [
    { volume: 's', defaultUser: 1000, items: [{ path: 'a/b', user: 2000 }] },
  ]);
  t.notOk('defaultUser' in r.out.spec.volumes[0].secret);
  t.same(r.out.spec.volumes[0].secret.items, [
    { key: 'k', path: 'a/b' },
    { key: 'l', path: 'c' },
  ]);
});

t.test('volume users stay native when the annotation already names the volume', async (t) => {
  const r = run(`kind: Pod
metadata:
  annotations:
    envhook.io/volumeOwners: '[{"volume":"s","defaultUser":5}]'
spec:
  containers: [{name: app}]
  volumes:
    - {name: s, configMap: {name: c, defaultUser: 1000}}
`);
  t.equal(r.changed, false);
  t.same(
    r.notes.map((n) => n.message),
    ['volume "s": its users stay native: envhook.io/volumeOwners already has an entry for it'],
  );
  t.equal(r.out.spec.volumes[0].configMap.defaultUser, 1000);
});

t.test('a pod with nothing to move is unchanged and gets no annotations', async (t) => {
  const r = run(`kind: Pod
spec:
  containers: [{name: app, env: [{name: A, value: '1'}]}]
`);
  t.equal(r.changed, false);
  t.same(r.notes, []);
  t.notOk('metadata' in r.out);
});
