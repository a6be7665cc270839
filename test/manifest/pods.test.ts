// The pods of a manifest: a Pod, the pod template of each workload kind, the items of List
// objects; every other kind skipped.
import t from 'tap';
import { parseManifest } from '../../src/manifest/read.ts';
import { podsOf } from '../../src/manifest/pods.ts';

/** For each pod found in `yaml`: its kind and the name in the pod's own metadata. */
const pods = (yaml: string) =>
  parseManifest('m.yaml', yaml)
    .docs.flatMap(podsOf)
    .map((p) => [p.kind, (p.pod.getIn(['metadata', 'name']) as string) ?? null]);

const template = { metadata: { name: 'tpl' }, spec: { containers: [] } };

t.test('a Pod is its own pod; each workload kind keeps its template where Kubernetes does', async (t) => {
  t.same(pods('kind: Pod\nmetadata: {name: web}\n'), [['Pod', 'web']]);
  for (const kind of ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController', 'Job']) {
    t.same(pods(JSON.stringify({ kind, spec: { template } })), [[kind, 'tpl']], kind);
  }
  t.same(pods(JSON.stringify({ kind: 'PodTemplate', template })), [['PodTemplate', 'tpl']]);
  t.same(pods(JSON.stringify({ kind: 'CronJob', spec: { jobTemplate: { spec: { template } } } })), [['CronJob', 'tpl']]);
});

t.test('the object a pod belongs to is the workload, the pod its template', async (t) => {
  const [ref] = parseManifest('m.yaml', JSON.stringify({ kind: 'Deployment', metadata: { name: 'dep' }, spec: { template } })).docs.flatMap(
    podsOf,
  );
  t.equal(ref!.object.getIn(['metadata', 'name']), 'dep');
  t.equal(ref!.pod.getIn(['metadata', 'name']), 'tpl');
});

t.test('Lists: the pods of their items, Lists inside Lists to a bounded depth', async (t) => {
  const list = {
    kind: 'List',
    items: [{ kind: 'Pod', metadata: { name: 'a' } }, { kind: 'Service' }, 'not a map', { kind: 'Deployment', spec: { template } }],
  };
  t.same(pods(JSON.stringify(list)), [
    ['Pod', 'a'],
    ['Deployment', 'tpl'],
  ]);
  t.same(pods(JSON.stringify({ kind: 'PodList', items: [{ kind: 'Pod', metadata: { name: 'b' } }] })), [['Pod', 'b']]);
  const nest = (n: number): object => (n === 0 ? { kind: 'Pod', metadata: { name: 'deep' } } : { kind: 'List', items: [nest(n - 1)] });
  t.same(pods(JSON.stringify(nest(4))), [['Pod', 'deep']], 'four Lists deep');
  t.same(pods(JSON.stringify(nest(5))), [], 'five: not followed');
});

t.test('not a pod: other kinds, no kind, no template, prototype names, a scalar document', async (t) => {
  t.same(pods('kind: Service\nspec: {template: {metadata: {name: x}}}\n'), []);
  t.same(pods('metadata: {name: x}\n'), []);
  t.same(pods('kind: Deployment\nspec: {replicas: 1}\n'), []);
  t.same(pods('kind: Deployment\nspec: {template: [1]}\n'), [], 'a template that is not a map');
  t.same(pods('kind: constructor\n---\nkind: toString\n'), []);
  t.same(pods('just a string\n'), []);
  t.same(pods('kind: [Pod]\n'), [], 'a kind that is not a string');
});
