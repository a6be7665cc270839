// A plugin session against a test peer playing containerd's side (test/helpers/nri/runtime.ts):
// RegisterPlugin → Configure → Synchronize → CreateContainer, handler errors as ttRPC status,
// and malformed, oversized or unknown input on a live connection: one log line, the
// connection closed, the process unharmed.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { EnvhookError } from '../../../src/errors.ts';
import { createLogger } from '../../../src/log.ts';
import { encode, Msg } from '../../../src/nri/wire/descriptors.ts';
import { encodeMux, encodeTtrpc, MessageType, MUX_MAX, PLUGIN_CONN, RUNTIME_CONN, TTRPC_MAX } from '../../../src/nri/wire/frames.ts';
import { silentObserver, type RequestResult } from '../../../src/nri/worker/observer.ts';
import { startPlugin, type PluginSession } from '../../../src/nri/worker/plugin.ts';
import { Code, RpcError } from '../../../src/nri/wire/ttrpc.ts';
import type { NriCreateRequest } from '../../../src/facts/nri-facts.ts';
import { EMPTY_ADJUSTMENT } from '../../../src/apply/nri-adjustment.ts';
import type { NriCreateHandler, NriPodEvents } from '../../../src/nri/worker/types.ts';
import {
  EVENT_CREATE_CONTAINER,
  EVENT_POST_CREATE_CONTAINER,
  EVENT_REMOVE_POD_SANDBOX,
  EVENT_STOP_POD_SANDBOX,
  PLUGIN_METHODS,
} from '../../../src/nri/wire/nri-schema.ts';
import type { MissedContainer } from '../../../src/nri/worker-messages.ts';
import { APPLIED_KEY } from '../../../src/k8s/annotation-keys.ts';
import { appliedDigest } from '../../../src/plan/mark.ts';
import { startFakeRuntime, type FakeRuntime, type FakeRuntimeOptions, type PeerPlugin } from '../../helpers/nri/runtime.ts';
import { sleep } from '../../helpers/wait.ts';

const CANARY = 'canary-7f3a9c-value';

type Heard = [RequestResult, string | undefined][];

async function setup(
  t: Test,
  handler: NriCreateHandler,
  o: { pods?: NriPodEvents; runtime?: FakeRuntimeOptions } = {},
): Promise<{
  rt: FakeRuntime;
  peer: PeerPlugin;
  session: PluginSession;
  logText: () => string;
  heard: Heard;
  missed: MissedContainer[][];
}> {
  const dir = t.testdir();
  const logFile = path.join(dir, 'envhook.log');
  const rt = await startFakeRuntime(o.runtime); // a short private directory: socket paths are at most 107 bytes
  const heard: Heard = [];
  const missed: MissedContainer[][] = [];
  const observer = {
    ...silentObserver,
    request: (result: RequestResult, _s: number, message?: string) => void heard.push([result, message]),
    missed: (containers: readonly MissedContainer[]) => void missed.push([...containers]),
  };
  const session = startPlugin(net.createConnection(rt.socketPath), {
    name: 'envhook',
    index: '50',
    handler,
    pods: o.pods,
    log: createLogger(logFile, 'debug'),
    observer,
  });
  const peer = await rt.nextPlugin();
  await session.registered;
  t.teardown(async () => {
    session.close('test over');
    await rt.close();
  });
  return { rt, peer, session, heard, missed, logText: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '') };
}

const REQUEST = {
  pod: {
    id: 'sandbox-1',
    name: 'web',
    namespace: 'default',
    uid: 'a1b2-uid',
    annotations: { 'envhook.io/env': '{"app":[]}', other: CANARY },
  },
  container: {
    id: 'ctr-1',
    podSandboxId: 'sandbox-1',
    name: 'app',
    annotations: { 'io.kubernetes.cri.container-name': 'app' },
    env: ['PATH=/bin', `SECRET=${CANARY}`],
    mounts: [{ destination: '/etc/hosts', type: 'bind', source: '/var/lib/kubelet/pods/a1b2-uid/etc-hosts', options: ['rbind', 'ro'] }],
  },
};

