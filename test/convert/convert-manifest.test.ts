// envhook convert: the examples, a native manifest to annotations, what stays and why, JSON,
// untouched documents byte for byte, and the round trip annotations → native → annotations over
// generated pods (fast-check).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { REPO } from '../helpers/bundle.ts';
import { parseManifest } from '../../src/manifest/read.ts';
import { convertManifest } from '../../src/convert/convert-manifest.ts';
import { formatNote } from '../../src/convert/note.ts';
import { lintManifest } from '../../src/lint/lint-manifest.ts';
import { podsOf } from '../../src/manifest/pods.ts';
import { podFacts } from '../../src/manifest/pod-facts.ts';

const example = (f: string) => fs.readFileSync(path.join(REPO, 'examples/pods', f), 'utf8');
const convert = (text: string, to: 'native' | 'annotations', file = 'pod.yaml') => {
  const r = convertManifest(parseManifest(file, text), to);
  return { ...r, notes: r.notes.map(formatNote) };
};
/** The envhook.io/* annotations of every pod of a manifest, parsed. */
function annotationsOf(text: string): Record<string, unknown>[] {
  const m = parseManifest('x.yaml', text);
  return m.docs
    .flatMap(podsOf)
    .map((ref) => Object.fromEntries([...podFacts(ref).annotations].map(([k, v]) => [k, JSON.parse(v.value as string)])));
}

