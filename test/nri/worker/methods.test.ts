// The method table: one function for every Plugin method NRI's schema lists, each a function of
// the payload and the session's state.
import t from 'tap';
import { silentLogger } from '../../../src/log.ts';
import { decode, encode, Msg } from '../../../src/nri/wire/descriptors.ts';
import { PLUGIN_METHODS } from '../../../src/nri/wire/nri-schema.ts';
import { PLUGIN_CALLS } from '../../../src/nri/worker/methods.ts';
import { silentObserver } from '../../../src/nri/worker/observer.ts';
import { newSessionState } from '../../../src/nri/worker/session-state.ts';
import type { RegisteredInfo } from '../../../src/nri/worker-messages.ts';
import type { NriPod } from '../../../src/facts/nri-facts.ts';
import type { NriPodEvents } from '../../../src/nri/worker/types.ts';

/** A session state whose handler must not be called (these methods never call it). */
const stateWith = (pods: NriPodEvents | undefined, configured: (info: RegisteredInfo) => void = () => {}, listed: () => void = () => {}) =>
  newSessionState({
    log: silentLogger,
    handler: () => {
      throw new Error('not called');
    },
    pods,
    observer: silentObserver,
    configured,
    listed,
  });

t.test('the table has exactly the Plugin methods of the schema', async (t) => {
  t.same(Object.keys(PLUGIN_CALLS).sort(), Object.keys(PLUGIN_METHODS).sort());
});

t.test("Configure: the runtime's timeout and sync block kept, registration completed, the events subscribed", async (t) => {
  const configured: RegisteredInfo[] = [];
  const state = stateWith(undefined, (info) => void configured.push(info));
  const req = { runtimeName: 'containerd', runtimeVersion: '1.7.20', requestTimeout: 2000n, NRIVersion: '' };
  const res = decode<{ events: number }>(
    Msg.ConfigureResponse,
    PLUGIN_CALLS.Configure(Buffer.from(encode(Msg.ConfigureRequest, req)), state),
  );
  t.same(configured, [{ runtimeName: 'containerd', runtimeVersion: '1.7.20', nriVersion: undefined }]);
  t.equal(state.requestTimeoutMs, 2000);
  t.equal(state.postCreate, true, 'containerd 1.7.20 has no sync block: PostCreateContainer taken');
  t.equal(res.events, 0x18, 'CreateContainer and PostCreateContainer; no StopPodSandbox without a watcher');
});

t.test('Synchronize in parts: the watcher hears the whole once, at the last part', async (t) => {
  const heard: number[] = [];
  let listed = 0;
  const state = stateWith(
    {
      synchronized: (pods: readonly NriPod[]) => void heard.push(pods.length),
      created: () => {},
      podEnded: () => {},
    },
    undefined,
    () => void listed++,
  );
  const part = (id: string, more: boolean) =>
    Buffer.from(encode(Msg.SynchronizeRequest, { pods: [{ id, name: id, namespace: 'ns', uid: id }], containers: [], more }));
  PLUGIN_CALLS.Synchronize(part('a', true), state);
  t.same(heard, [], 'not before the last part');
  const res = decode<{ more: boolean }>(Msg.SynchronizeResponse, PLUGIN_CALLS.Synchronize(part('b', false), state));
  t.same(heard, [2], 'both parts at once');
  t.equal(res.more, false);
  t.same([state.syncPods, state.syncContainers], [[], []], 'the parts are not kept');
  t.equal(listed, 0, 'listed only after the turn that writes the response');
  await new Promise((r) => setImmediate(r));
  t.equal(listed, 1, 'then listed, once');
});
