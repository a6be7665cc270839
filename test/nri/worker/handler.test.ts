// The NRI CreateContainer handler on kubelet-like pod directories with real files and real
// chown: the adjustment (env set, the applied mark), owners, NRI's trusted fields, the empty
// adjustment with no file I/O, removals refused, errors as the shim's, canaries never logged.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createNriHandler } from '../../../src/nri/worker/handler.ts';
import type { NriCreateRequest } from '../../../src/facts/nri-facts.ts';
import { EMPTY_ADJUSTMENT, type NriAdjustment } from '../../../src/apply/nri-adjustment.ts';
import { EnvhookError } from '../../../src/errors.ts';
import { createLogger } from '../../../src/log.ts';
import { appliedDigest } from '../../../src/plan/mark.ts';
import { makePod, type Pod } from '../../../scripts/kubelet-pod.ts';
import { makeAtomicVolume } from '../../../scripts/kubelet-pod.ts';
import { CANARY, ENV_ANNOTATIONS, FAILING_ANNOTATIONS, FAILING_MESSAGE, FILES, raw } from '../../helpers/shim/injected.ts';
import { applyAdjustment, nriRequest } from '../../helpers/nri/requests.ts';
import { APPLIED_KEY } from '../../../src/k8s/annotation-keys.ts';
// What a volume that is not in the pod directory is refused with, as the user reads it.
const NOT_SET_UP =
  "the kubelet sets up only volumes that a container of the pod mounts; mount it in one of the pod's containers (the init container is enough)";

const SERVICES = ['KUBERNETES_SERVICE_HOST=10.96.0.1', 'REDIS_SERVICE_HOST=10.96.0.9', 'REDIS_PORT=tcp://10.96.0.9:6379'];

function setup(t: Test) {
  const dir = t.testdir({});
  const pod = makePod(path.join(dir, 'kubelet'), { emptyDirs: { config: FILES } });
  const keys = makeAtomicVolume(pod, 'secret', 'keys', { 'tls.key': { data: CANARY, mode: 0o400 } });
  const logFile = path.join(dir, 'envhook.log');
  const handler = createNriHandler({ settings: { kubeletRoot: pod.kubeletRoot }, log: createLogger(logFile, 'debug') });
  const tsDir = path.join(keys, fs.readlinkSync(path.join(keys, '..data')));
  return { dir, pod, keys, tsDir, logFile, handler, log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '') };
}

const call = async (h: ReturnType<typeof createNriHandler>, r: NriCreateRequest) => (await h(r)) as NriAdjustment;

t.test('an annotated container: env set, the applied mark, owners chowned; nothing logged of a value', async (t) => {
  const s = setup(t);
  const annotations = raw({ ...ENV_ANNOTATIONS, 'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }] });
  const adj = await call(s.handler, nriRequest(s.pod, 'app', { annotations, env: ['PATH=/bin', 'FROM_FILE=old', 'HOME=/'] }));
  t.same(
    adj.env,
    [
      { key: 'CFG_CONFIG_VAR', value: 'HELLO' },
      { key: 'CFG_SECRET', value: CANARY },
      { key: 'FROM_FILE', value: 'HELLO' },
      { key: 'GREETING', value: 'HELLO world' },
    ],
    'every variable set, with its value, in the order first set',
  );
  t.same(adj.removeEnv, []);
  t.same(
    adj.annotations,
    { [APPLIED_KEY]: appliedDigest({ annotations, container: 'app' }) },
    'the mark the guard handler and the hook read',
  );
  t.same(applyAdjustment(['PATH=/bin', 'FROM_FILE=old', 'HOME=/'], adj), [
    'PATH=/bin',
    'FROM_FILE=HELLO',
    'HOME=/',
    'CFG_CONFIG_VAR=HELLO',
    'CFG_SECRET=' + CANARY,
    'GREETING=HELLO world',
  ]);
  t.equal(fs.statSync(path.join(s.tsDir, 'tls.key')).uid, 1000, 'owners chowned at CreateContainer');
  t.match(s.log(), /"msg":"nri: adjusted"/);
  t.notMatch(s.log(), CANARY, 'no value in the debug log');
});

t.test('no envhook annotation, a sandbox, or nothing for this container: the empty adjustment, no file I/O', async (t) => {
  // A kubelet root and pod directory that do not exist: any lookup of a volume would fail.
  const pod = makePod(path.join(t.testdir({}), 'kubelet'));
  const gone = { ...pod, kubeletRoot: '/nonexistent/kubelet', uid: 'no-such-pod' } as Pod;
  const handler = createNriHandler({ settings: { kubeletRoot: '/nonexistent/kubelet' }, log: createLogger(undefined) });
  t.equal(await handler(nriRequest(gone, 'app', { annotations: { 'other.io/x': '1' } })), EMPTY_ADJUSTMENT, 'no envhook.io/ annotation');
  const sandbox = { 'io.kubernetes.cri.container-type': 'sandbox' };
  t.equal(
    await handler(nriRequest(gone, 'app', { annotations: raw(ENV_ANNOTATIONS), containerAnnotations: sandbox })),
    EMPTY_ADJUSTMENT,
    'a sandbox',
  );
  const others = raw({
    'envhook.io/env': { other: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'config', path: 'a.env', key: 'A' } } }] },
  });
  // Answered with the mark alone (no file read): the guard's front sees it and execs the runtime at once.
  t.same(
    await handler(nriRequest(gone, 'app', { annotations: others })),
    { env: [], removeEnv: [], annotations: { [APPLIED_KEY]: appliedDigest({ container: 'app', annotations: others }) } },
    'entries for another container only: the applied mark, nothing else',
  );
  await t.rejects(
    async () => handler(nriRequest(gone, 'other', { annotations: others })),
    new EnvhookError('pod directory /nonexistent/kubelet/pods/no-such-pod not found'),
    'the same pod for the container it names does look',
  );
});

