// examples/nri-daemonset.yaml as a careful admin expects it: node-critical, host network (one
// single-instance lock with a pre-installed envhook), a rollout that never runs two
// registrations, requests and no limits, readiness = registered and liveness over HTTP on the
// metrics port the command opens, logs on stderr, and a command envhook nri understands. Both
// DaemonSets run the one image. test/e2e/image.test.ts runs them in that image under Podman.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { envhook, REPO } from '../helpers/bundle.ts';
import { loadSettings } from '../../src/settings.ts';
import { parseAddress } from '../../src/nri/supervisor/http.ts';
import { INSTALLER_DAEMONSET, NRI_DAEMONSET, readManifest } from '../helpers/install/daemonset.ts';
import { IMAGE_FILES } from '../../scripts/image-context.ts';

const ds = readManifest(NRI_DAEMONSET);
const read = (rel: string) => fs.readFileSync(path.join(REPO, rel), 'utf8');
const spec = ds.spec.template.spec;
const c = spec.containers[0];
const arg = (flag: string): string | undefined => {
  const i = c.command.indexOf(flag);
  return i < 0 ? undefined : c.command[i + 1];
};

t.test('scheduling and rollout', async (t) => {
  t.equal(spec.priorityClassName, 'system-node-critical', 'evicted last: annotated pods need it to get their env');
  t.equal(spec.hostNetwork, true, "the node's network namespace: the abstract-socket lock is per namespace");
  t.same(
    ds.spec.updateStrategy,
    { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
    'the old pod gone before the new one starts: never two registrations',
  );
  t.ok(
    Number.isInteger(spec.terminationGracePeriodSeconds) &&
      spec.terminationGracePeriodSeconds > 0 &&
      spec.terminationGracePeriodSeconds <= 30,
    'a short, explicit grace period',
  );
  t.same(spec.tolerations, [{ operator: 'Exists' }], 'on every node, tainted ones too');
  t.notOk(spec.runtimeClassName, 'not itself under the envhook handler');
});

t.test('resources: requests for cpu and memory, no limits', async (t) => {
  t.match(c.resources?.requests, { cpu: /^\d+m$/, memory: /^\d+Mi$/ });
  t.notOk(c.resources?.limits, 'an OOM kill or CPU throttling drops the plugin, and NRI fails open');
});

t.test("metrics on the node's internal address from the downward API, never every interface", async (t) => {
  const address = arg('--metrics-address') ?? '';
  t.equal(address, '[$(HOST_IP)]:9901', 'the node address the kubelet expands into the command, in brackets');
  t.same(
    c.env?.find((e: any) => e.name === 'HOST_IP'),
    { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
    'HOST_IP is the node IP (downward API)',
  );
  // what envhook nri gets once the kubelet has expanded $(HOST_IP), on an IPv4 node and an IPv6
  // one: the node's address and the port, never :PORT
  for (const hostIP of ['192.0.2.10', '2001:db8::10']) {
    const expanded = address.replace('$(HOST_IP)', hostIP);
    t.equal(loadSettings({ metricsAddress: expanded }, { ENVHOOK_CONFIG: '' }, {}).metricsAddress, expanded);
    t.same(parseAddress(expanded), { host: hostIP, port: 9901 }, expanded);
  }
  t.notMatch(address, /^:|^0\.0\.0\.0:|^\[::\]:/, 'not every interface');
  t.match(read(NRI_DAEMONSET), /status\.hostIP/, 'the comment says where metrics are served');
});

t.test('the host PID namespace: envhook status on the node and in the pod reads the supervisor the status file names', async (t) => {
  t.equal(spec.hostPID, true);
  const text = read(NRI_DAEMONSET);
  t.match(text, /hostPID/, 'the header comment says why');
  t.match(text, /kubectl exec -n kube-system ds\/envhook-nri -- \/opt\/envhook\/dist\/envhook status/, 'and how to run status in the pod');
  t.ok(c.command[0] in IMAGE_FILES, 'with the executable the command runs');
});

t.test('probes: readiness /readyz and liveness /healthz on the port --metrics-address opens', async (t) => {
  const port = Number(/:(\d+)$/.exec(arg('--metrics-address') ?? '')?.[1]);
  t.equal(port, 9901, '--metrics-address …:9901');
  t.same(c.readinessProbe?.httpGet, { path: '/readyz', port }, 'ready = registered with the runtime');
  t.same(c.livenessProbe?.httpGet, { path: '/healthz', port });
  t.same(c.ports, [{ name: 'metrics', containerPort: port }], 'the port is declared');
});

t.test('the command: envhook nri on the host socket, flags envhook nri has, logs on stderr', async (t) => {
  t.ok(c.command[0] in IMAGE_FILES, `${c.command[0]} is a file of the image`);
  t.equal(c.command[1], 'nri');
  t.equal(arg('--socket'), '/var/run/nri/nri.sock');
  t.equal(arg('--log-file'), undefined, 'no log file: kubectl logs reads stderr');
  t.notOk(c.args, 'the whole command in `command`');
  const help = envhook(['nri', '--help']);
  t.equal(help.status, 0, help.stderr);
  for (const flag of c.command.filter((a: string) => a.startsWith('--')))
    t.match(help.stdout, new RegExp(`\\s${flag} `), `envhook nri ${flag}`);
});

t.test('mounts: the NRI socket directory, the kubelet pods directory at its own path, /run/envhook', async (t) => {
  const mount = (p: string) => c.volumeMounts.find((m: any) => m.mountPath === p);
  const hostPathOf = (m: any) => spec.volumes.find((v: any) => v.name === m?.name)?.hostPath.path;
  t.equal(hostPathOf(mount('/var/run/nri')), '/var/run/nri');
  const kubeletRoot = arg('--kubelet-root');
  t.equal(kubeletRoot, '/var/lib/kubelet');
  t.equal(hostPathOf(mount(`${kubeletRoot}/pods`)), `${kubeletRoot}/pods`, 'the runtime names pod files by their host path');
  t.equal(mount(`${kubeletRoot}/pods`).mountPropagation, 'HostToContainer', 'volume mounts made later are seen');
  t.equal(hostPathOf(mount('/run/envhook')), '/run/envhook', "the status where the node's envhook status reads it");
});

t.test('least privilege: root, not privileged, only the capabilities envhook is measured to need', async (t) => {
  t.same(c.securityContext, {
    runAsUser: 0,
    privileged: false,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    seccompProfile: { type: 'RuntimeDefault' },
    capabilities: { drop: ['ALL'], add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'] },
  });
  const doc = read('docs/privileges.md');
  for (const cap of c.securityContext.capabilities.add) t.match(doc, `\`${cap}\``, `docs/privileges.md says what ${cap} is for`);
  t.match(read(NRI_DAEMONSET), /docs\/privileges\.md/, 'the comment points there');
});

t.test('both DaemonSets run the one image', async (t) => {
  const installer = readManifest(INSTALLER_DAEMONSET).spec.template.spec.initContainers[0];
  t.equal(c.image, installer.image);
  t.notOk(installer.command, "the installer runs the image's entrypoint (envhook install --root /host)");
});