t.test('registers, subscribes to CreateContainer and PostCreateContainer, and maps request and adjustment', async (t) => {
  let seen: NriCreateRequest | undefined;
  const { peer, session, logText } = await setup(t, (req) => {
    seen = req;
    return { env: [{ key: 'FROM_FILE', value: 'x' }], removeEnv: ['REDIS_PORT'], annotations: { 'envhook.io/applied': 'nri' } };
  });
  t.equal(peer.name, 'envhook');
  t.equal(peer.index, '50');
  t.equal(peer.events, (1 << 3) | (1 << 4), 'event mask 0x18: CreateContainer (4) and PostCreateContainer (5)');
  t.equal(peer.nriVersion, 'v0.12.0', "RegisterPlugin carries envhook's NRI version");
  t.same(
    await session.registered,
    { runtimeName: 'fake-runtime', runtimeVersion: '0.0', nriVersion: undefined },
    'an NRI 0.8.0 runtime: no NRI version',
  );
  const configure = logText()
    .split('\n')
    .filter((l) => l.includes('NRI configure'))
    .map((l) => JSON.parse(l));
  t.match(configure, [{ runtime: 'fake-runtime', version: '0.0', requestTimeoutMs: 2000 }]);
  t.notOk('nriVersion' in configure[0], 'no nriVersion key when the runtime sent none');
  const res = await peer.createContainer(REQUEST);
  t.same(
    seen,
    {
      pod: { id: 'sandbox-1', name: 'web', namespace: 'default', uid: 'a1b2-uid', annotations: REQUEST.pod.annotations },
      container: {
        id: 'ctr-1',
        name: 'app',
        annotations: REQUEST.container.annotations,
        env: REQUEST.container.env,
        mounts: REQUEST.container.mounts,
        uidMappings: undefined,
      },
    },
    'the handler gets plain data',
  );
  t.match(
    res,
    {
      adjust: {
        annotations: { 'envhook.io/applied': 'nri' },
        env: [
          { key: '-REDIS_PORT', value: '' },
          { key: 'FROM_FILE', value: 'x' },
        ],
      },
    },
    'removal as -NAME, then additions',
  );
  t.same(
    await peer.createContainer({}),
    { $typeName: 'nri.pkg.api.v1alpha1.CreateContainerResponse', adjust: res.adjust },
    'an empty request is still answered',
  );
});

t.test('an empty adjustment is an empty ContainerAdjustment', async (t) => {
  const { peer } = await setup(t, () => EMPTY_ADJUSTMENT);
  const res = await peer.createContainer(REQUEST);
  t.match(res, { adjust: { annotations: {}, env: [] } });
});

t.test("a handler's EnvhookError is the call's error status, envhook's one line; no value logged", async (t) => {
  const { peer, logText, heard } = await setup(t, () => {
    throw new EnvhookError('volume "config" not found');
  });
  const err = await peer.createContainer(REQUEST).catch((e: unknown) => e);
  t.ok(err instanceof RpcError);
  t.equal((err as RpcError).code, Code.Unknown, 'code Unknown, as the Go stub returns a plain error');
  t.equal((err as RpcError).message, 'envhook: volume "config" not found');
  const ok = await peer.call('Synchronize', encode(Msg.SynchronizeRequest, { more: false }));
  t.ok(ok, 'the connection stays up');
  t.same(heard, [['refused', 'envhook: volume "config" not found']], 'the observer hears a refusal with its line');
  t.notMatch(logText(), /CreateContainer/, 'the session does not log it: the handler does, once');
  t.notMatch(logText(), CANARY, 'no request value in the log');
});

t.test('a foreign error: "internal error", never its message', async (t) => {
  const { peer, logText } = await setup(t, async () => {
    throw new TypeError(`bad ${CANARY}`);
  });
  const err = (await peer.createContainer(REQUEST).catch((e: unknown) => e)) as RpcError;
  t.equal(err.message, 'envhook: internal error (TypeError)');
  t.notMatch(logText(), CANARY);
});

