// A test peer playing the runtime's side of an NRI socket, as NRI 0.8.0's adaptation does:
// it serves Runtime.RegisterPlugin on connection 2, then calls Plugin.Configure and
// Plugin.Synchronize on connection 1 (empty, or the parts a test gives), and then whatever the
// test sends. With `nriVersion`, Configure carries that version as NRI 0.12's does; pod events
// are sent as 0.8.0 sends them (stateChange) or as 0.12 does (podSandbox: the dedicated
// StopPodSandbox/RemovePodSandbox). Built on envhook's own framing, so
// every test that uses it is also checked against recorded containerd frames
// (test/nri/wire/frames.test.ts) for the framing itself.
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { silentLogger } from '../../../src/log.ts';
import { decode, encode, Msg, type RegisterPluginRequestShape } from '../../../src/nri/wire/descriptors.ts';
import { PLUGIN_CONN, RUNTIME_CONN } from '../../../src/nri/wire/frames.ts';
import { MuxConnection } from '../../../src/nri/wire/mux.ts';
import { PLUGIN_SERVICE, RUNTIME_SERVICE } from '../../../src/nri/wire/nri-schema.ts';
import { TtrpcClient, TtrpcServer } from '../../../src/nri/wire/ttrpc.ts';

export interface PeerPlugin {
  name: string;
  index: string;
  /** The NRI version the plugin sent in RegisterPlugin ('' for none). */
  nriVersion: string;
  events: number;
  /** Plugin.<method> with an encoded request; resolves with the response payload. */
  call(method: string, payload: Uint8Array, timeoutMs?: number): Promise<Buffer>;
  createContainer(req: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Plugin.StateChange with this NRI Event number and pod (a pod event), and the container of a container event. */
  stateChange(event: number, pod: Record<string, unknown>, container?: Record<string, unknown>): Promise<void>;
  /** NRI 0.12's dedicated container event Plugin.PostCreateContainer. */
  postCreateContainer(pod: Record<string, unknown>, container: Record<string, unknown>): Promise<Buffer>;
  /** NRI 0.12's dedicated pod event: Plugin.StopPodSandbox or Plugin.RemovePodSandbox. */
  podSandbox(method: 'StopPodSandbox' | 'RemovePodSandbox', pod: Record<string, unknown>): Promise<Buffer>;
  socket: net.Socket;
  mux: MuxConnection;
  closed: Promise<string>;
}

export interface FakeRuntime {
  socketPath: string;
  /** The next plugin that registers and is configured and synchronized. */
  nextPlugin(): Promise<PeerPlugin>;
  /** Raw sockets accepted, for tests that speak bytes directly. */
  onRawConnection?: (socket: net.Socket) => boolean;
  close(): Promise<void>;
}

export interface FakeRuntimeOptions {
  dir?: string;
  raw?: (socket: net.Socket) => void;
  /** The SynchronizeRequest parts sent to each plugin that registers (default: one, empty). */
  synchronize?: () => Record<string, unknown>[];
  /** The runtime's NRI version in Configure (NRI ≥ 0.12); none by default, as NRI 0.8.0. */
  nriVersion?: string;
  /** Configure's request_timeout in ms (default 2000, NRI's default). */
  requestTimeoutMs?: number;
  /** Configure's runtime name and version (default fake-runtime 0.0). */
  runtime?: { name: string; version: string };
}

export async function startFakeRuntime(opts: FakeRuntimeOptions = {}): Promise<FakeRuntime> {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-nri-'));
  const socketPath = path.join(dir, 'nri.sock');
  const waiting: ((p: PeerPlugin) => void)[] = [];
  const ready: PeerPlugin[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (opts.raw) return opts.raw(socket);
    void accept(socket, opts.synchronize?.() ?? [{ more: false }], opts).then(
      (p) => {
        const w = waiting.shift();
        if (w) w(p);
        else ready.push(p);
      },
      () => socket.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    nextPlugin: () => {
      const p = ready.shift();
      return p ? Promise.resolve(p) : new Promise((resolve) => waiting.push(resolve));
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!opts.dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function accept(socket: net.Socket, sync: Record<string, unknown>[], opts: FakeRuntimeOptions): Promise<PeerPlugin> {
  const mux = new MuxConnection(socket, silentLogger);
  let registered!: (r: RegisterPluginRequestShape) => void;
  const reg = new Promise<RegisterPluginRequestShape>((resolve) => (registered = resolve));
  new TtrpcServer(mux.open(RUNTIME_CONN), {
    [RUNTIME_SERVICE]: {
      RegisterPlugin: (payload) => {
        registered(decode<RegisterPluginRequestShape>(Msg.RegisterPluginRequest, payload));
        return encode(Msg.Empty, {});
      },
    },
  });
  const client = new TtrpcClient(mux.open(PLUGIN_CONN));
  void mux.closed.then((reason) => client.abort(reason));
  const call = (method: string, payload: Uint8Array, timeoutMs = 2000) => client.call(PLUGIN_SERVICE, method, payload, timeoutMs);
  const { pluginName: name, pluginIdx: index, NRIVersion: nriVersion } = await reg;
  const configure = {
    runtimeName: opts.runtime?.name ?? 'fake-runtime',
    runtimeVersion: opts.runtime?.version ?? '0.0',
    registrationTimeout: 5000n,
    requestTimeout: BigInt(opts.requestTimeoutMs ?? 2000),
    NRIVersion: opts.nriVersion,
  };
  const cfg = decode<{ events: number }>(Msg.ConfigureResponse, await call('Configure', encode(Msg.ConfigureRequest, configure)));
  for (const part of sync) await call('Synchronize', encode(Msg.SynchronizeRequest, part));
  return {
    name,
    index,
    nriVersion,
    events: cfg.events,
    call,
    async createContainer(req, timeoutMs) {
      const res = await call('CreateContainer', encode(Msg.CreateContainerRequest, req), timeoutMs);
      return decode<Record<string, unknown>>(Msg.CreateContainerResponse, res);
    },
    async stateChange(event, pod, container) {
      await call('StateChange', encode(Msg.StateChangeEvent, { event, pod, ...(container ? { container } : {}) }));
    },
    postCreateContainer: (pod, container) => call('PostCreateContainer', encode(Msg.PostCreateContainerRequest, { pod, container })),
    podSandbox: (method, pod) =>
      call(method, encode(method === 'StopPodSandbox' ? Msg.StopPodSandboxRequest : Msg.RemovePodSandboxRequest, { pod })),
    socket,
    mux,
    closed: mux.closed,
  };
}
