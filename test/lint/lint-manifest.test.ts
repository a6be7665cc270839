// envhook lint on the shipped examples and on a table of broken manifests: each class of
// mistake with its exact message and position. Messages never carry a value (canaries).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/bundle.ts';
import { parseManifest } from '../../src/manifest/read.ts';
import { lintManifest, type Mode } from '../../src/lint/lint-manifest.ts';
import { formatFinding } from '../../src/lint/finding.ts';

const CANARY = 'CANARY_5d1e';
const lint = (text: string, mode: Mode = 'shim') => lintManifest(parseManifest('pod.yaml', text), { mode }).map(formatFinding);

/** A pod with `annotations` (YAML lines under metadata.annotations) and extra spec lines. */
function pod(annotations: string, spec = '  runtimeClassName: envhook\n'): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
${annotations.replace(/^/gm, '    ')}
spec:
${spec}  initContainers:
    - name: init
      image: busybox
      volumeMounts: [{name: config, mountPath: /c}, {name: keys, mountPath: /k}, {name: token, mountPath: /t}, {name: data, mountPath: /d}]
  containers:
    - name: main
      image: busybox
      env:
        - name: OWN
          value: x
  volumes:
    - name: config
      emptyDir: {}
    - name: keys
      secret:
        secretName: keys
        items:
          - key: k
            path: ssh/key
    - name: token
      projected:
        sources:
          - serviceAccountToken:
              path: token
    - name: data
      hostPath:
        path: /srv
`;
}

t.test('every example manifest in examples/pods lints clean, in both modes', async (t) => {
  const dir = path.join(REPO, 'examples/pods');
  const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
  t.ok(files.length >= 3, 'examples found');
  for (const f of files) {
    const m = parseManifest(f, fs.readFileSync(path.join(dir, f), 'utf8'));
    t.same(lintManifest(m, { mode: 'shim' }), [], `${f} (shim)`);
    t.same(lintManifest(m, { mode: 'nri' }), [], `${f} (nri)`);
  }
});

t.test('a valid pod has no findings', async (t) => {
  const text =
    pod(`envhook.io/env: '{"main": [{"name": "A", "valueFrom": {"fileKeyRef": {"volumeName": "config", "path": "a.env", "key": "A"}}}, {"name": "B", "value": "$(A)-$(OWN)-$(KUBERNETES_SERVICE_HOST)"}]}'
