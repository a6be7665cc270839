// charts/envhook with the real helm (v4, test/helpers/helm.ts): `helm lint --strict`, the
// default and each documented combination rendered, the rendered objects checked against the
// values that made them (command, mounts, securityContext, labels, probes), the schema's and the
// templates' refusals as helm prints them, and NOTES.txt as `helm install` shows it.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { envhook, REPO } from '../helpers/bundle.ts';
import { helm, objectOf, renderChart } from '../helpers/helm.ts';
import { validateEnvAnnotation } from '../../src/generated/validators.js';
import { BUDGET_FLAGS, budgetNumber } from '../../src/settings.ts';
import { CRI_SOCKETS } from '../../src/nri/wire/cri-client.ts';

const CHART_DIR = path.join(REPO, 'charts/envhook');
const VALUES = parse(fs.readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8'));
const VERSION = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version;

const nriOf = (objects: any[]) => objectOf(objects, 'DaemonSet', '-nri');
const argOf = (command: string[], flag: string) => {
  const i = command.indexOf(flag);
  return i < 0 ? undefined : command[i + 1];
};
/** mountPath → the hostPath of its volume, for every mount of a container. */
const hostPaths = (spec: any, c: any) =>
  Object.fromEntries(c.volumeMounts.map((m: any) => [m.mountPath, spec.volumes.find((v: any) => v.name === m.name)?.hostPath?.path]));

t.test("Chart.yaml: apiVersion v2, version and appVersion are package.json's", async (t) => {
  const chart = parse(fs.readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8'));
  t.equal(chart.apiVersion, 'v2');
  t.equal(chart.name, 'envhook');
  t.equal(chart.version, VERSION);
  t.equal(chart.appVersion, VERSION);
});

t.test('helm lint --strict is clean, by default and with every option on', async (t) => {
  for (const set of [
    [],
    [
      'installer.enabled=true',
      'runtimeClass.enabled=true',
      'metrics.service.enabled=true',
      'metrics.serviceMonitor.enabled=true',
      'metrics.podMonitor.enabled=true',
      'evictUnapplied=true',
      'podCopyBytes=67108864',
      'podCopyFiles=16384',
      'podCopyVolumes=8',
      'nodeCopyBytes=268435456',
    ],
    ['nri.enabled=false', 'installer.enabled=true', 'installer.mode=nri', 'containerRuntime=crio'],
  ]) {
    const r = helm(['lint', '--strict', 'charts/envhook', ...set.flatMap((s) => ['--set', s])]);
    t.equal(r.status, 0, `${set.join(' ')}: ${r.stdout}${r.stderr}`);
    t.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    t.notMatch(r.stdout, /\[(WARNING|ERROR)\]/, set.join(' ') || 'default');
  }
});

t.test('every value in values.yaml has a comment', async (t) => {
  const lines = fs.readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8').split('\n');
  // Kubernetes objects given whole (a securityContext, resources…): their comment is above the key.
  const whole = new Set(['updateStrategy', 'securityContext', 'resources', 'nodeSelector', 'tolerations']);
  let top = '';
  let keys = 0;
  lines.forEach((line, i) => {
    const key = /^(\s*)([A-Za-z]\w*):/.exec(line);
    if (!key) return;
    if (key[1] === '') top = key[2]!;
    else if (whole.has(top)) return;
    if (!/:\s*\S/.test(line) && !whole.has(key[2]!)) return; // a group of values: its members have the comments
    keys++;
    t.match(lines[i - 1] ?? '', /^\s*#/, `values.yaml:${i + 1}: ${line.trim()} has a comment above it`);
  });
  t.ok(keys > 25, `${keys} values checked`);
});

t.test('by default: the NRI DaemonSet and the helm test pod, nothing else', async (t) => {
  const objects = renderChart();
  t.same(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort(), ['DaemonSet/envhook-nri', 'Pod/envhook-test-env-file']);
  const ds = nriOf(objects);
  t.equal(ds.metadata.namespace, 'kube-system');
  const spec = ds.spec.template.spec;
  const c = spec.containers[0];
  t.same(c.command, [
    '/opt/envhook/dist/envhook',
    'nri',
    '--socket',
    '/var/run/nri/nri.sock',
    '--index',
    '50',
    '--kubelet-root',
    '/var/lib/kubelet',
    '--run-dir',
    '/run/envhook',
    '--run-dir-on-disk',
    'warn',
    '--log-level',
    'info',
    '--handover-wait',
    '20',
    '--metrics-address',
    '[$(HOST_IP)]:9901',
  ]);
  t.equal(c.image, `envhook:${VERSION}`, "the tag is the chart's appVersion");
  t.same(c.securityContext, VALUES.securityContext, "the securityContext is values.yaml's, from one place");
  t.same(ds.spec.updateStrategy, VALUES.updateStrategy, "the update strategy is values.yaml's");
  t.same(hostPaths(spec, c), {
    '/var/run/nri': '/var/run/nri',
    '/var/lib/kubelet/pods': '/var/lib/kubelet/pods',
    '/run/envhook': '/run/envhook',
  });
  t.equal(spec.priorityClassName, 'system-node-critical');
  t.equal(spec.hostNetwork, true);
  t.equal(spec.hostPID, true);
  t.same(spec.tolerations, [{ operator: 'Exists' }]);
  t.same(spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
  t.same(c.resources, VALUES.resources);
});

t.test('the values reach the command and the mounts: every host path mounted at the same path', async (t) => {
  const objects = renderChart([
    'kubeletRoot=/data/kubelet',
    'runDir=/var/run/envhook-data',
    'nri.socket=/run/containerd/nri/nri.sock',
    'nri.plugin.index=7',
    'logLevel=debug',
    'metrics.address=127.0.0.1:9555',
    'extraArgs={--evict-unapplied,--fifo-priority,10}', // 10: a number to --set, a string in the command
    'image.repository=registry.example.com/envhook',
    'image.tag=0.1.0-rc1',
    'image.pullPolicy=Always',
    'priorityClassName=high',
    'runDirOnDisk=refuse',
    'fileGroup=4',
  ]);
  const spec = nriOf(objects).spec.template.spec;
  const c = spec.containers[0];
  t.equal(argOf(c.command, '--socket'), '/run/containerd/nri/nri.sock');
  t.equal(argOf(c.command, '--index'), '07', 'two digits, as envhook nri --index takes it');
  t.equal(argOf(c.command, '--kubelet-root'), '/data/kubelet');
  t.equal(argOf(c.command, '--run-dir'), '/var/run/envhook-data');
  t.equal(argOf(c.command, '--log-level'), 'debug');
  t.equal(argOf(c.command, '--run-dir-on-disk'), 'refuse');
  t.equal(argOf(c.command, '--file-group'), '4', 'a GID, as envhook nri --file-group takes it');
  t.equal(argOf(c.command, '--metrics-address'), '127.0.0.1:9555');
  t.same(c.command.slice(-3), ['--evict-unapplied', '--fifo-priority', '10'], 'extraArgs last');
  t.same(hostPaths(spec, c), {
    '/run/containerd/nri': '/run/containerd/nri',
    '/data/kubelet/pods': '/data/kubelet/pods',
    '/var/run/envhook-data': '/var/run/envhook-data',
  });
  t.equal(c.volumeMounts.find((m: any) => m.mountPath === '/data/kubelet/pods').mountPropagation, 'HostToContainer');
  t.notOk(c.ports, 'no declared port: on the host network it would be a hostPort, and a rollout could not surge');
  t.equal(c.readinessProbe.httpGet.port, 9555);
  t.equal(c.livenessProbe.httpGet.port, 9555);
  t.equal(c.image, 'registry.example.com/envhook:0.1.0-rc1');
  t.equal(c.imagePullPolicy, 'Always');
  t.equal(spec.priorityClassName, 'high');
  const plain = nriOf(renderChart()).spec.template.spec.containers[0].command;
  t.notOk(plain.includes('--file-group'), 'fileGroup empty by default: no --file-group, the status file 0600');
  const root = nriOf(renderChart(['fileGroup=0'])).spec.template.spec.containers[0].command;
  t.equal(argOf(root, '--file-group'), '0', 'GID 0 is a group, not an empty value');
  const quoted = nriOf(renderChart([], ['--set-string', 'fileGroup=2147483647'])).spec.template.spec.containers[0].command;
  t.equal(argOf(quoted, '--file-group'), '2147483647', 'a GID given as a string, the largest');
  const digest = 'sha256:' + 'ab'.repeat(32);
  const pinned = nriOf(renderChart([`image.digest=${digest}`, 'image.tag=9.9.9'])).spec.template.spec.containers[0];
  t.equal(pinned.image, `envhook@${digest}`, 'a digest wins over the tag');
});

t.test("the owned copies' budgets: a flag only when set, as envhook nri parses it", async (t) => {
  const plain = nriOf(renderChart()).spec.template.spec.containers[0].command;
  for (const flag of Object.values(BUDGET_FLAGS)) t.notOk(plain.includes(flag), `${flag}: not set by default, the plugin's default`);
  const help = envhook(['nri', '--help']);
  const set = { podCopyBytes: '67108864', podCopyFiles: '16384', podCopyVolumes: '8', nodeCopyBytes: '1000000000000' };
  const c = nriOf(renderChart(Object.entries(set).map(([k, v]) => `${k}=${v}`))).spec.template.spec.containers[0].command;
  for (const [key, flag] of Object.entries(BUDGET_FLAGS)) {
    const value = set[key as keyof typeof set];
    t.equal(argOf(c, flag), value, `${key} -> ${flag} ${value}, digit for digit (helm keeps numbers as floats)`);
    t.equal(budgetNumber(argOf(c, flag)!, flag), Number(value), `${flag}: the plugin's own parser takes it`);
    t.match(help.stdout, new RegExp(`\\s${flag} <`), `envhook nri --help lists ${flag}`);
  }
  t.equal(c.indexOf('--pod-copy-bytes'), c.lastIndexOf('--pod-copy-bytes'), 'each flag once');
  // From a values file, where YAML numbers reach the template as floats, and as strings.
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-chart-')), 'values.yaml');
  t.teardown(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  fs.writeFileSync(file, 'podCopyBytes: 3.3554432e+07\npodCopyFiles: "4096"\n');
  const fromFile = nriOf(renderChart([], ['-f', file])).spec.template.spec.containers[0].command;
  t.equal(argOf(fromFile, '--pod-copy-bytes'), '33554432');
  t.equal(argOf(fromFile, '--pod-copy-files'), '4096');
  const unset = nriOf(renderChart(['podCopyVolumes=null', 'fileGroup=null'])).spec.template.spec.containers[0].command;
  t.notOk(unset.includes('--pod-copy-volumes'), 'null: unset, not 0 (which the plugin refuses)');
  t.notOk(unset.includes('--file-group'), 'fileGroup null: unset, not GID 0');
});

t.test("eviction: the runtime's CRI socket's directory mounted at its path, the flags, the same capabilities", async (t) => {
  const help = envhook(['nri', '--help']);
  for (const flag of ['--evict-unapplied', '--cri-socket'])
    t.match(help.stdout, new RegExp(`\\s${flag}\\b`), `envhook nri --help lists ${flag}`);
  const plain = nriOf(renderChart()).spec.template.spec;
  t.notOk(
    plain.containers[0].command.some((a: string) => /^--(cri-socket|evict-unapplied)$/.test(a)),
    'off by default',
  );
  t.notOk(
    plain.volumes.some((v: any) => v.name === 'cri'),
    'no CRI socket mounted by default',
  );
  const cases = [
    { set: ['evictUnapplied=true'], socket: CRI_SOCKETS.containerd!, dir: '/run/containerd', all: true },
    { set: ['evictUnapplied=true', 'containerRuntime=crio'], socket: CRI_SOCKETS['cri-o']!, dir: '/var/run/crio', all: true },
    {
      set: ['criSocket=/run/k3s/containerd/containerd.sock'],
      socket: '/run/k3s/containerd/containerd.sock',
      dir: '/run/k3s/containerd',
      all: false,
    },
  ];
  for (const { set, socket, dir, all } of cases) {
    const spec = nriOf(renderChart(set)).spec.template.spec;
    const c = spec.containers[0];
    t.equal(argOf(c.command, '--cri-socket'), socket, `${set}: --cri-socket ${socket}, the socket envhook nri would look for itself`);
    t.equal(
      c.command.includes('--evict-unapplied'),
      all,
      `${set}: --evict-unapplied ${all ? 'passed' : 'not passed (annotated pods only)'}`,
    );
    t.equal(hostPaths(spec, c)[dir], dir, `${set}: the socket's directory ${dir} mounted at the same path`);
    t.same(
      spec.volumes.find((v: any) => v.name === 'cri').hostPath,
      { path: dir, type: 'Directory' },
      'a node without it does not start the pod',
    );
    t.same(c.securityContext, VALUES.securityContext, `${set}: the same securityContext, no capability added`);
    t.equal(spec.hostNetwork && spec.hostPID, true);
  }
  // A socket in the NRI socket's directory: that one mount serves both.
  const shared = nriOf(renderChart(['evictUnapplied=true', 'criSocket=/var/run/nri/cri.sock'])).spec.template.spec;
  t.equal(argOf(shared.containers[0].command, '--cri-socket'), '/var/run/nri/cri.sock');
  t.same(
    shared.containers[0].volumeMounts.map((m: any) => m.mountPath).sort(),
    ['/run/envhook', '/var/lib/kubelet/pods', '/var/run/nri'],
    "one mount of the NRI socket's directory, no duplicate mountPath",
  );
  const r = helm(['lint', '--strict', 'charts/envhook', '--set', 'evictUnapplied=true']);
  t.equal(r.status, 0, r.stdout + r.stderr);
  t.notMatch(r.stdout, /\[(WARNING|ERROR)\]/);
});

t.test('metrics.address empty: no endpoint, no probes, no HOST_IP', async (t) => {
  const c = nriOf(renderChart(['metrics.address='])).spec.template.spec.containers[0];
  t.equal(argOf(c.command, '--metrics-address'), undefined);
  t.notOk(c.readinessProbe || c.livenessProbe || c.ports);
  t.same(
    c.env.map((e: any) => e.name),
    ['ENVHOOK_POD_UID'],
  );
});

t.test('a rollout hands over with no window: surge, the hand-over wait, the grace period after it, the pod UID', async (t) => {
  const ds = nriOf(renderChart());
  const spec = ds.spec.template.spec;
  const c = spec.containers[0];
  t.same(ds.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  t.equal(argOf(c.command, '--handover-wait'), '20');
  t.equal(spec.terminationGracePeriodSeconds, 30, 'the wait and 10 s to stop');
  t.same(
    c.env.find((e: any) => e.name === 'ENVHOOK_POD_UID'),
    {
      name: 'ENVHOOK_POD_UID',
      valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } },
    },
  );
  t.equal(c.readinessProbe.httpGet.path, '/readyz');
  const none = nriOf(
    renderChart(['nri.handoverWait=0', 'updateStrategy.rollingUpdate.maxSurge=0', 'updateStrategy.rollingUpdate.maxUnavailable=1']),
  );
  t.equal(argOf(none.spec.template.spec.containers[0].command, '--handover-wait'), '0');
  t.equal(none.spec.template.spec.terminationGracePeriodSeconds, 10);
  t.same(none.spec.updateStrategy.rollingUpdate, { maxSurge: 0, maxUnavailable: 1 });
});

t.test('pod annotations, labels, scheduling and resources pass through', async (t) => {
  const ds = nriOf(
    renderChart(
      [],
      [
        '--set-json',
        'podAnnotations={"example.com/a":"1"}',
        '--set-json',
        'podLabels={"team":"node"}',
        '--set-json',
        'nodeSelector={"node-role.example.com/envhook":"yes"}',
        '--set-json',
        'tolerations=[{"key":"k","operator":"Exists","effect":"NoSchedule"}]',
        '--set-json',
        'affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Exists"}]}]}}}',
        '--set-json',
        'resources={"requests":{"cpu":"20m","memory":"100Mi"}}',
        '--set-json',
        'securityContext={"runAsUser":0,"privileged":false,"capabilities":{"drop":["ALL"],"add":["CHOWN"]}}',
        '--set-json',
        'updateStrategy={"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}',
      ],
    ),
  );
  const tpl = ds.spec.template;
  t.equal(tpl.metadata.annotations['example.com/a'], '1');
  t.equal(tpl.metadata.labels.team, 'node');
  t.same(
    ds.spec.selector.matchLabels,
    { 'app.kubernetes.io/name': 'envhook', 'app.kubernetes.io/instance': 'envhook', 'app.kubernetes.io/component': 'nri' },
    'podLabels stay out of the selector',
  );
  t.same(
    tpl.spec.nodeSelector,
    { 'kubernetes.io/os': 'linux', 'node-role.example.com/envhook': 'yes' },
    'merged with the default, as helm merges maps',
  );
  t.same(tpl.spec.tolerations, [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }]);
  t.ok(tpl.spec.affinity.nodeAffinity);
  t.same(tpl.spec.containers[0].resources, { requests: { cpu: '20m', memory: '100Mi' } });
  t.same(
    tpl.spec.containers[0].securityContext,
    { ...VALUES.securityContext, capabilities: { drop: ['ALL'], add: ['CHOWN'] } },
    'merged into the default key by key, as helm merges maps (a list, add, replaced whole)',
  );
  t.same(ds.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
});

t.test('every object has the standard labels', async (t) => {
  const objects = renderChart([
    'installer.enabled=true',
    'runtimeClass.enabled=true',
    'metrics.service.enabled=true',
    'metrics.serviceMonitor.enabled=true',
    'metrics.podMonitor.enabled=true',
  ]);
  t.equal(objects.length, 7, 'two DaemonSets, the RuntimeClass, Service, ServiceMonitor, PodMonitor, the test pod');
  for (const o of objects) {
    const labels = o.metadata.labels;
    t.match(
      labels,
      {
        'app.kubernetes.io/name': 'envhook',
        'app.kubernetes.io/instance': 'envhook',
        'app.kubernetes.io/version': VERSION,
        'app.kubernetes.io/managed-by': 'Helm',
        'helm.sh/chart': `envhook-${VERSION}`,
      },
      `${o.kind}/${o.metadata.name}`,
    );
    if (o.kind === 'DaemonSet')
      t.match(o.spec.template.metadata.labels, o.spec.selector.matchLabels, `${o.metadata.name}: its pods match its selector`);
  }
});

t.test('the guard: the NRI DaemonSet, the installer (shim) and the RuntimeClass', async (t) => {
  const objects = renderChart(['installer.enabled=true', 'runtimeClass.enabled=true']);
  const installer = objectOf(objects, 'DaemonSet', '-installer').spec.template.spec;
  const init = installer.initContainers[0];
  t.notOk(installer.hostNetwork, 'the shim installer: its own network');
  t.same(init.args, ['--runtime', 'containerd'], "appended to the image's entrypoint, envhook install --root /host");
  t.notOk(init.command);
  t.same(init.securityContext, { runAsUser: 0, privileged: true }, 'privileged: it writes the runtime configuration on the host');
  t.same(hostPaths(installer, init), { '/host': '/' });
  t.equal(init.image, nriOf(objects).spec.template.spec.containers[0].image, 'one image');
  const rc = objectOf(objects, 'RuntimeClass');
  t.equal(rc.metadata.name, 'envhook');
  t.equal(rc.handler, 'envhook');
  t.notOk(objectOf(objects, 'Pod').spec.runtimeClassName, 'with NRI, the test pod needs no runtimeClassName');
});

t.test('the installer alone: the pre-installed NRI plugin, or the shim on CRI-O with node paths', async (t) => {
  const nri = renderChart(['nri.enabled=false', 'installer.enabled=true', 'installer.mode=nri', 'nri.plugin.index=40']);
  t.same(nri.map((o) => o.kind).sort(), ['DaemonSet', 'Pod']);
  t.equal(
    objectOf(nri, 'DaemonSet').spec.template.spec.hostNetwork,
    true,
    "mode nri: the host's network, where the running plugin's instance lock answers install's upgrade",
  );
  t.same(objectOf(nri, 'DaemonSet').spec.template.spec.initContainers[0].args, [
    '--runtime',
    'containerd',
    '--mode',
    'nri',
    '--index',
    '40',
  ]);
  const shim = renderChart([
    'nri.enabled=false',
    'installer.enabled=true',
    'containerRuntime=crio',
    'kubeletRoot=/data/kubelet',
    'logLevel=debug',
    'installer.extraArgs={--oci-runtime,crun}',
  ]);
  t.same(objectOf(shim, 'DaemonSet').spec.template.spec.initContainers[0].args, [
    '--runtime',
    'crio',
    '--kubelet-root',
    '/data/kubelet',
    '--log-level',
    'debug',
    '--oci-runtime',
    'crun',
  ]);
  t.equal(objectOf(shim, 'Pod').spec.runtimeClassName, 'envhook', 'without NRI, the test pod runs under the handler');
});

t.test("nri.runtime.patchConfig: an init container runs install's NRI mode without a plugin file against the host's root", async (t) => {
  t.notOk(nriOf(renderChart()).spec.template.spec.initContainers, 'off by default');
  for (const [runtime, extra] of [
    ['containerd', ['--enable-nri']],
    ['crio', []],
  ] as const) {
    const spec = nriOf(renderChart(['nri.runtime.patchConfig=true', `containerRuntime=${runtime}`])).spec.template.spec;
    const init = spec.initContainers[0];
    t.same(
      init.args,
      ['--runtime', runtime, '--mode', 'nri', '--external-plugin', ...extra],
      `${runtime}: appended to envhook install --root /host`,
    );
    t.notOk(init.command, "the image's entrypoint");
    t.same(init.securityContext, { runAsUser: 0, privileged: true }, 'privileged: it writes the runtime configuration on the host');
    t.same(hostPaths(spec, init), { '/host': '/' });
    t.equal(init.image, spec.containers[0].image, 'one image');
  }
  const help = envhook(['install', '--help']);
  for (const flag of ['--external-plugin', '--enable-nri', '--mode'])
    t.match(help.stdout, new RegExp(`\\s${flag}\\b`), `envhook install ${flag}`);
});

t.test('the RuntimeClass alone, for nodes installed by hand with envhook install', async (t) => {
  const objects = renderChart(['nri.enabled=false', 'runtimeClass.enabled=true']);
  t.same(objects.map((o) => o.kind).sort(), ['Pod', 'RuntimeClass']);
  t.equal(objectOf(objects, 'Pod').spec.runtimeClassName, 'envhook', 'the test pod under the handler');
});

t.test('metrics: a headless Service, a ServiceMonitor and a PodMonitor on the metrics port', async (t) => {
  const objects = renderChart([
    'metrics.address=[$(HOST_IP)]:9555',
    'metrics.service.enabled=true',
    'metrics.serviceMonitor.enabled=true',
    'metrics.serviceMonitor.labels.release=prom',
    'metrics.podMonitor.enabled=true',
    'metrics.podMonitor.interval=15s',
  ]);
  const ds = nriOf(objects);
  const svc = objectOf(objects, 'Service');
  t.equal(svc.spec.clusterIP, 'None');
  t.same(svc.spec.ports, [{ name: 'metrics', port: 9555, targetPort: 9555 }], 'by number: the pods declare no port');
  t.match(ds.spec.template.metadata.labels, svc.spec.selector, 'the Service selects the NRI pods');
  const sm = objectOf(objects, 'ServiceMonitor');
  t.equal(sm.metadata.labels.release, 'prom');
  t.match(svc.metadata.labels, sm.spec.selector.matchLabels, 'the ServiceMonitor selects the Service');
  t.same(sm.spec.endpoints, [{ port: 'metrics', path: '/metrics', interval: '30s' }]);
  const pm = objectOf(objects, 'PodMonitor');
  t.match(ds.spec.template.metadata.labels, pm.spec.selector.matchLabels, 'the PodMonitor selects the NRI pods');
  t.same(pm.spec.podMetricsEndpoints, [{ targetPort: 9555, path: '/metrics', interval: '15s' }]);
  t.same(
    renderChart().filter((o) => /Service|Monitor/.test(o.kind)),
    [],
    'off by default',
  );
});

t.test('the helm test pod: a variable from an env file through envhook, a failure when it is missing', async (t) => {
  const pod = objectOf(renderChart(), 'Pod');
  t.equal(pod.metadata.annotations['helm.sh/hook'], 'test');
  const env = JSON.parse(pod.metadata.annotations['envhook.io/env']);
  t.ok(validateEnvAnnotation(env), "envhook's own schema accepts the annotation");
  t.same(env.check[0].valueFrom.fileKeyRef, { volumeName: 'config', path: 'config.env', key: 'CONFIG_VAR' });
  t.equal(pod.spec.restartPolicy, 'Never');
  t.same(pod.spec.volumes, [{ name: 'config', emptyDir: {} }]);
  t.match(pod.spec.initContainers[0].command.at(-1), "CONFIG_VAR='HELLO'", 'the init container writes the env file');
  const script = pod.spec.containers[0].command.at(-1);
  t.match(script, /"\$CONFIG_VAR" = HELLO/);
  t.match(script, /exit 1/, 'and fails without it');
});

t.test("refusals: helm's one line naming the value", async (t) => {
  const refused = (set: string, line: string) => {
    const r = helm(['template', 'envhook', 'charts/envhook', '-n', 'kube-system', '--set', set]);
    t.equal(r.status, 1, set);
    t.equal(r.stdout, '', `${set}: nothing rendered`);
    t.ok(r.stderr.split('\n').includes(line), `${set}: ${line}\n${r.stderr}`);
  };
  refused('logLevel=loud', "- at '/logLevel': value must be one of 'fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'");
  refused('nri.plugin.index=100', "- at '/nri/plugin/index': maximum: got 100, want 99");
  refused('runDir=run/envhook', "- at '/runDir': 'run/envhook' does not match pattern '^/(.*[^/])?$'");
  refused('runDirOnDisk=ignore', "- at '/runDirOnDisk': value must be one of 'warn', 'refuse'");
  refused('fileGroup=adm', "- at '/fileGroup': 'adm' does not match pattern '^[0-9]{0,10}$'");
  refused('fileGroup=-1', "- at '/fileGroup': minimum: got -1, want 0");
  refused('podCopyBytes=-1', "- at '/podCopyBytes': minimum: got -1, want 1");
  refused('podCopyFiles=0', "- at '/podCopyFiles': minimum: got 0, want 1");
  refused('podCopyVolumes=many', "- at '/podCopyVolumes': 'many' does not match pattern '^([1-9][0-9]{0,14})?$'");
  refused('nodeCopyBytes=256Mi', "- at '/nodeCopyBytes': '256Mi' does not match pattern '^([1-9][0-9]{0,14})?$'");
  refused('nodeCopyBytes=1000000000000000', "- at '/nodeCopyBytes': maximum: got 1×10¹⁵, want 9.99999999999999×10¹⁴");
  refused(
    'criSocket=run/containerd/containerd.sock',
    "- at '/criSocket': 'run/containerd/containerd.sock' does not match pattern '^(/([^/]+/)*[^/]+)?$'",
  );
  refused('evictUnapplied=yes', "- at '/evictUnapplied': got string, want boolean");
  refused(
    'criSocket=/run/envhook/cri.sock',
    "Error: execution error at (envhook/templates/nri-daemonset.yaml:1:4): criSocket /run/envhook/cri.sock: its directory is runDir or the kubelet's pods directory, mounted for other uses; set criSocket to the runtime's own CRI socket",
  );
  refused('nri.sokcet=/x', "- at '/nri': additional properties 'sokcet' not allowed");
  refused('containerRuntime=docker', "- at '/containerRuntime': value must be one of 'containerd', 'crio'");
  refused('image.pullPolicy=Sometimes', "- at '/image/pullPolicy': value must be one of 'IfNotPresent', 'Always', 'Never'");
  refused(
    'installer.enabled=true,installer.mode=nri',
    'Error: execution error at (envhook/templates/nri-daemonset.yaml:1:4): installer.mode nri with nri.enabled: two envhook registrations on every node; set installer.mode shim (the guard) or nri.enabled false',
  );
  refused(
    'nri.enabled=false',
    'Error: execution error at (envhook/templates/nri-daemonset.yaml:1:4): nri.enabled, installer.enabled and runtimeClass.enabled are all false: nothing to install; set one of them true',
  );
  refused(
    'metrics.serviceMonitor.enabled=true',
    'Error: execution error at (envhook/templates/nri-daemonset.yaml:1:4): metrics.serviceMonitor.enabled needs metrics.service.enabled (the Service it selects)',
  );
});

t.test('NOTES.txt: what to check next, as helm install prints it', async (t) => {
  const r = helm(['install', 'envhook', 'charts/envhook', '-n', 'kube-system', '--dry-run=client', '--set', 'installer.enabled=true']);
  t.equal(r.status, 0, r.stderr);
  const notes = r.stdout.slice(r.stdout.indexOf('NOTES:'));
  t.match(notes, 'kubectl -n kube-system rollout status ds/envhook-nri');
  t.match(notes, 'kubectl -n kube-system exec ds/envhook-nri -- /opt/envhook/dist/envhook status');
  t.match(notes, 'systemctl restart containerd');
  t.match(notes, 'Pods opt into the shim with runtimeClassName: envhook');
  t.match(notes, 'helm test envhook -n kube-system');
  const patched = helm([
    'install',
    'envhook',
    'charts/envhook',
    '-n',
    'kube-system',
    '--dry-run=client',
    '--set',
    'nri.runtime.patchConfig=true',
  ]);
  t.match(patched.stdout.slice(patched.stdout.indexOf('NOTES:')), "nri.runtime.patchConfig switched NRI on in the runtime's configuration");
});
