import t from 'tap';
import { crossCheck } from '../../src/lint/cross.ts';
import { podOf } from '../helpers/convert-pod.ts';

/** crossCheck of a pod given its annotations (as JSON) and the YAML of its spec. */
function check(annotations: Record<string, unknown>, spec: string) {
  const lines = Object.entries(annotations).map(([k, v]) => `    ${k}: '${JSON.stringify(v)}'\n`);
  const { facts, values } = podOf(`kind: Pod\nmetadata:\n  annotations:\n${lines.join('')}spec:\n${spec}`);
  return crossCheck(facts, values).map((p) => `${p.severity} ${p.key} ${p.path}: ${p.message}`);
}
const ref = (volumeName: string, path = 'env', key = 'A') => ({ valueFrom: { fileKeyRef: { volumeName, path, key } } });

t.test('a consistent pod has no problems', async (t) => {
  t.same(
    check(
      {
        'envhook.io/env': {
          app: [
            { name: 'A', ...ref('cfg') },
            { name: 'B', value: '$(A)-$(OWN)' },
          ],
        },
        'envhook.io/serviceLinks': { '*': false },
      },
      `  containers: [{name: app, env: [{name: OWN, value: x}], volumeMounts: [{name: cfg, mountPath: /c}]}]\n  volumes: [{name: cfg, emptyDir: {}}]\n`,
    ),
    [],
  );
});

t.test('containers an annotation names must be in the pod, with a suggestion', async (t) => {
  t.same(check({ 'envhook.io/serviceLinks': { ap: false, '*': true } }, `  containers: [{name: app}]\n`), [
    'error envhook.io/serviceLinks /ap: container "ap" is not in the pod (did you mean "app"?)',
  ]);
});

t.test('env source volumes: missing, of a type the node does not read, and an unlisted item path', async (t) => {
  const r = check(
    {
      'envhook.io/env': {
        app: [
          { name: 'A', ...ref('cgf') },
          { name: 'B', ...ref('host') },
          { name: 'C', ...ref('cm', 'nope') },
          { name: 'D', valueFrom: { fileKeyRef: { volumeName: 'cm', path: 'nope', key: 'D', optional: true } } },
          { name: 'E', ...ref('cm', './listed') },
        ],
      },
    },
    `  containers: [{name: app, volumeMounts: [{name: cm, mountPath: /c}]}]
  volumes:
    - {name: cfg, emptyDir: {}}
    - {name: host, hostPath: {path: /x}}
    - {name: cm, configMap: {name: c, items: [{key: k, path: listed}]}}
`,
  );
  t.same(r, [
    'error envhook.io/env /app/0/valueFrom/fileKeyRef/volumeName: volume "cgf" is not in the pod (did you mean "cfg"?)',
    'error envhook.io/env /app/1/valueFrom/fileKeyRef/volumeName: volume "host" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume (its source is hostPath)',
    'error envhook.io/env /app/2/valueFrom/fileKeyRef/path: not among the files volume "cm" lists in its items',
    'warning envhook.io/env /app/3/valueFrom/fileKeyRef/path: not among the files volume "cm" lists in its items: never set (optional)',
  ]);
});

t.test('envFrom volumeRef: a directory of the listed files passes, another path does not', async (t) => {
  const spec = `  containers: [{name: app, volumeMounts: [{name: s, mountPath: /s}]}]\n  volumes: [{name: s, secret: {secretName: s, items: [{key: k, path: d/one}]}}]\n`;
  t.same(check({ 'envhook.io/envFrom': { app: [{ volumeRef: { volumeName: 's', path: 'd' } }] } }, spec), []);
  t.same(check({ 'envhook.io/envFrom': { app: [{ volumeRef: { volumeName: 's', path: 'e' } }] } }, spec), [
    'error envhook.io/envFrom /app/0/volumeRef/path: not among the directories of the files volume "s" lists in its items',
  ]);
});