t.test('a slow handler: the runtime gives up and closes; the late answer goes nowhere', async (t) => {
  let release!: () => void;
  const { peer, session } = await setup(t, () => new Promise((resolve) => (release = () => resolve(EMPTY_ADJUSTMENT))));
  const err = (await peer.createContainer(REQUEST, 150).catch((e: unknown) => e)) as RpcError;
  t.equal(err.code, Code.DeadlineExceeded);
  peer.socket.destroy(); // what containerd does with a plugin that timed out
  t.equal(await session.closed, 'closed by the peer');
  release();
  await sleep(20);
});

t.test('an unknown method is Unimplemented and the connection stays', async (t) => {
  const { peer } = await setup(t, () => EMPTY_ADJUSTMENT);
  const err = (await peer.call('StopContainer', new Uint8Array()).catch((e: unknown) => e)) as RpcError;
  t.equal(err.code, Code.Unimplemented);
  t.match(await peer.createContainer(REQUEST), { adjust: {} });
});

t.test("every Plugin method of the schema's table is served", async (t) => {
  const { peer } = await setup(t, () => EMPTY_ADJUSTMENT);
  for (const method of Object.keys(PLUGIN_METHODS)) t.ok(Buffer.isBuffer(await peer.call(method, new Uint8Array())), `${method} answered`);
});

t.test('an adjustment over 4 MiB: ResourceExhausted, nothing oversized is sent', async (t) => {
  const { peer } = await setup(t, () => ({ env: [{ key: 'BIG', value: 'x'.repeat(TTRPC_MAX) }], removeEnv: [], annotations: {} }));
  const err = (await peer.createContainer(REQUEST).catch((e: unknown) => e)) as RpcError;
  t.equal(err.code, Code.ResourceExhausted);
  t.match(err.message, /exceeds the ttRPC limit of 4194304/);
});

const header = (conn: number, size: number) => {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(conn, 0);
  b.writeUInt32BE(size, 4);
  return b;
};

const MALFORMED: [string, () => Buffer, RegExp][] = [
  ['a mux frame over the limit', () => header(PLUGIN_CONN, MUX_MAX + 1), /multiplexer frame of \d+ bytes exceeds the limit/],
  ['a frame for an unknown connection', () => Buffer.concat(encodeMux(7, Buffer.from('hello'))), /unknown connection 7/],
  [
    'a ttRPC header announcing more than 4 MiB',
    () => Buffer.concat([header(PLUGIN_CONN, 10), Buffer.from('00400001000000050100', 'hex')]),
    /exceeds the limit of 4194304/,
  ],
  [
    'an unknown ttRPC message type',
    () => Buffer.concat(encodeMux(PLUGIN_CONN, Buffer.from('00000000000000057700', 'hex'))),
    /unknown ttRPC message type 119/,
  ],
  [
    'a stream Data frame',
    () => Buffer.concat(encodeMux(PLUGIN_CONN, encodeTtrpc({ streamId: 5, type: MessageType.Data, payload: Buffer.from('x') }))),
    /unexpected ttRPC message type 3/,
  ],
  [
    'a request on an even stream',
    () => Buffer.concat(encodeMux(PLUGIN_CONN, encodeTtrpc({ streamId: 2, type: MessageType.Request, payload: Buffer.alloc(0) }))),
    /even stream 2/,
  ],
  [
    'a Request that is not protobuf',
    () =>
      Buffer.concat(
        encodeMux(
          PLUGIN_CONN,
          encodeTtrpc({ streamId: 5, type: MessageType.Request, payload: Buffer.from('ffffffffffffffffffff', 'hex') }),
        ),
      ),
    /malformed Request message/,
  ],
  [
    'a response nobody asked for',
    () => Buffer.concat(encodeMux(RUNTIME_CONN, encodeTtrpc({ streamId: 9, type: MessageType.Response, payload: Buffer.alloc(0) }))),
    /response for unknown stream 9/,
  ],
];

