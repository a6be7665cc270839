import t from 'tap';
import { silentLogger } from '../../src/log.ts';
import { createNriHandler, emptyAdjustmentHandler } from '../../src/nri/handler.ts';
import { EMPTY_ADJUSTMENT } from '../../src/nri/types.ts';

t.test('the handler factory: the placeholder until the pipeline is wired', async (t) => {
  const h = createNriHandler({ kubeletRoot: '/var/lib/kubelet', runtime: 'runc', logFile: undefined, logLevel: 'info' }, silentLogger);
  t.equal(h, emptyAdjustmentHandler);
  const adj = await h({ pod: { id: 'p', name: 'n', namespace: 'd', uid: 'u', annotations: { 'envhook.io/env': '{}' } }, container: { id: 'c', name: 'c', annotations: {}, env: ['A=1'], mounts: [] } });
  t.equal(adj, EMPTY_ADJUSTMENT);
  t.same(adj, { env: [], removeEnv: [], annotations: {} });
});