t.test('NRI fields are trusted over annotations: container name and pod UID', async (t) => {
  const s = setup(t);
  const forged = {
    'io.kubernetes.cri.container-name': 'other',
    'io.kubernetes.cri.sandbox-uid': 'forged-uid',
    'io.kubernetes.pod.uid': 'forged-uid',
  };
  const annotations = {
    ...forged,
    ...raw({
      'envhook.io/env': {
        app: [{ name: 'FROM_FILE', valueFrom: { fileKeyRef: { volumeName: 'config', path: 'config.env', key: 'CONFIG_VAR' } } }],
        other: [{ name: 'WRONG', value: 'x' }],
      },
    }),
  };
  const adj = await call(s.handler, nriRequest(s.pod, 'app', { annotations, containerAnnotations: forged }));
  t.same(adj.env, [{ key: 'FROM_FILE', value: 'HELLO' }], "NRI's container name, NRI's pod directory");
});

t.test("failures: the shim's one-line messages, as EnvhookError; nothing chowned, no value logged", async (t) => {
  const s = setup(t);
  const owners = { 'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }] };
  fs.mkdirSync(path.join(s.pod.dir, 'volumes/kubernetes.io~nfs/share'), { recursive: true });
  const cases: [string, Record<string, unknown>, string][] = [
    ['missing key', { ...FAILING_ANNOTATIONS, ...owners }, FAILING_MESSAGE],
    [
      'volume not found',
      { 'envhook.io/env': { app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'nope', path: 'a', key: 'A' } } }] } },
      `volume "nope" not found in the pod: ${NOT_SET_UP}`,
    ],
    [
      'not a volume env is read from',
      { 'envhook.io/envFrom': { app: [{ fileRef: { volumeName: 'share', path: 'a.env' } }] } },
      'volume "share" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume',
    ],
    [
      "a secret volume's file that is not an env file",
      { 'envhook.io/envFrom': { app: [{ fileRef: { volumeName: 'keys', path: 'tls.key' } }] } },
      'volume "keys": file "tls.key": line 1: missing \'=\'',
    ],
    ['bad annotation', { 'envhook.io/env': '{"app": [' }, 'annotation "envhook.io/env" is not valid JSON (truncated)'],
  ];
  for (const [name, annotations, message] of cases) {
    await t.rejects(async () => s.handler(nriRequest(s.pod, 'app', { annotations: raw(annotations) })), new EnvhookError(message), name);
  }
  t.equal(fs.statSync(path.join(s.tsDir, 'tls.key')).uid, 0, 'owners are chowned only when everything else succeeded');
  const badUid = { ...s.pod, uid: '../etc' } as Pod;
  await t.rejects(
    async () => s.handler(nriRequest(badUid, 'app', { annotations: raw(ENV_ANNOTATIONS) })),
    new EnvhookError('pod UID "../etc" is not a valid pod UID'),
  );
  t.match(
    s.log(),
    /"pod":"web","namespace":"default","podUid":"[^"]+","container":"app","id":"ctr-app","reason":"volume \\"nope\\" not found in the pod: [^"]+","msg":"nri: CreateContainer refused"/,
    'a refusal: one warn line, pod by name, its UID as podUid',
  );
  t.notMatch(s.log(), /CreateContainer failed/, 'a refusal is not an internal failure');
  t.notMatch(s.log(), CANARY, 'no value in the debug log');
});