for (const [what, bytes, reason] of MALFORMED) {
  t.test(`${what}: one log line, the connection closed`, async (t) => {
    const { peer, session, logText } = await setup(t, () => EMPTY_ADJUSTMENT);
    peer.socket.write(bytes());
    t.match(await session.closed, reason);
    await peer.closed;
    const lines = logText()
      .split('\n')
      .filter((l) => l.includes('protocol error'));
    t.equal(lines.length, 1, 'one log line');
    t.match(lines[0], reason);
  });
}

t.test('a runtime that never answers RegisterPlugin: registration times out, the socket is closed', async (t) => {
  const dir = t.testdir();
  const accepted: net.Socket[] = [];
  const rt = await startFakeRuntime({ raw: (s) => void accepted.push(s) });
  const session = startPlugin(net.createConnection(rt.socketPath), {
    name: 'envhook',
    index: '50',
    handler: () => EMPTY_ADJUSTMENT,
    log: createLogger(path.join(dir, 'l.log'), 'debug'),
    registrationTimeoutMs: 200,
  });
  await t.rejects(session.registered, /RegisterPlugin: no response within 200 ms|registration not completed/);
  t.match(await session.closed, /registration failed/);
  await rt.close();
});

/** A watcher that records what the plugin tells it. */
function recordingWatcher(calls: unknown[][], fail = false): NriPodEvents {
  const record = (...c: unknown[]) => {
    calls.push(c);
    if (fail) throw new Error(`watcher broke ${CANARY}`);
  };
  return {
    synchronized: (pods, containers) => record('synchronized', pods, containers),
    created: (req) => record('created', req.pod.uid, req.container.name),
    podEnded: (pod, event) => record('podEnded', pod.uid, pod.id, event),
  };
}

const POD = { id: 'sandbox-1', name: 'web', namespace: 'default', uid: 'a1b2-uid', annotations: { 'envhook.io/volumeOwners': '[]' } };

t.test(
  'with an owner watcher: CreateContainer, PostCreateContainer and StopPodSandbox subscribed; Synchronize in parts, pod events, creates go to it',
  async (t) => {
    const calls: unknown[][] = [];
    const parts = () => [
      {
        pods: [POD],
        containers: [
          {
            id: 'c1',
            podSandboxId: 'sandbox-1',
            name: 'app',
            state: 3,
            env: [`SECRET=${CANARY}`],
            mounts: [{ destination: '/k', source: '/s', type: 'bind', options: ['ro'] }],
          },
        ],
        more: true,
      },
      {
        pods: [{ ...POD, id: 'sandbox-2', uid: 'c3d4-uid' }],
        containers: [{ id: 'c2', podSandboxId: 'sandbox-2', name: 'db', state: 4 }],
        more: false,
      },
    ];
    const { peer, logText } = await setup(
      t,
      (req) => {
        if (req.container.name === 'bad') throw new EnvhookError('volume "keys" not found');
        return EMPTY_ADJUSTMENT;
      },
      { pods: recordingWatcher(calls), runtime: { synchronize: parts } },
    );
    t.equal(
      peer.events,
      (1 << (EVENT_CREATE_CONTAINER - 1)) | (1 << (EVENT_POST_CREATE_CONTAINER - 1)) | (1 << (EVENT_STOP_POD_SANDBOX - 1)),
      'event mask 0x1a: CreateContainer, PostCreateContainer and StopPodSandbox',
    );
    t.equal(peer.events, 0x1a);
    t.same(
      calls,
      [
        [
          'synchronized',
          [
            { ...POD, annotations: { ...POD.annotations } },
            { ...POD, id: 'sandbox-2', uid: 'c3d4-uid' },
          ],
          [
            {
              id: 'c1',
              name: 'app',
              podSandboxId: 'sandbox-1',
              annotations: {},
              state: 3,
              mounts: [{ destination: '/k', source: '/s', type: 'bind', options: ['ro'] }],
            },
            { id: 'c2', name: 'db', podSandboxId: 'sandbox-2', annotations: {}, state: 4, mounts: [] },
          ],
        ],
      ],
      'both parts, once, after the last (no env carried over)',
    );
    calls.length = 0;
    await peer.createContainer({ ...REQUEST, pod: POD });
    await t.rejects(peer.createContainer({ ...REQUEST, pod: POD, container: { ...REQUEST.container, name: 'bad' } }));
    await peer.stateChange(EVENT_STOP_POD_SANDBOX, POD);
    await peer.stateChange(EVENT_REMOVE_POD_SANDBOX, POD);
    await peer.stateChange(EVENT_CREATE_CONTAINER, POD); // not a pod end: ignored
    t.same(
      calls,
      [
        ['created', 'a1b2-uid', 'app'],
        ['podEnded', 'a1b2-uid', 'sandbox-1', 'stop'],
        ['podEnded', 'a1b2-uid', 'sandbox-1', 'remove'],
      ],
      'a failed create is not watched',
    );
    t.notMatch(logText(), CANARY);
  },
);