envhook.io/volumeOwners: '[{"volume": "keys", "items": [{"path": "ssh/key", "user": 1000}]}, {"volume": "token", "defaultUser": 1000}]'`);
  t.same(lint(text), []);
});

// [what, annotations, spec lines (undefined: runtimeClassName envhook), mode, expected lines]
const TABLE: [string, string, string | undefined, Mode, string[]][] = [
  ['annotation not JSON', `envhook.io/env: '{"main": [${CANARY}'`, undefined, 'shim', ['pod.yaml:6:5: envhook.io/env: is not valid JSON']],
  ['annotation not a string', `envhook.io/env:\n  main: []`, undefined, 'shim', ['pod.yaml:6:5: envhook.io/env: must be a string']],
  [
    'schema: value and valueFrom',
    `envhook.io/env: '{"main": [{"name": "A"}]}'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/env /main/0: must have exactly one of "value" or "valueFrom"'],
  ],
  [
    'schema: unknown field',
    `envhook.io/env: '{"main": [{"name": "A", "value": "${CANARY}", "vaule": "${CANARY}"}]}'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/env /main/0: unknown field "vaule"'],
  ],
  [
    'schema: path with ..',
    `envhook.io/envFrom: '{"main": [{"fileRef": {"volumeName": "config", "path": "../x"}}]}'`,
    undefined,
    'shim',
    ["pod.yaml:6:5: envhook.io/envFrom /main/0/fileRef/path: must be a relative path with no '..' element and no NUL byte"],
  ],
  [
    'schema: serviceLinks not boolean',
    `envhook.io/serviceLinks: '{"*": "no"}'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/serviceLinks /*: must be boolean'],
  ],
  [
    'schema: owner UID out of range',
    `envhook.io/volumeOwners: '[{"volume": "keys", "defaultUser": 2147483648}]'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/volumeOwners /0/defaultUser: must be <= 2147483647'],
  ],
  [
    'owners: volume twice',
    `envhook.io/volumeOwners: '[{"volume": "keys", "defaultUser": 1}, {"volume": "keys", "defaultUser": 2}]'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/volumeOwners /1/volume: volume "keys" is listed more than once'],
  ],
  [
    'unknown annotation, with a suggestion',
    `envhook.io/volumeOwner: '[]'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/volumeOwner: not an envhook annotation (did you mean "envhook.io/volumeOwners"?)'],
  ],
  [
    'applied set by the author',
    `envhook.io/applied: sha256:00`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/applied: warning: set by envhook on the node after it applied env; a pod should not carry it'],
  ],
  [
    'container typo',
    `envhook.io/env: '{"mian": [{"name": "A", "value": "${CANARY}"}]}'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/env /mian: container "mian" is not in the pod (did you mean "main"?)'],
  ],
  [
    'container typo in envFrom and serviceLinks',
    `envhook.io/envFrom: '{"int": []}'\nenvhook.io/serviceLinks: '{"*": false, "nope": true}'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/envFrom /int: container "int" is not in the pod (did you mean "init"?)',
      'pod.yaml:7:5: envhook.io/serviceLinks /nope: container "nope" is not in the pod',
    ],
  ],
  [
    'fileKeyRef volume missing',
    `envhook.io/env: '{"main": [{"name": "A", "valueFrom": {"fileKeyRef": {"volumeName": "confg", "path": "a.env", "key": "A"}}}]}'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/env /main/0/valueFrom/fileKeyRef/volumeName: volume "confg" is not in the pod (did you mean "config"?)'],
  ],
  [
    'fileKeyRef volumes of a secret and a projected volume',
    `envhook.io/env: '{"main": [{"name": "A", "valueFrom": {"fileKeyRef": {"volumeName": "keys", "path": "ssh/key", "key": "A"}}}, {"name": "B", "valueFrom": {"fileKeyRef": {"volumeName": "token", "path": "token", "key": "B"}}}]}'`,
    undefined,
    'shim',
    [],
  ],
  [
    'fileRef volume of a type env is not read from',
    `envhook.io/env: '{"main": [{"name": "A", "valueFrom": {"fileRef": {"volumeName": "data", "path": "pw"}}}, {"name": "B", "valueFrom": {"fileRef": {"volumeName": "keys", "path": "ssh/key"}}}]}'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/env /main/0/valueFrom/fileRef/volumeName: volume "data" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume (its source is hostPath)',
    ],
  ],
  [
    'a path the volume does not list in its items',
    `envhook.io/env: '{"main": [{"name": "A", "valueFrom": {"fileRef": {"volumeName": "keys", "path": "ssh/nope"}}}, {"name": "B", "valueFrom": {"fileKeyRef": {"volumeName": "keys", "path": "k", "key": "B", "optional": true}}}]}'
envhook.io/envFrom: '{"main": [{"volumeRef": {"volumeName": "keys", "path": "ssh"}}, {"volumeRef": {"volumeName": "keys", "path": "ssh/key"}}, {"volumeRef": {"volumeName": "config", "path": "any"}}]}'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/env /main/0/valueFrom/fileRef/path: not among the files volume "keys" lists in its items',
      'pod.yaml:6:5: envhook.io/env /main/1/valueFrom/fileKeyRef/path: warning: not among the files volume "keys" lists in its items: never set (optional)',
      'pod.yaml:7:5: envhook.io/envFrom /main/1/volumeRef/path: not among the directories of the files volume "keys" lists in its items',
    ],
  ],
  [
    'envFrom volumeRef of a type env is not read from',
    `envhook.io/envFrom: '{"main": [{"prefix": "K_", "volumeRef": {"volumeName": "keys"}}, {"volumeRef": {"volumeName": "data", "path": "db"}}]}'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/envFrom /main/1/volumeRef/volumeName: volume "data" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume (its source is hostPath)',
    ],
  ],
  [
    'envFrom volume of a type env is not read from',
    `envhook.io/envFrom: '{"main": [{"fileRef": {"volumeName": "data", "path": "a.env"}}]}'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/envFrom /main/0/fileRef/volumeName: volume "data" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume (its source is hostPath)',
    ],
  ],
  [
    'owners volume missing',
    `envhook.io/volumeOwners: '[{"volume": "key", "defaultUser": 1}]'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/volumeOwners /0/volume: volume "key" is not in the pod (did you mean "keys"?)'],
  ],
  [
    'owners volume of another type',
    `envhook.io/volumeOwners: '[{"volume": "config", "defaultUser": 1}]'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/volumeOwners /0/volume: volume "config" is not a configMap, secret, projected or downwardAPI volume (its source is emptyDir)',
    ],
  ],
  [
    'owners item path not among the items',
    `envhook.io/volumeOwners: '[{"volume": "keys", "items": [{"path": "ssh//key", "user": 1}, {"path": "ssh/key.pub", "user": 1}]}, {"volume": "token", "items": [{"path": "tokn", "user": 1}]}]'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/volumeOwners /0/items/1/path: not among the files volume "keys" lists in its items',
      'pod.yaml:6:5: envhook.io/volumeOwners /1/items/0/path: not among the files volume "token" lists in its items',
    ],
  ],
  [
    'env name defined twice',
    `envhook.io/env: '{"main": [{"name": "A", "value": "${CANARY}"}, {"name": "B", "value": "1"}, {"name": "A", "value": "${CANARY}"}]}'`,
    undefined,
    'shim',
    ['pod.yaml:6:5: envhook.io/env /main/2/name: warning: name defined again (first at /main/0): the last one wins'],
  ],
  [
    '$(VAR) defined nowhere earlier',
    `envhook.io/env: '{"main": [{"name": "A", "value": "$(B)$(OWN)$(${CANARY})"}, {"name": "B", "value": "$$(${CANARY}) $(A)"}]}'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/env /main/0/value: warning: $(…) reference 1 names a variable defined nowhere earlier in the pod (only the image could define it); it stays as written',
      'pod.yaml:6:5: envhook.io/env /main/0/value: warning: $(…) reference 3 names a variable defined nowhere earlier in the pod (only the image could define it); it stays as written',
    ],
  ],
  [
    '$(VAR) of a service with links switched off',
    `envhook.io/env: '{"main": [{"name": "A", "value": "$(DB_SERVICE_HOST)"}]}'\nenvhook.io/serviceLinks: '{"*": false}'`,
    undefined,
    'shim',
    [
      'pod.yaml:6:5: envhook.io/env /main/0/value: warning: $(…) reference 1 names a variable defined nowhere earlier in the pod (only the image could define it); it stays as written',
    ],
  ],
  [
    'no runtimeClassName in shim mode',
    `envhook.io/serviceLinks: '{"*": false}'`,
    '',
    'shim',
    [
      'pod.yaml:7:1: spec.runtimeClassName: missing: a pod with envhook annotations needs runtimeClassName: envhook in shim mode (containerd passes envhook.io/* annotations to that handler only; use --mode nri for nodes that run envhook nri)',
    ],
  ],
  ['no runtimeClassName in nri mode', `envhook.io/serviceLinks: '{"*": false}'`, '', 'nri', []],
  [
    'another runtimeClassName',
    `envhook.io/serviceLinks: '{"*": false}'`,
    '  runtimeClassName: kata\n',
    'shim',
    [
      'pod.yaml:8:3: spec.runtimeClassName: warning: not "envhook", the handler envhook install registers: the node must pass envhook.io/* annotations to this one',
    ],
  ],
  ['evictUnapplied in nri mode', `envhook.io/evictUnapplied: "true"\nenvhook.io/env: '{"main": []}'`, '', 'nri', []],
  [
    'evictUnapplied in shim mode: read by envhook nri only',
    `envhook.io/evictUnapplied: "true"`,
    '',
    'shim',
    [
      'pod.yaml:6:5: envhook.io/evictUnapplied: warning: read by envhook nri only: in shim mode the runtime handler applies env at every start, so no container is missed',
    ],
  ],
  [
    'evictUnapplied not "true" or "false"',
    `envhook.io/evictUnapplied: "${CANARY}"`,
    '',
    'nri',
    ['pod.yaml:6:5: envhook.io/evictUnapplied: warning: only "true" asks for eviction: any other value is the same as "false"'],
  ],
  [
    'evictUnapplied not a string',
    `envhook.io/evictUnapplied: true`,
    '',
    'nri',
    ['pod.yaml:6:5: envhook.io/evictUnapplied: must be a string: "true" (quoted)'],
  ],
  [
    'evictUnapplied misspelt',
    `envhook.io/evictUnaplied: "true"`,
    '',
    'nri',
    ['pod.yaml:6:5: envhook.io/evictUnaplied: not an envhook annotation (did you mean "envhook.io/evictUnapplied"?)'],
  ],
  [
    'serviceLinks true under enableServiceLinks: false',
    `envhook.io/serviceLinks: '{"main": true}'`,
    '  runtimeClassName: envhook\n  enableServiceLinks: false\n',
    'shim',
    [
      'pod.yaml:6:5: envhook.io/serviceLinks /main: warning: true has no effect: the pod sets enableServiceLinks: false, so the kubelet makes no service variables',
    ],
  ],
];

for (const [what, annotations, spec, mode, expected] of TABLE) {
  t.test(what, async (t) => {
    const lines = lint(pod(annotations, spec), mode);
    t.same(lines, expected);
    for (const l of lines) t.notMatch(l, CANARY, 'no value in the message');
  });
}

t.test('a YAML syntax error is reported at its position', async (t) => {
  t.same(lint(`kind: Pod\nmetadata:\n  annotations:\n    a: 1\n    a: 2\n`), [
    'pod.yaml:5:5: yaml: not valid YAML or JSON (duplicate key)',
  ]);
});

t.test('workload templates, List items and CronJobs are linted; annotations on the workload itself are flagged', async (t) => {
  const text = `kind: Deployment
metadata:
  annotations:
    envhook.io/env: '{}'
spec:
  template:
    metadata:
      annotations:
        envhook.io/env: '{"app": []}'
    spec:
      containers:
        - name: main
---
kind: List
items:
  - kind: CronJob
    spec:
      jobTemplate:
        spec:
          template:
            metadata:
              annotations:
                envhook.io/env: '{"app": []}'
            spec:
              containers:
                - name: main
  - kind: ConfigMap
    metadata:
      annotations:
        envhook.io/env: nope
`;
  t.same(lint(text, 'nri'), [
    "pod.yaml:4:5: envhook.io/env: warning: on the Deployment's own metadata, which its pods do not get: put it under the pod template's metadata.annotations",
    'pod.yaml:9:9: envhook.io/env /app: container "app" is not in the pod',
    'pod.yaml:23:17: envhook.io/env /app: container "app" is not in the pod',
  ]);
});

t.test('JSON manifests, with positions', async (t) => {
  const text = JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { annotations: { 'envhook.io/env': '{"x": []}' } },
      spec: { runtimeClassName: 'envhook', containers: [{ name: 'main' }] },
    },
    null,
    2,
  );
  t.same(lint(text), ['pod.yaml:6:7: envhook.io/env /x: container "x" is not in the pod']);
});
