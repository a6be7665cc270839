// Parity: one pod through `envhook inject` (the real CLI, the config.json applier) and through
// the NRI handler (the adjustment applied as containerd 2.1 applies it) gives the same env, the
// same removals and the same owners. The NRI request is built from the very config.json that
// inject rewrites: its process env, mounts and user-namespace mappings.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createNriHandler } from '../../../src/nri/worker/handler.ts';
import type { NriAdjustment } from '../../../src/apply/nri-adjustment.ts';
import { createLogger } from '../../../src/log.ts';
import { inject, ref, setup } from '../../helpers/shim/inject.ts';
import { makeAtomicVolume } from '../../../scripts/kubelet-pod.ts';
import { CANARY, ENV_ANNOTATIONS, FILES } from '../../helpers/shim/injected.ts';
import { applyAdjustment, nriRequest } from '../../helpers/nri/requests.ts';
import { missingForRunc } from '../../helpers/bundle.ts';

const SERVICES = [
  'KUBERNETES_SERVICE_HOST=10.96.0.1',
  'KUBERNETES_PORT=tcp://10.96.0.1:443',
  'REDIS_SERVICE_HOST=10.96.0.9',
  'REDIS_SERVICE_PORT=6379',
  'REDIS_PORT=tcp://10.96.0.9:6379',
  'REDIS_PORT_6379_TCP_ADDR=10.96.0.9',
];
const ANNOTATIONS = {
  ...ENV_ANNOTATIONS,
  'envhook.io/env': {
    app: [
      ...ENV_ANNOTATIONS['envhook.io/env'].app,
      { name: 'REDIS_PORT', value: 'mine $(REDIS_SERVICE_HOST) $$' },
      { name: 'PATH', valueFrom: ref('CONFIG_VAR', 'config.env') },
    ],
  },
  'envhook.io/serviceLinks': { app: false },
  'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000, items: [{ path: 'nested/tls.key', user: 1001 }] }],
};

const skip = missingForRunc();
t.test('the same pod through inject and through NRI', { skip }, async (t) => {
  const s = setup(t, FILES, ANNOTATIONS, ['PATH=/bin', 'HOME=/', 'PATH=/dup', ...SERVICES]);
  const keys = makeAtomicVolume(s.pod, 'secret', 'keys', { 'ca.crt': 'C', 'nested/tls.key': { data: 'K', mode: 0o400 } });
  const data = path.join(keys, fs.readlinkSync(path.join(keys, '..data')));
  const owners = () => ['ca.crt', 'nested/tls.key'].map((f) => fs.statSync(path.join(data, f)).uid);
  const before = JSON.parse(fs.readFileSync(s.config, 'utf8'));
  const request = nriRequest(s.pod, 'app', {
    annotations: before.annotations,
    env: before.process.env,
    mounts: before.mounts,
    containerAnnotations: {},
  });

  const r = inject(s);
  t.equal(r.status, 0, r.stderr);
  const injected = JSON.parse(fs.readFileSync(s.config, 'utf8'));
  const viaInject = owners();
  t.same(viaInject, [1000, 1001], 'inject chowned');
  for (const f of ['ca.crt', 'nested/tls.key']) fs.chownSync(path.join(data, f), 0, 0);

  const log = path.join(s.dir, 'nri.log');
  const handler = createNriHandler({ settings: { kubeletRoot: s.pod.kubeletRoot }, log: createLogger(log, 'debug'), removeEnv: true });
  const adj = (await handler(request)) as NriAdjustment;
  t.same(applyAdjustment(before.process.env, adj, true), injected.process.env, 'the same env, in the same order');
  const removed = before.process.env
    .filter((e: string) => !injected.process.env.some((i: string) => i.split('=')[0] === e.split('=')[0]))
    .map((e: string) => e.split('=')[0]);
  t.same(adj.removeEnv, removed, 'the same removals');
  t.same(
    removed,
    ['REDIS_SERVICE_HOST', 'REDIS_SERVICE_PORT', 'REDIS_PORT_6379_TCP_ADDR'],
    'a removed name set again (REDIS_PORT) is not removed',
  );
  t.equal(adj.annotations['envhook.io/applied'], injected.annotations['envhook.io/applied'], 'the same applied mark');
  t.same(owners(), viaInject, 'the same owners');

  // Without removals (the default: NRI 0.8.0 drops them) the same pod is refused, not half-applied.
  for (const f of ['ca.crt', 'nested/tls.key']) fs.chownSync(path.join(data, f), 0, 0);
  const strict = createNriHandler({ settings: { kubeletRoot: s.pod.kubeletRoot }, log: createLogger(log, 'debug') });
  await t.rejects(async () => strict(request), {
    message: /^annotation "envhook\.io\/serviceLinks": container "app" would have 3 service variables removed/,
  });
  t.same(owners(), [0, 0], 'refused before any chown');
  t.notMatch(fs.readFileSync(log, 'utf8'), CANARY, 'no value in the debug log');
});