t.test('KEP-3721 story 1: the fileKeyRef moves to the container env; the rest of the file is as it was', async (t) => {
  const src = example('kep-3721-story1.yaml');
  const r = convert(src, 'native');
  t.same(r.notes, [
    'pod.yaml:17:3: spec.runtimeClassName: note: removed: the pod has no envhook annotation left, and the native fields need no runtime class',
  ]);
  const expected = src
    .replace(/  annotations:\n    envhook\.io\/env: \|\n(      .*\n)+/, '')
    .replace(/  # The node's runtime handler .*\n  runtimeClassName: envhook\n/, '')
    .replace(
      "      command: ['sh', '-c', 'echo \"CONFIG_VAR=$CONFIG_VAR\"; sleep 3600']\n",
      (line) => `${line}      env:
        # envhook convert: entries from here on came from envhook.io/env
        - name: CONFIG_VAR
          valueFrom:
            fileKeyRef:
              volumeName: config
              path: config.env
              key: CONFIG_VAR
`,
    );
  t.equal(r.text, expected);
  t.same(lintManifest(parseManifest('n.yaml', r.text), { mode: 'shim' }), [], 'the native form lints clean');
  const back = convert(r.text, 'annotations');
  t.same(annotationsOf(back.text), annotationsOf(src), 'and back');
});

t.test('KEP-3721 story 2: the service-link switch moves; env stays beside envFrom, with notes', async (t) => {
  const src = example('kep-3721-story2.yaml');
  const r = convert(src, 'native', 'story2.yaml');
  t.same(r.notes, [
    'story2.yaml:11:5: envhook.io/env /main: note: stays an annotation: the container also has envhook.io/envFrom sources, which must apply before these entries',
    'story2.yaml:19:5: envhook.io/envFrom /main: note: stays an annotation: whole-file env sources (fileRef) and volume sources (volumeRef) have no native form; KEP-3721 has fileKeyRef only',
  ]);
  t.equal(
    r.text,
    src
      .replace(`    envhook.io/serviceLinks: '{"*": false}'\n`, '')
      .replace('  restartPolicy: Never\n', '  restartPolicy: Never\n  enableServiceLinks: false\n'),
  );
  t.same(annotationsOf(convert(r.text, 'annotations').text), annotationsOf(src));
});

t.test('KEP-5936 sshd: an item path the secret does not list in items has no native form', async (t) => {
  const src = example('kep-5936-sshd.yaml');
  const r = convert(src, 'native', 'sshd.yaml');
  t.equal(r.text, src, 'unchanged, byte for byte');
  t.equal(r.changed, false);
  t.same(r.notes, [
    'sshd.yaml:18:5: envhook.io/volumeOwners /0: note: stays an annotation: an item path is not among the files the volume lists in its items (a native user needs the item)',
  ]);
});

const NATIVE = `# a native manifest for a newer kubelet
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      enableServiceLinks: false
      containers:
        - name: app
          env:
            - name: OWN
              value: "1"   # kept native: before the first fileKeyRef
            - name: TOKEN
              valueFrom:
                fileKeyRef: {volumeName: config, path: a.env, key: TOKEN, optional: true}
            - name: URL
              value: https://$(TOKEN)@example.com
        - name: side
          env:
            - name: A
              valueFrom:
                fileKeyRef: {volumeName: config, path: a.env, key: A}
            - name: B
              valueFrom:
                secretKeyRef: {name: s, key: b}
          volumeMounts: [{name: config, mountPath: /config}]
      volumes:
        - name: config
          emptyDir: {}
        - name: keys
          secret:
            secretName: keys
            defaultUser: 1000
            items:
              - {key: k, path: key, user: 0}
        - name: token
          projected:
            sources:
              - serviceAccountToken: {path: token, user: 1001}
`;

t.test('native fields to annotations; what cannot move stays native, with a note', async (t) => {
  const r = convert(NATIVE, 'annotations', 'web.yaml');
  t.same(r.notes, [
    'web.yaml:22:15: envhook.io/env /side: note: stays native: from /spec/containers/1/env/0 on, not every entry is a value or fileKeyRef entry (the order must be kept)',
  ]);
  t.same(annotationsOf(r.text), [
    {
      'envhook.io/env': {
        app: [
          { name: 'TOKEN', valueFrom: { fileKeyRef: { volumeName: 'config', path: 'a.env', key: 'TOKEN', optional: true } } },
          { name: 'URL', value: 'https://$(TOKEN)@example.com' },
        ],
      },
      'envhook.io/serviceLinks': { '*': false },
      'envhook.io/volumeOwners': [
        { volume: 'keys', defaultUser: 1000, items: [{ path: 'key', user: 0 }] },
        { volume: 'token', items: [{ path: 'token', user: 1001 }] },
      ],
    },
  ]);
  t.match(r.text, /^# a native manifest for a newer kubelet\n/, 'comments kept');
  t.match(r.text, /value: "1" # kept native: before the first fileKeyRef\n/, 'a trailing comment is kept (one space before it)');
  t.notMatch(r.text, /^\s+(enableServiceLinks|defaultUser|user):|, user: /m, 'the native fields are gone');
  t.match(r.text, /  template:\n    metadata:\n      annotations:\n/, 'the template gets metadata before its spec');
  // The annotation form passes lint, except the fileKeyRef the side container keeps natively.
  t.same(lintManifest(parseManifest('a.yaml', r.text), { mode: 'nri' }), []);
  // And back to native: the same data as the original manifest.
  const back = convert(r.text, 'native');
  const strip = (s: string) => parseManifest('x', s).docs[0]!.toJS();
  const n = strip(back.text);
  t.same(n.spec.template.spec.containers, strip(NATIVE).spec.template.spec.containers);
  t.same(n.spec.template.spec.volumes, strip(NATIVE).spec.template.spec.volumes);
  t.equal(n.spec.template.spec.enableServiceLinks, false);
});

t.test('JSON in, JSON out; a manifest with nothing to convert is returned byte for byte', async (t) => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', annotations: { 'envhook.io/serviceLinks': '{"*": false}', other: 'x' } },
    spec: { containers: [{ name: 'main' }] },
  };
  const r = convert(JSON.stringify(pod, null, 4), 'native', 'pod.json');
  t.same(JSON.parse(r.text), {
    ...pod,
    metadata: { name: 'p', annotations: { other: 'x' } },
    spec: { ...pod.spec, enableServiceLinks: false },
  });
  t.match(r.text, /^{\n {2}"apiVersion"/);
  const same = '# just a config map\nkind: ConfigMap\ndata: {a: "1"}   # flow\n---\nkind: Pod\nspec: {containers: [ {name: a} ]}\n';
  t.equal(convert(same, 'native').text, same);
  t.equal(convert(same, 'annotations').text, same);
});

t.test('an annotation the node would refuse stops convert, naming its position', async (t) => {
  const bad = `kind: Pod\nmetadata:\n  annotations:\n    envhook.io/env: '{"main": [{"name": "A"}]}'\nspec:\n  containers: [{name: main}]\n`;
  t.throws(() => convert(bad, 'native'), {
    message: 'pod.yaml:4:5: envhook.io/env /main/0: must have exactly one of "value" or "valueFrom" (fix it first: envhook lint)',
  });
});

// Round trip over generated pods: annotations → native → annotations gives the same annotations.
const CONTAINERS = ['main', 'app', 'side'];
const VOLUMES = [
  { name: 'cfg', emptyDir: {} },
  { name: 'cfg2', emptyDir: {} },
  {
    name: 'cm',
    configMap: {
      name: 'cm',
      items: [
        { key: 'a', path: 'a' },
        { key: 'b', path: 'dir/b' },
      ],
    },
  },
  { name: 'open', secret: { secretName: 'open' } },
  { name: 'dapi', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
  {
    name: 'proj',
    projected: {
      sources: [{ serviceAccountToken: { path: 'token' } }, { configMap: { name: 'ca', items: [{ key: 'ca', path: 'ca.crt' }] } }],
    },
  },
];
const LISTED: Record<string, string[]> = { cm: ['a', 'dir/b'], open: ['x.key'], dapi: ['labels'], proj: ['token', 'ca.crt'] };
const text = fc.string({ maxLength: 12, unit: 'grapheme' }).filter((s) => !s.includes('\0'));
const name = fc.constantFrom('A', 'B', 'DB_URL', 'X1');
const entry = fc.oneof(
  fc.record({ name, value: fc.oneof(text, fc.constantFrom('$(A)', '$$(B) $(NOPE)', 'it\'s "quoted"\nline')) }),
  fc.record({
    name,
    valueFrom: fc.record({
      fileKeyRef: fc.record(
        {
          volumeName: fc.constantFrom('cfg', 'cfg2'),
          path: fc.constantFrom('a.env', 'd/b.env'),
          key: fc.constantFrom('K', 'A_B'),
          optional: fc.boolean(),
        },
        { requiredKeys: ['volumeName', 'path', 'key'] },
      ),
    }),
  }),
);
const uid = fc.integer({ min: 0, max: 2147483647 });
const owner = (volume: string) =>
  fc.record(
    {
      volume: fc.constant(volume),
      defaultUser: uid,
      items: fc
        .subarray(LISTED[volume]!, {
          minLength: 1,
        })
        .chain((paths) => fc.tuple(...paths.map((p) => fc.record({ path: fc.constant(p), user: uid })))),
    },
    { requiredKeys: ['volume'] },
  );
const podArb = fc.record({
  containers: fc.subarray(CONTAINERS, { minLength: 1 }),
  ownEnv: fc.boolean(),
  env: fc.dictionary(fc.constantFrom(...CONTAINERS), fc.array(entry, { maxLength: 4 }), { maxKeys: 3 }),
  envFrom: fc.dictionary(fc.constantFrom(...CONTAINERS), fc.constant([{ prefix: 'P_', fileRef: { volumeName: 'cfg', path: 'all.env' } }]), {
    maxKeys: 2,
  }),
  serviceLinks: fc.option(fc.constantFrom({ '*': false }, { '*': true }, { main: true, '*': false }), { nil: undefined }),
  owners: fc.subarray(Object.keys(LISTED)).chain((vols) => fc.tuple(...vols.map(owner))),
  style: fc.constantFrom('QUOTE_SINGLE', 'BLOCK_LITERAL'),
});

/** The generated containers, and every container an annotation names, in CONTAINERS order. */
function podContainers(p: { containers: string[]; env: object; envFrom: object; serviceLinks?: object | undefined }): string[] {
  const named = new Set([...p.containers, ...Object.keys(p.env), ...Object.keys(p.envFrom), ...Object.keys(p.serviceLinks ?? {})]);
  return CONTAINERS.filter((c) => named.has(c));
}

t.test('round trip: annotations → native → annotations gives the same annotations', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(podArb, (p) => {
      const annotations: Record<string, string> = {};
      const json = (v: unknown) => (p.style === 'BLOCK_LITERAL' ? `${JSON.stringify(v, null, 1)}\n` : JSON.stringify(v));
      if (Object.keys(p.env).length) annotations['envhook.io/env'] = json(p.env);
      if (Object.keys(p.envFrom).length) annotations['envhook.io/envFrom'] = json(p.envFrom);
      if (p.serviceLinks) annotations['envhook.io/serviceLinks'] = json(p.serviceLinks);
      if (p.owners.length) annotations['envhook.io/volumeOwners'] = json(p.owners);
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'gen', annotations: { keep: 'me', ...annotations } },
        spec: {
          runtimeClassName: 'envhook',
          // Every container an annotation names is in the pod, and the first mounts every
          // volume: convert refuses what lint rejects.
          containers: podContainers(p).map((c, i) => ({
            name: c,
            image: 'busybox',
            ...(p.ownEnv ? { env: [{ name: 'OWN', value: 'own' }] } : {}),
            ...(i === 0 ? { volumeMounts: VOLUMES.map((v) => ({ name: v.name, mountPath: `/v/${v.name}` })) } : {}),
          })),
          volumes: VOLUMES,
        },
      };
      const src = stringify(pod, { version: '1.1' });
      const native = convertManifest(parseManifest('g.yaml', src), 'native');
      const back = convertManifest(parseManifest('g.yaml', native.text), 'annotations');
      const sortOwners = (a: Record<string, unknown>) => {
        const o = a['envhook.io/volumeOwners'] as { volume: string; items?: { path: string }[] }[] | undefined;
        o?.sort((x, y) => x.volume.localeCompare(y.volume)).forEach((e) => e.items?.sort((x, y) => x.path.localeCompare(y.path)));
        return a;
      };
      const want = annotationsOf(src).map(sortOwners);
      const got = annotationsOf(back.text).map(sortOwners);
      if (JSON.stringify(got) !== JSON.stringify(want) && !isSameData(got, want)) {
        throw new Error(`round trip differs:\n${src}\n--- native\n${native.text}\n--- back\n${back.text}`);
      }
      // The native form is stable, and converting it to native again changes nothing.
      const again = convertManifest(parseManifest('g.yaml', native.text), 'native');
      if (again.changed) throw new Error(`native form converted again:\n${native.text}`);
      runs++;
    }),
    { numRuns: 150, seed: Number(process.env.FC_SEED ?? 42) },
  );
  t.equal(runs, 150);
});

