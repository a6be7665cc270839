// PluginSession.evict (src/nri/evict.ts) against the test peer playing the runtime: the
// UpdateContainers request as NRI defines it, the answer of a runtime built on NRI's adaptation
// (evictions dropped, nothing failed), a `failed` list, error statuses and no answer.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { EnvhookError } from '../../src/errors.ts';
import { createLogger } from '../../src/log.ts';
import { decode, Msg } from '../../src/nri/descriptors.ts';
import { startPlugin } from '../../src/nri/plugin.ts';
import { Code, RpcError } from '../../src/nri/ttrpc.ts';
import { EMPTY_ADJUSTMENT } from '../../src/nri/types.ts';
import { startFakeRuntime, type FakeRuntimeOptions } from '../helpers/nri-runtime.ts';

const CANARY = 'canary-5d1e-status';
const REASON = 'envhook: env not applied';
const TWO = [{ containerId: 'ctr-1', reason: REASON }, { containerId: 'ctr-2', reason: REASON }];

async function connect(t: Test, runtime: FakeRuntimeOptions = {}) {
  const logFile = path.join(t.testdir(), 'envhook.log');
  const rt = await startFakeRuntime(runtime);
  const session = startPlugin(net.createConnection(rt.socketPath), { name: 'envhook', index: '50', handler: () => EMPTY_ADJUSTMENT, log: createLogger(logFile, 'debug') });
  const peer = await rt.nextPlugin();
  await session.registered;
  t.teardown(async () => {
    session.close('test over');
    await rt.close();
  });
  return { session, peer, log: () => fs.readFileSync(logFile, 'utf8') };
}

t.test("a runtime built on NRI's adaptation: the request as NRI defines it, evictions dropped, nothing failed", async (t) => {
  const { session, peer } = await connect(t);
  t.same(await session.evict(TWO), { failed: [] });
  t.equal(peer.updates.length, 1, 'one UpdateContainers call');
  t.same(decode(Msg.UpdateContainersRequest, peer.updates[0]!), { $typeName: 'nri.pkg.api.v1alpha1.UpdateContainersRequest', update: [], evict: TWO.map((e) => ({ $typeName: 'nri.pkg.api.v1alpha1.ContainerEviction', ...e })) });
  t.same(await session.evict([]), { failed: [] }, 'an empty list');
  t.equal(peer.updates.length, 1, 'sends nothing');
});

t.test("the response's failed entries are the ids returned", async (t) => {
  const { session } = await connect(t, { updateContainers: (req) => ({ failed: req.evict.slice(1).map((e) => ({ containerId: e.containerId })) }) });
  t.same(await session.evict(TWO), { failed: ['ctr-2'] });
});

const STATUSES: [string, number, string][] = [
  ['an error status (containerd: failed updates)', Code.Unknown, 'the runtime answered with error status 2'],
  ['Unimplemented', Code.Unimplemented, 'the runtime does not implement UpdateContainers'],
];
for (const [what, code, reason] of STATUSES) {
  t.test(`${what}: an EnvhookError of one line, never the runtime's message`, async (t) => {
    const { session, log } = await connect(t, {
      updateContainers: () => {
        throw new RpcError(code, `NRI update of some containers failed ${CANARY}`);
      },
    });
    const err = await session.evict(TWO).catch((e: unknown) => e);
    t.ok(err instanceof EnvhookError);
    t.equal((err as Error).message, `NRI eviction of 2 container(s) failed: ${reason}`);
    t.equal((err as Error).cause, undefined, 'no cause carrying the message');
    t.same(await session.evict([]), { failed: [] }, 'the session stays');
    t.notMatch(log(), CANARY);
  });
}

t.test("no answer within the runtime's request timeout", async (t) => {
  const { session } = await connect(t, { requestTimeoutMs: 150, updateContainers: () => new Promise(() => {}) });
  await t.rejects(session.evict(TWO), new EnvhookError('NRI eviction of 2 container(s) failed: no response within 150 ms'));
});

t.test('the connection gone, before or during the call', async (t) => {
  let called!: () => void;
  const calledP = new Promise<void>((resolve) => (called = resolve));
  const { session, peer } = await connect(t, {
    updateContainers: () => {
      called();
      return new Promise(() => {});
    },
  });
  const pending = session.evict(TWO);
  await calledP;
  peer.socket.destroy();
  await t.rejects(pending, new EnvhookError('NRI eviction of 2 container(s) failed: the connection to the runtime is gone'));
  await session.closed;
  await t.rejects(session.evict(TWO), new EnvhookError('NRI eviction of 2 container(s) failed: the plugin is not connected to the runtime'));
});
