// One envhook nri instance's life around its supervisor (docs/nri-guarantees.md#upgrades): it
// takes the instance lock, or, when another instance holds it, serves beside that one until it
// hands over (beside.ts); it hands over itself when a newer instance asks (lock.ts `share`);
// and at SIGTERM it goes on serving, for at most the hand-over wait, until a successor has taken
// over. The health endpoint is bound only by the instance that holds the lock: two DaemonSet
// pods on the host network share its address, and the kubelet probes whichever holds it.
import type { Logger } from '../../log.ts';
import type { NriStatus } from '../status-file.ts';
import { askToShare, type Beside } from './beside.ts';
import { acquireLock, type Lock, type LockOptions } from './lock.ts';
import type { YieldMarks } from './yield-marks.ts';

/**
 * How long a yielding instance goes on serving after its successor is listed: a CreateContainer
 * the runtime began before it listed the successor (holding its plugin list: NRI's adaptation
 * lock) still goes to the yielding one alone. NRI's default request timeout, per plugin.
 */
const SETTLE_MS = 2000;
/** A holder gone without yielding (killed): its worker may stay registered this long (worker/main.ts ORPHAN_EXIT_MS). */
const ORPHAN_GRACE_MS = 3500;

export interface Serving {
  status(): NriStatus;
  stop(reason: string): Promise<void>;
  share(on: boolean): Promise<void>;
  /** Writes the status file now (it is this instance's again). */
  republish(): void;
  done: Promise<unknown>;
}

export interface InstanceOptions {
  socketPath: string;
  plugin: string;
  log: Logger;
  podUid: string | undefined;
  marks: YieldMarks;
  /** At SIGTERM, how long to go on serving until a successor has taken over (0: stop at once). */
  handoverWaitMs: number;
  /** Starts the supervisor; `sharing`: beside another instance; `onListed`: its worker is in the runtime's list. */
  startServing(sharing: boolean, onListed: () => void): Serving;
  /** Install asks for an upgrade (upgrade.ts): start the plugin file anew; why not, or undefined once started. Absent: not started from one. */
  upgrade?: ((by: number) => string | undefined) | undefined;
  /** Binds the health endpoint (when asked for), releasing `lock` if it cannot; closed by the returned function. */
  startHealth(status: () => NriStatus, lock: Lock): Promise<(() => Promise<void>) | undefined>;
}

export type InstanceEnd = 'stopped' | 'yielded';

export class Instance {
  private readonly o: InstanceOptions;
  private serving: Serving | undefined;
  private lock: Lock | undefined;
  private closeHealth: (() => Promise<void>) | undefined;
  /** Asked to share: leaving (not ready), each container claimed. */
  private leaving = false;
  private yielded = false;
  private terminating = false;
  private sharingChain: Promise<void> = Promise.resolve();
  private waitTimer: NodeJS.Timeout | undefined;
  /** The hand-over under way: the lock is released (the newcomer told `yielded`) only after it. */
  private yielding: Promise<void> | undefined;

  constructor(o: InstanceOptions) {
    this.o = o;
  }

  /** Holds the lock (alone, or after the holder handed over) and serves; resolves once serving. */
  async start(): Promise<void> {
    const { log, plugin } = this.o;
    const lockOpts = this.lockOptions();
    const beside = await askToShare(this.o.socketPath);
    if (beside === undefined) {
      this.lock = await acquireLock(lockOpts);
      await this.bindHealth(this.lock);
      this.serving = this.o.startServing(false, () => {});
      return;
    }
    log.info({ plugin, previous: beside.pid }, 'nri: serving beside the envhook nri that runs until it hands over');
    await this.takeOverFrom(beside, lockOpts);
  }

  private async takeOverFrom(beside: Beside, lockOpts: LockOptions): Promise<void> {
    const { log, plugin } = this.o;
    let told = false;
    this.serving = this.o.startServing(true, () => {
      if (told) return;
      told = true;
      beside.ready();
    });
    const gone = await Promise.race([beside.gone, this.serving.done.then(() => undefined)]);
    if (gone === undefined) return; // stopped meanwhile
    // Killed rather than yielded: its orphaned worker may still answer for a moment; go on claiming.
    if (!gone.yielded) await new Promise((r) => setTimeout(r, ORPHAN_GRACE_MS));
    this.lock = await acquireLock(lockOpts);
    await this.serving.share(false);
    this.serving.republish();
    log.info({ plugin, previous: beside.pid, yielded: gone.yielded }, 'nri: took over from the envhook nri that was running');
    // Serving already: an endpoint that cannot be bound now is an error line, not the end (that would be a window).
    await this.bindHealth({ release: async () => {} }).catch((err: unknown) =>
      log.error({ err, plugin }, 'nri: metrics and health endpoint not started'),
    );
  }