/** Deep equality regardless of key order (the node reads JSON objects, not their key order). */
function isSameData(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => isSameData(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return isSameData(ka, kb) && ka.every((k) => isSameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

t.test('to native: a fileKeyRef on a volume other than an emptyDir has no native form and stays', async (t) => {
  const src = `apiVersion: v1
kind: Pod
metadata:
  name: db
  annotations:
    envhook.io/env: '{"app": [{"name": "A", "value": "1"}, {"name": "PW", "valueFrom": {"fileKeyRef": {"volumeName": "vault", "path": "db.env", "key": "PW"}}}], "side": [{"name": "C", "valueFrom": {"fileKeyRef": {"volumeName": "config", "path": "c.env", "key": "C"}}}]}'
spec:
  runtimeClassName: envhook
  containers:
    - name: app
      image: busybox
      volumeMounts: [{name: config, mountPath: /c}, {name: vault, mountPath: /v}]
    - name: side
      image: busybox
  volumes:
    - name: config
      emptyDir: {}
    - name: vault
      csi:
        driver: secrets-store.csi.k8s.io
        readOnly: true
        volumeAttributes: {secretProviderClass: db}
`;
  const r = convert(src, 'native');
  t.same(r.notes, [
    'pod.yaml:6:5: envhook.io/env /app/1: note: stays an annotation: its fileKeyRef reads volume "vault", not an emptyDir of the pod; KEP-3721\'s fileKeyRef reads emptyDirs only',
  ]);
  t.same(
    annotationsOf(r.text),
    [
      {
        'envhook.io/env': {
          app: [
            { name: 'A', value: '1' },
            { name: 'PW', valueFrom: { fileKeyRef: { volumeName: 'vault', path: 'db.env', key: 'PW' } } },
          ],
        },
      },
    ],
    'the emptyDir entry moved, the CSI one stayed',
  );
  t.match(r.text, /- name: side\n      image: busybox\n      env:\n        # envhook convert/);
  const whole = convert(
    src.replace('"fileKeyRef": {"volumeName": "config", "path": "c.env", "key": "C"}', '"fileRef": {"volumeName": "config", "path": "c"}'),
    'native',
  );
  t.same(whole.notes.slice(1), [
    'pod.yaml:6:5: envhook.io/env /side/0: note: stays an annotation: fileRef (a whole file as the value) has no native form; KEP-3721 has fileKeyRef only',
  ]);
  t.equal(whole.text.includes('# envhook convert'), false, 'nothing moved');
});