t.test('a watcher that throws: the call is still answered, one log line, nothing of its message', async (t) => {
  const calls: unknown[][] = [];
  const { peer, logText } = await setup(t, () => EMPTY_ADJUSTMENT, { pods: recordingWatcher(calls, true) });
  t.match(await peer.createContainer({ ...REQUEST, pod: POD }), { adjust: {} }, 'CreateContainer answered');
  await peer.stateChange(EVENT_STOP_POD_SANDBOX, POD);
  t.equal(calls.length, 3, 'synchronized, created, podEnded');
  const lines = logText()
    .split('\n')
    .filter((l) => l.includes('owner watcher failed'));
  t.same(
    lines.map((l) => JSON.parse(l).call),
    ['Synchronize', 'CreateContainer', 'StateChange'],
  );
  t.notMatch(logText(), CANARY);
});

t.test(
  'an NRI 0.12 runtime: its NRI version read; StopPodSandbox and RemovePodSandbox answered as dedicated calls, to the same pod end as StateChange',
  async (t) => {
    const calls: unknown[][] = [];
    const { peer, session, logText } = await setup(t, () => EMPTY_ADJUSTMENT, {
      pods: recordingWatcher(calls),
      runtime: { nriVersion: 'v0.12.1' },
    });
    t.same(await session.registered, { runtimeName: 'fake-runtime', runtimeVersion: '0.0', nriVersion: 'v0.12.1' });
    t.match(logText(), /"nriVersion":"v0.12.1".*"NRI configure"/, 'the configure line has it');
    t.equal(peer.nriVersion, 'v0.12.0');
    calls.length = 0;
    // NRI 0.12 falls back to StateChange (and logs the plugin as deprecated) only on Unimplemented.
    t.same(await peer.podSandbox('StopPodSandbox', POD), Buffer.alloc(0), 'StopPodSandbox: an empty StopPodSandboxResponse');
    t.same(
      await peer.podSandbox('RemovePodSandbox', { ...POD, id: 'sandbox-2' }),
      Buffer.alloc(0),
      'RemovePodSandbox: an empty RemovePodSandboxResponse',
    );
    t.same(calls, [
      ['podEnded', 'a1b2-uid', 'sandbox-1', 'stop'],
      ['podEnded', 'a1b2-uid', 'sandbox-2', 'remove'],
    ]);
    t.notMatch(logText(), CANARY);
  },
);