t.test('serviceLinks false: removals are refused, never dropped silently', async (t) => {
  const s = setup(t);
  const annotations = raw({ 'envhook.io/serviceLinks': { '*': false }, 'envhook.io/env': { app: [{ name: 'A', value: CANARY }] } });
  await t.rejects(
    async () => s.handler(nriRequest(s.pod, 'app', { annotations, env: ['PATH=/bin', ...SERVICES] })),
    new EnvhookError(
      'annotation "envhook.io/serviceLinks": container "app" would have 2 service variables removed, but NRI on this runtime drops removals: ' +
        "set enableServiceLinks: false in the pod spec instead, or give the pod runtimeClassName: envhook (envhook's runtime handler removes them)",
    ),
  );
  const none = await call(s.handler, nriRequest(s.pod, 'app', { annotations, env: ['PATH=/bin', SERVICES[0]!] }));
  t.same(none.env, [{ key: 'A', value: CANARY }], 'nothing to remove (only the kubernetes service): applied');
  const proven = createNriHandler({ settings: { kubeletRoot: s.pod.kubeletRoot }, log: createLogger(undefined), removeEnv: true });
  t.same(
    (await call(proven, nriRequest(s.pod, 'app', { annotations, env: ['PATH=/bin', ...SERVICES] }))).removeEnv,
    ['REDIS_SERVICE_HOST', 'REDIS_PORT'],
    'on a runtime proven to remove',
  );
  t.notMatch(s.log(), CANARY);
});

t.test('serviceLinks false under the envhook runtime handler: left wholly to that handler', async (t) => {
  const s = setup(t);
  const annotations = raw({ 'envhook.io/serviceLinks': { '*': false }, 'envhook.io/env': { app: [{ name: 'A', value: CANARY }] } });
  const base = nriRequest(s.pod, 'app', { annotations, env: ['PATH=/bin', ...SERVICES] });
  const guarded = { ...base, pod: { ...base.pod, runtimeHandler: 'envhook' } };
  t.equal(await s.handler(guarded), EMPTY_ADJUSTMENT, 'no env and no applied mark: the front applies it all');
  t.match(
    s.log(),
    /"removed":\["REDIS_SERVICE_HOST","REDIS_PORT"\].*"msg":"nri: left to the envhook runtime handler \(service-link removal\)"/,
  );
  const other = { ...base, pod: { ...base.pod, runtimeHandler: 'kata' } };
  await t.rejects(async () => s.handler(other), { message: /would have 2 service variables removed/ }, 'another handler: refused');
  const plain = await call(s.handler, { ...guarded, container: { ...guarded.container, env: ['PATH=/bin'] } });
  t.same(plain.env, [{ key: 'A', value: CANARY }], 'nothing to remove: NRI applies it even under the handler');
  t.notMatch(s.log(), CANARY);
});

t.test('owners: the user namespace and idmapped mounts of the request', async (t) => {
  const s = setup(t);
  const annotations = raw({ 'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }] });
  const userns = [{ containerId: 0, hostId: 100000, size: 65536 }];
  t.equal(
    await s.handler(nriRequest(s.pod, 'app', { annotations, uidMappings: userns })),
    EMPTY_ADJUSTMENT,
    'owners only: nothing to adjust',
  );
  t.equal(fs.statSync(path.join(s.tsDir, 'tls.key')).uid, 101000, 'mapped through the user namespace');
  const idmapped = [...s.pod.mounts('app'), { destination: '/keys', source: s.keys, type: 'bind', options: ['rbind', 'ro', 'idmap'] }];
  t.equal(await s.handler(nriRequest(s.pod, 'app', { annotations, uidMappings: userns, mounts: idmapped })), EMPTY_ADJUSTMENT);
  t.equal(fs.statSync(path.join(s.tsDir, 'tls.key')).uid, 1000, 'an idmapped mount: the container UID as is');
  // A container in a user namespace as NRI gives it (wire/plain-data.ts): its mounts marked idmapped, no mappings.
  const runDir = path.join(s.dir, 'run');
  const copying = createNriHandler({ settings: { kubeletRoot: s.pod.kubeletRoot }, log: createLogger(s.logFile, 'debug'), runDir });
  fs.chownSync(path.join(s.tsDir, 'tls.key'), 0, 0);
  const inUserns = [
    ...s.pod.mounts('app'),
    { destination: '/keys', source: s.keys, type: 'bind', options: ['rbind', 'ro'], idmapped: true },
  ];
  t.equal(
    await copying(nriRequest(s.pod, 'app', { annotations, mounts: inUserns })),
    EMPTY_ADJUSTMENT,
    'no mount replaced: the idmapped one kept',
  );
  t.equal(fs.statSync(path.join(s.tsDir, 'tls.key')).uid, 1000, 'chowned in place, the container UID as is');
  t.notOk(fs.existsSync(path.join(runDir, 'volumes')), 'no owned copy');
  await t.rejects(
    async () =>
      s.handler(
        nriRequest(s.pod, 'app', {
          annotations: raw({ 'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 70000 }] }),
          uidMappings: userns,
        }),
      ),
    new EnvhookError(
      `volume "keys": defaultUser 70000 is outside the container's user namespace (linux.uidMappings: 0-65535 → 100000-165535)`,
    ),
  );
});
