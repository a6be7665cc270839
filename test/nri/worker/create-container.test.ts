// CreateContainer as a method of the session: the request decoded for the handler, the
// adjustment encoded back, the result counted for the supervisor, a refusal answered with
// envhook's one line.
import t from 'tap';
import { EnvhookError } from '../../../src/errors.ts';
import { silentLogger } from '../../../src/log.ts';
import { EMPTY_ADJUSTMENT, type NriAdjustment } from '../../../src/apply/nri-adjustment.ts';
import type { NriCreateRequest } from '../../../src/facts/nri-facts.ts';
import { decode, encode, Msg } from '../../../src/nri/wire/descriptors.ts';
import { createContainer } from '../../../src/nri/worker/create-container.ts';
import { silentObserver, type RequestResult } from '../../../src/nri/worker/observer.ts';
import { newSessionState } from '../../../src/nri/worker/session-state.ts';
import { ANSWERED_ELSEWHERE, type NriCreateHandler } from '../../../src/nri/worker/types.ts';

const payload = () =>
  Buffer.from(
    encode(Msg.CreateContainerRequest, {
      pod: { id: 'sb', name: 'web', namespace: 'ns', uid: 'u1', annotations: { 'envhook.io/env': '{}' } },
      container: { id: 'c1', name: 'app', env: ['A=1'] },
    }),
  );

function session(handler: NriCreateHandler) {
  const results: [RequestResult, string | undefined][] = [];
  const created: string[] = [];
  const state = newSessionState({
    log: silentLogger,
    handler,
    pods: { synchronized: () => {}, podEnded: () => {}, created: (r) => void created.push(r.container.id) },
    observer: { ...silentObserver, request: (result, _s, message) => void results.push([result, message]) },
    configured: () => {},
    listed: () => {},
  });
  return { state, results, created };
}

t.test('the handler gets the plain request and a deadline; its adjustment is the response', async (t) => {
  let seen: { request: NriCreateRequest; deadline: bigint | undefined } | undefined;
  const adjustment: NriAdjustment = { env: [{ key: 'B', value: '2' }], removeEnv: [], annotations: { 'envhook.io/applied': 'x' } };
  const s = session((request, context) => {
    seen = { request, deadline: context?.deadline };
    return adjustment;
  });
  const before = process.hrtime.bigint();
  const res = decode<{ adjust?: { env: { key: string; value: string }[] } }>(
    Msg.CreateContainerResponse,
    await createContainer(payload(), s.state),
  );
  t.match(seen?.request, { pod: { name: 'web', namespace: 'ns', uid: 'u1' }, container: { id: 'c1', name: 'app', env: ['A=1'] } });
  // No Configure yet: NRI's default timeout of 2 s, three quarters of it.
  t.ok(seen!.deadline! > before && seen!.deadline! <= process.hrtime.bigint() + 1_500_000_000n, 'a deadline within 1.5 s');
  t.match(res.adjust?.env, [{ key: 'B', value: '2' }]);
  t.same(
    s.results.map(([r]) => r),
    ['adjusted'],
  );
  t.same(s.created, ['c1'], 'the owner watcher told');
});

t.test('nothing to do: counted empty', async (t) => {
  const s = session(() => EMPTY_ADJUSTMENT);
  await createContainer(payload(), s.state);
  t.same(s.results, [['empty', undefined]]);
});

t.test('answered by the other envhook nri (a hand-over): counted empty, the owner watcher not told', async (t) => {
  const s = session(() => ANSWERED_ELSEWHERE);
  const res = decode<{ adjust: { env: unknown[] } }>(Msg.CreateContainerResponse, await createContainer(payload(), s.state));
  t.same(res.adjust.env, []);
  t.same(s.results, [['empty', undefined]]);
  t.same(s.created, [], 'its pod is watched by the instance that adjusted it');
});

t.test("a refusal: thrown on to the ttRPC server, counted refused with envhook's line; a fault counted error", async (t) => {
  const refused = session(() => {
    throw new EnvhookError('volume "v" not found');
  });
  await t.rejects(createContainer(payload(), refused.state), { message: 'volume "v" not found' });
  t.same(refused.results, [['refused', 'envhook: volume "v" not found']]);
  t.same(refused.created, [], 'a failed create is not watched');
  const fault = session(() => {
    throw new TypeError('x is undefined');
  });
  await t.rejects(createContainer(payload(), fault.state), TypeError);
  t.equal(fault.results[0]?.[0], 'error');
});