t.test(
  'an env source volume no container mounts: the kubelet does not set it up; an init container or a block device is enough',
  async (t) => {
    const env = {
      'envhook.io/env': { app: [{ name: 'A', ...ref('creds') }] },
      'envhook.io/envFrom': { app: [{ volumeRef: { volumeName: 'creds', optional: true } }] },
    };
    const volumes = `  volumes: [{name: creds, secret: {secretName: creds}}]\n`;
    const why =
      "is mounted by no container: the kubelet sets up only volumes that a container of the pod mounts; mount it in one of the pod's containers (the init container is enough)";
    t.same(check(env, `  containers: [{name: app, volumeMounts: [{name: other, mountPath: /o}]}]\n${volumes}`), [
      `error envhook.io/env /app/0/valueFrom/fileKeyRef/volumeName: volume "creds" ${why}`,
      `error envhook.io/envFrom /app/0/volumeRef/volumeName: volume "creds" ${why}`,
    ]);
    const init = `  initContainers: [{name: init, volumeMounts: [{name: creds, mountPath: /c}]}]\n  containers: [{name: app}]\n`;
    t.same(check(env, init + volumes), [], 'mounted by the init container');
    t.same(check(env, `  containers: [{name: app}, {name: side, volumeDevices: [{name: creds, devicePath: /dev/x}]}]\n${volumes}`), []);
  },
);

t.test('volumeOwners: missing volume, non-atomic volume, unlisted item path', async (t) => {
  const r = check(
    {
      'envhook.io/volumeOwners': [
        { volume: 'nope', defaultUser: 1 },
        { volume: 'e', defaultUser: 1 },
        {
          volume: 'p',
          items: [
            { path: 'a', user: 2 },
            { path: 'b', user: 3 },
          ],
        },
      ],
    },
    `  containers: [{name: app}]
  volumes:
    - {name: e, emptyDir: {}}
    - {name: p, projected: {sources: [{configMap: {name: c, items: [{key: k, path: a}]}}]}}
`,
  );
  t.same(r, [
    'error envhook.io/volumeOwners /0/volume: volume "nope" is not in the pod',
    'error envhook.io/volumeOwners /1/volume: volume "e" is not a configMap, secret, projected or downwardAPI volume (its source is emptyDir)',
    'error envhook.io/volumeOwners /2/items/1/path: not among the files volume "p" lists in its items',
  ]);
});

t.test('names defined twice and $(VAR) defined nowhere earlier are warnings; the value is never quoted', async (t) => {
  const r = check(
    {
      'envhook.io/env': {
        app: [
          { name: 'A', value: 'CANARY-$(LATER)' },
          { name: 'LATER', value: '1' },
          { name: 'A', value: '$(MY_SVC_SERVICE_HOST)' },
        ],
      },
    },
    `  containers: [{name: app}]\n`,
  );
  t.same(r, [
    'warning envhook.io/env /app/0/value: $(…) reference 1 names a variable defined nowhere earlier in the pod (only the image could define it); it stays as written',
    'warning envhook.io/env /app/2/name: name defined again (first at /app/0): the last one wins',
  ]);
  t.notMatch(r.join('\n'), /CANARY/);
});

t.test('service variables are known only where the kubelet makes them; envFrom prefixes make names known', async (t) => {
  const env = { app: [{ name: 'A', value: '$(MY_SVC_SERVICE_HOST)$(KUBERNETES_SERVICE_HOST)$(P_X)' }] };
  const spec = `  containers: [{name: app, envFrom: [{prefix: P_, configMapRef: {name: c}}]}]\n`;
  t.same(check({ 'envhook.io/env': env }, spec), []);
  t.same(check({ 'envhook.io/env': env, 'envhook.io/serviceLinks': { app: false } }, spec), [
    'warning envhook.io/env /app/0/value: $(…) reference 1 names a variable defined nowhere earlier in the pod (only the image could define it); it stays as written',
  ]);
});

t.test('serviceLinks true under enableServiceLinks: false is a warning', async (t) => {
  t.same(check({ 'envhook.io/serviceLinks': { app: true } }, `  enableServiceLinks: false\n  containers: [{name: app}]\n`), [
    'warning envhook.io/serviceLinks /app: true has no effect: the pod sets enableServiceLinks: false, so the kubelet makes no service variables',
  ]);
});
