// Eviction of missed containers (missed.ts) over CRI, so that the kubelet creates them again,
// this time through envhook: those of pods with `envhook.io/evictUnapplied: "true"`, or all of
// them with the node's `evictUnapplied` setting. A container is stopped with CRI StopContainer
// and a timeout of 0: the runtime kills it at once (SIGKILL), so it always exits 137, and the
// kubelet's decision does not depend on how the program would have ended on SIGTERM (an exit 0
// would leave an OnFailure container completed, and count a Never pod as succeeded); it is also
// what containerd and CRI-O do for an NRI eviction. Off the NRI request path: the work starts
// after Synchronize is answered, one container at a time, each call bounded, at most
// MAX_PER_SYNC a Synchronize; never through a CRI socket that another runtime serves (its CRI
// Version says whose it is). Names and ids only in its lines, never a value.
import { describeError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { CRI_SOCKETS, criClient, defaultCriSocket, type CriClient } from '../wire/cri-client.ts';
import { GrpcError } from '../wire/grpc.ts';
import type { MissedContainer } from '../worker-messages.ts';
import type { NriObserver } from './observer.ts';

/** At most this many evictions a Synchronize: a node where envhook was away long is not emptied at once. */
const MAX_PER_SYNC = 20;
/** One StopContainer may take this long (the runtime kills at once and waits for the exit). */
const STOP_DEADLINE_MS = 10_000;

export interface EvictorOptions {
  log: Logger;
  observer: Pick<NriObserver, 'evicted'>;
  /** The node's setting: evict every missed container, not only those of pods that ask. */
  all: boolean;
  /** The CRI socket setting; else the registered runtime's (wire/cri-client.ts). */
  criSocket?: string | undefined;
  maxPerSync?: number;
  deadlineMs?: number;
  /** For tests: where a socket path would be looked for. */
  exists?: (path: string) => boolean;
}

export interface Evictor {
  /** The runtime now registered (its name picks the default CRI socket). */
  registered(runtimeName: string): void;
  /** Missed containers found at a Synchronize: those to evict are queued. */
  missed(list: readonly MissedContainer[]): void;
  /** Resolves when the queue is empty (tests, and stop). */
  idle(): Promise<void>;
  /** Drops the queue and the connection. */
  close(): void;
}

const names = (c: MissedContainer) => ({ container: c.name, id: c.id, pod: c.pod, namespace: c.namespace, podUid: c.podUid });

export function createEvictor(opts: EvictorOptions): Evictor {
  return new CriEvictor(opts);
}

class CriEvictor implements Evictor {
  private readonly opts: EvictorOptions;
  private readonly log: Logger;
  private readonly max: number;
  private runtimeName: string | undefined;
  private readonly queue: MissedContainer[] = [];
  /** Queued or being stopped: a second Synchronize does not queue them again. */
  private readonly pending = new Set<string>();
  private running: Promise<void> | undefined;
  private closed = false;
  private client: { socket: string; cri: CriClient; runtime?: string } | undefined;

  constructor(opts: EvictorOptions) {
    this.opts = opts;
    this.log = opts.log;
    this.max = opts.maxPerSync ?? MAX_PER_SYNC;
  }

  registered(name: string): void {
    this.runtimeName = name;
  }

  missed(list: readonly MissedContainer[]): void {
    if (this.closed) return;
    const { max } = this;
    const wanted = list.filter((c) => (this.opts.all || c.podEvicts) && !this.pending.has(c.id));
    const now = wanted.slice(0, max);
    if (wanted.length > now.length) {
      const left = wanted.slice(max);
      this.log.warn(
        { count: left.length, ids: left.map((c) => c.id), max },
        `nri: not evicted: at most ${max} evictions a Synchronize; left running without their env`,
      );
    }
    if (now.length === 0) return;
    for (const c of now) this.pending.add(c.id);
    this.queue.push(...now);
    this.kick();
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.pending.clear();
    this.client?.cri.close();
    this.client = undefined;
  }

  private kick(): void {
    if (this.running) return;
    this.running = this.run()
      .catch((err: unknown) => this.log.error({ err }, 'nri: eviction stopped by an internal error'))
      .finally(() => {
        this.running = undefined;
        if (this.queue.length > 0 && !this.closed) this.kick();
      });
  }

  private async run(): Promise<void> {
    // After Synchronize is answered: its handler returns before any of this runs.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length > 0 && !this.closed) {
      const batch = this.queue.splice(0);
      const socket = this.opts.criSocket ?? defaultCriSocket(this.runtimeName, this.opts.exists);
      if (socket === undefined) {
        this.log.warn(
          { count: batch.length, ids: batch.map((c) => c.id), looked: Object.values(CRI_SOCKETS) },
          'nri: eviction failed: no CRI socket found (set criSocket)',
        );
        this.finish(batch, []);
        continue;
      }
      if (this.client?.socket !== socket) {
        this.client?.cri.close();
        this.client = { socket, cri: criClient(socket) };
      }
      if (!(await this.sameRuntime(batch, this.client, socket))) continue;
      await this.stopEach(batch, this.client.cri, socket);
    }
  }

  /**
   * The socket serves the runtime the plugin is registered with (CRI Version's runtime_name, asked
   * once a socket): a container id of one runtime must never be stopped through another's CRI.
   * Otherwise the batch fails with one line. A socket that cannot be used is left to StopContainer's
   * own line.
   */
  private async sameRuntime(
    batch: readonly MissedContainer[],
    client: { socket: string; cri: CriClient; runtime?: string },
    socket: string,
  ): Promise<boolean> {
    if (client.runtime === undefined) {
      try {
        client.runtime = await client.cri.runtimeName(this.opts.deadlineMs ?? STOP_DEADLINE_MS);
      } catch {
        return true;
      }
    }
    if (this.runtimeName === undefined || client.runtime === this.runtimeName) return true;
    this.log.warn(
      { socket, runtime: client.runtime, registered: this.runtimeName, count: batch.length, ids: batch.map((c) => c.id) },
      "nri: eviction failed: the CRI socket is another runtime's (set criSocket to the registered runtime's)",
    );
    this.finish(batch, []);
    return false;
  }

  /** StopContainer for each, one at a time; a socket that cannot be used fails the rest of the batch with one line. */
  private async stopEach(batch: readonly MissedContainer[], cri: CriClient, socket: string): Promise<void> {
    const { log } = this;
    for (let i = 0; i < batch.length && !this.closed; i++) {
      const c = batch[i]!;
      try {
        await cri.stopContainer(c.id, 0, this.opts.deadlineMs ?? STOP_DEADLINE_MS);
        log.info({ ...names(c), socket }, 'nri: evicted: stopped over CRI so that the kubelet creates it again with its env');
        this.finish([], [c]);
      } catch (err) {
        if (err instanceof GrpcError && err.kind === 'unreachable') {
          const rest = batch.slice(i);
          log.warn(
            { socket, reason: err.message, count: rest.length, ids: rest.map((x) => x.id) },
            'nri: eviction failed: the CRI socket cannot be used',
          );
          this.finish(rest, []);
          return;
        }
        log.warn({ ...names(c), socket, reason: err instanceof GrpcError ? err.message : describeError(err) }, 'nri: eviction failed');
        this.finish([c], []);
      }
    }
  }

  private finish(failed: readonly MissedContainer[], evicted: readonly MissedContainer[]): void {
    for (const c of [...failed, ...evicted]) this.pending.delete(c.id);
    this.opts.observer.evicted(
      evicted.map((c) => c.id),
      failed.map((c) => c.id),
    );
  }
}