  private lockOptions(): LockOptions {
    const { log, plugin } = this.o;
    return {
      socketPath: this.o.socketPath,
      onTakeover: (pid) => log.info({ plugin, previous: pid }, 'nri: took over from the envhook nri that was running'),
      onRequest: async (request, pid) => {
        log.info({ plugin, by: pid, request }, request === 'stop' ? 'nri: asked to stop' : 'nri: a newer envhook nri takes over');
        await this.serving?.stop(request === 'stop' ? `stop asked by pid ${pid}` : `taken over by pid ${pid}`);
      },
      onShare: (pid) => this.share(pid),
      onYield: (pid) => this.yieldTo(pid),
      onShareEnded: (pid) => this.shareEnded(pid),
      onUpgrade: (pid) => {
        if (!this.o.upgrade) return 'not started from a plugin file';
        if (this.leaving || this.terminating || this.yielded) return 'a hand-over or stop is under way';
        return this.o.upgrade(pid);
      },
    };
  }

  private share(pid: number): Promise<void> {
    const { log, plugin, podUid } = this.o;
    log.info(
      { plugin, by: pid },
      'nri: a newer envhook nri serves beside this one: each container goes to whichever the runtime calls first',
    );
    this.leaving = true;
    if (podUid !== undefined) this.o.marks.set(podUid);
    this.sharingChain = this.sharingChain.then(() => this.serving?.share(true));
    return this.sharingChain;
  }

  private yieldTo(pid: number): Promise<void> {
    this.yielding = (async () => {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      this.yielded = true;
      await this.serving?.stop(`handed over to pid ${pid}`);
      await this.closeHealth?.();
      this.closeHealth = undefined;
      this.o.log.info({ plugin: this.o.plugin, to: pid }, 'nri: handed over');
    })();
    return this.yielding;
  }

  private shareEnded(pid: number): void {
    const { log, plugin, podUid } = this.o;
    log.warn({ plugin, by: pid }, 'nri: the envhook nri that was taking over went away: serving alone again');
    if (podUid !== undefined) this.o.marks.clear(podUid);
    this.leaving = false;
    // Its worker may answer for a moment more (orphaned): claims stay on meanwhile.
    setTimeout(() => {
      if (!this.leaving) this.sharingChain = this.sharingChain.then(() => this.serving?.share(false));
    }, ORPHAN_GRACE_MS).unref();
    if (this.terminating) void this.serving?.stop('SIGTERM: the envhook nri taking over went away');
  }

  /** `lock`: released if the endpoint cannot be bound (at the start: nothing else is left running). */
  private async bindHealth(lock: Lock): Promise<void> {
    const status = (): NriStatus => {
      const s = this.serving!.status();
      return this.leaving || this.yielded ? { ...s, connected: false } : s;
    };
    this.closeHealth = await this.o.startHealth(status, lock);
  }

  /** SIGTERM or SIGINT: stop once a successor took over (within the hand-over wait), or at once. A second signal: at once. */
  signal(signal: NodeJS.Signals): void {
    const serving = this.serving;
    if (!serving) return;
    if (this.terminating || this.yielded) return void serving.stop(signal);
    this.terminating = true;
    const waitMs = this.leaving ? Math.max(this.o.handoverWaitMs, SETTLE_MS * 3) : this.o.handoverWaitMs;
    if (waitMs === 0) return void serving.stop(signal);
    this.o.log.info({ plugin: this.o.plugin, signal, waitMs }, 'nri: stopping once another envhook nri has taken over');
    this.waitTimer = setTimeout(() => void serving.stop(`${signal}: no envhook nri took over within ${waitMs} ms`), waitMs);
  }

  /** Resolves once the supervisor ended: stopped, or handed over. */
  async untilEnded(): Promise<InstanceEnd> {
    await this.serving?.done;
    await this.yielding;
    clearTimeout(this.waitTimer);
    await this.closeHealth?.();
    await this.lock?.release();
    return this.yielded ? 'yielded' : 'stopped';
  }

  /** True once this instance handed over (its status is no longer the node's). */
  get handedOver(): boolean {
    return this.yielded;
  }

  get isTerminating(): boolean {
    return this.terminating;
  }
}