t.test(
  'PostCreateContainer: a container of an envhook pod without the applied mark goes to the observer, from StateChange (NRI 0.8) and the dedicated call (0.12)',
  async (t) => {
    const { peer, missed, logText } = await setup(t, () => EMPTY_ADJUSTMENT, { runtime: { nriVersion: 'v0.12.1' } });
    const env = JSON.stringify({ app: [{ name: 'X', value: CANARY }] });
    const pod = { id: 's1', name: 'web', namespace: 'ns', uid: 'u1', annotations: { 'envhook.io/env': env } };
    const plain = { id: 's2', name: 'plain', namespace: 'ns', uid: 'u2', annotations: {} };
    const container = (id: string, annotations: Record<string, string> = {}) => ({
      id,
      podSandboxId: 's1',
      name: 'app',
      state: 1,
      annotations,
    });
    const mark = { [APPLIED_KEY]: appliedDigest({ annotations: pod.annotations, container: 'app' }) };
    await peer.stateChange(EVENT_POST_CREATE_CONTAINER, pod, container('c-missed'));
    t.same(await peer.postCreateContainer(pod, container('c-missed-0.12')), Buffer.alloc(0), 'an empty PostCreateContainerResponse');
    await peer.stateChange(EVENT_POST_CREATE_CONTAINER, pod, container('c-adjusted', mark));
    await peer.postCreateContainer(pod, container('c-adjusted-0.12', mark));
    await peer.postCreateContainer(plain, { ...container('c-plain'), podSandboxId: 's2' });
    await peer.stateChange(EVENT_POST_CREATE_CONTAINER, pod); // no container: nothing to check
    t.same(
      missed.flat().map((m) => [m.id, m.name, m.pod, m.namespace, m.podUid]),
      [
        ['c-missed', 'app', 'web', 'ns', 'u1'],
        ['c-missed-0.12', 'app', 'web', 'ns', 'u1'],
      ],
      'the two without the mark; not the adjusted ones, not a pod that asks for nothing',
    );
    t.notMatch(logText() + JSON.stringify(missed), CANARY, 'no value anywhere');
  },
);

t.test('PostCreateContainer subscribed only where the runtime has no sync block; an adjusted container is not checked', async (t) => {
  for (const [name, version, events] of [
    ['containerd', '2.1.9+unknown', 0x8],
    ['containerd', '1.7.26', 0x8],
    ['containerd', '1.7.24~ds1', 0x18],
    ['cri-o', '1.36.3', 0x18],
  ] as const) {
    const { peer } = await setup(t, () => EMPTY_ADJUSTMENT, { runtime: { runtime: { name, version } } });
    t.equal(peer.events, events, `${name} ${version}: event mask 0x${events.toString(16)}`);
  }
  const env = JSON.stringify({ app: [{ name: 'X', value: CANARY }] });
  const pod = { id: 's1', name: 'web', namespace: 'ns', uid: 'u1', annotations: { 'envhook.io/env': env } };
  const { peer, missed } = await setup(t, () => EMPTY_ADJUSTMENT);
  await peer.createContainer({ pod, container: { id: 'c-seen', podSandboxId: 's1', name: 'app' } });
  // Its adjustment (here: none) answered by this session: the post-create is not checked again.
  await peer.postCreateContainer(pod, { id: 'c-seen', podSandboxId: 's1', name: 'app', state: 1 });
  await peer.postCreateContainer(pod, { id: 'c-unseen', podSandboxId: 's1', name: 'app', state: 1 });
  t.same(
    missed.flat().map((m) => m.id),
    ['c-unseen'],
    'only the container whose CreateContainer went elsewhere',
  );
});

t.test('without an owner watcher the dedicated pod calls are answered too', async (t) => {
  const { peer } = await setup(t, () => EMPTY_ADJUSTMENT, { runtime: { nriVersion: 'v0.12.1' } });
  t.same(await peer.podSandbox('StopPodSandbox', POD), Buffer.alloc(0));
  t.same(await peer.podSandbox('RemovePodSandbox', POD), Buffer.alloc(0));
});

t.test('a watcher that throws at a dedicated pod call: answered, one log line naming the call', async (t) => {
  const calls: unknown[][] = [];
  const { peer, logText } = await setup(t, () => EMPTY_ADJUSTMENT, {
    pods: recordingWatcher(calls, true),
    runtime: { nriVersion: 'v0.12.1' },
  });
  await peer.podSandbox('StopPodSandbox', POD);
  const lines = logText()
    .split('\n')
    .filter((l) => l.includes('owner watcher failed'));
  t.same(
    lines.map((l) => JSON.parse(l).call),
    ['Synchronize', 'StopPodSandbox'],
  );
  t.notMatch(logText(), CANARY);
});
