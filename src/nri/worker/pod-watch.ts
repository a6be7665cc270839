// The owner watcher of the resident NRI daemon: which pods' volumes src/watch/ watches, from
// what NRI says. Synchronize (every (re)connect) gives the running pods: each with
// `envhook.io/volumeOwners` and a container not stopped is watched, and gets one pass at once
// (the kubelet may have rewritten its volumes while nobody watched); a pod watched before but
// no longer running is dropped. CreateContainer, after the chown, starts or updates the pod's
// watches. StopPodSandbox of the sandbox that started them ends them (a stop of an earlier
// sandbox of the same pod UID does not). A pod whose directory is gone is dropped too.
// One session after another share this watcher: watches go on while the runtime restarts.
// With a run directory, each watched pod is also recorded there (watch/pod-records.ts), and
// restore() watches the recorded pods again: a plugin process that containerd 1.7 (NRI 0.6.1)
// started after its restart gets no Synchronize, so the records are all it knows. Where a
// Synchronize does come, it decides: a restored pod that is not running is dropped then.
// Owned copies (docs/ownership.md): a volume a container reads through envhook's copy is
// followed into the copy; the pod's copies are removed when the pod ends (StopPodSandbox or
// RemovePodSandbox of the sandbox watched, a pod not running at Synchronize, its directory gone),
// a volume's copy when the kubelet's volume directory goes (watch/registry.ts); restore() removes
// the copies of pods and volumes gone while no plugin ran, and partial copies of a killed worker.
// What grows with the node's pods (a Synchronize's pods, the records and copies read back at a
// start) runs in slices of the loop (watch/slices.ts), never in one go: this loop answers the
// runtime within its 2 s and beats to the supervisor, which counts 1.5 s of silence as a hang.
import fs from 'node:fs';
import { describeError } from '../../errors.ts';
import { factsFromNri } from '../../facts/nri-facts.ts';
import { isSandbox } from '../../k8s/identity.ts';
import { podDirOfUid } from '../../k8s/pod.ts';
import type { Logger } from '../../log.ts';
import type { MountFacts, MountLike } from '../../ownership/uidmap.ts';
import { podWatchVolumes } from '../../watch/pod-volumes.ts';
import { createPodRecords } from '../../watch/pod-records.ts';
import { createRegistry, type Registry, type RegistryOptions } from '../../watch/registry.ts';
import { CONTAINER_STOPPED } from '../wire/nri-schema.ts';
import type { NriCreateRequest, NriPod } from '../../facts/nri-facts.ts';
import type { NriSyncContainer } from '../wire/plain-data.ts';
import type { NriPodEvents } from './types.ts';
import { VOLUME_OWNERS } from '../../k8s/annotation-keys.ts';
import type { NriAdjustment } from '../../apply/nri-adjustment.ts';
import { inlineCopier, type Copier } from '../../mirror/copier.ts';
import { podsWithCopies } from '../../mirror/remove.ts';
import { sweepAtStartInSlices } from '../../watch/leftover-sweep.ts';
import { inSlices } from '../../watch/slices.ts';

export interface PodWatcherOptions {
  kubeletRoot: string;
  log: Logger;
  /** Where the watched pods are recorded for the next process (settings' runDir); none: not recorded. */
  runDir?: string | undefined;
  registry?: Omit<RegistryOptions, 'log' | 'onVolumeGone' | 'copier'>;
  /** Who makes and removes the owned copies (mirror/copier.ts): the worker's sliced copier; default: in one go. */
  copier?: Copier;
}

export interface PodWatcher extends NriPodEvents {
  registry: Registry;
  /** Watches the pods recorded in the run directory that are not watched yet (call before the first session); resolves when done. */
  restore(): Promise<void>;
  close(): void;
}

interface Watched {
  sandbox: string;
  podDir: string;
  /** Sandbox, annotation and volumes as last added: a CreateContainer that changes none is a no-op. */
  key: string;
  /** The mounts of the pod's containers seen so far (a CreateContainer tells only its own). */
  mounts: MountLike[];
  /** What the watch was made from (sandbox, annotation, mounts, UID mappings): the same again is a no-op, with no file looked at. */
  inputs?: string | undefined;
}

export function createPodWatcher(opts: PodWatcherOptions): PodWatcher {
  return new NriPodWatcher(opts);
}

class NriPodWatcher implements PodWatcher {
  readonly registry: Registry;
  private readonly opts: PodWatcherOptions;
  private readonly log: Logger;
  private readonly watched = new Map<string, Watched>(); // pod UID →
  private readonly records: ReturnType<typeof createPodRecords> | undefined;
  private readonly copier: Copier;
  private startSweep: { close(): void } | undefined;
  private closed = false;
  /** Synchronizes so far: a newer one cancels the slices of an older one, and the rest of a restore. */
  private syncs = 0;
  /** Pods a CreateContainer or a pod end touched since the last Synchronize began (its view of them is older). */
  private readonly touched = new Set<string>();

  constructor(opts: PodWatcherOptions) {
    this.opts = opts;
    this.log = opts.log;
    this.copier = opts.copier ?? inlineCopier();
    this.registry = createRegistry({ ...opts.registry, log: opts.log, copier: this.copier, onVolumeGone: (uid) => this.check(uid) });
    this.records = opts.runDir === undefined ? undefined : createPodRecords(opts.runDir, opts.kubeletRoot, opts.log);
  }

  /**
   * The recorded pods, watched again pod by pod in slices of the loop (slices.ts), then the start's
   * sweep of leftover copies, also in slices. A Synchronize that comes meanwhile decides what runs:
   * the records not read by then are left to it. Resolves when both are done.
   */
  async restore(): Promise<void> {
    const syncs = this.syncs;
    const names = this.records?.list() ?? [];
    await inSlices(
      names,
      (uid) => this.restoreOne(uid),
      () => this.closed || this.syncs !== syncs,
    );
    // What the records no longer name (pods that ended while no plugin ran: their records were
    // dropped as gone), and what a worker killed while it copied left.
    if (this.opts.runDir === undefined || this.closed) return;
    this.startSweep?.close();
    const sweep = sweepAtStartInSlices({ runDir: this.opts.runDir, kubeletRoot: this.opts.kubeletRoot, log: this.log, prefix: 'nri: ' });
    this.startSweep = sweep;
    await sweep.done;
  }

  private restoreOne(uid: string): void {
    const { registry, records, watched } = this;
    if (watched.has(uid)) return;
    const r = records?.loadOne(uid);
    if (r === undefined) return;
    registry.add(r.podUid, r.volumes);
    if (!registry.has(r.podUid)) {
      records?.remove(r.podUid);
      this.dropCopies(r.podUid, 'no volume to watch');
      return;
    }
    // An empty key: the pod's next CreateContainer refreshes the watch from NRI's facts.
    watched.set(r.podUid, { sandbox: r.sandbox, podDir: r.podDir, key: '', mounts: [] });
    this.log.info({ podUid: r.podUid, sandbox: r.sandbox, volumes: r.volumes.length, why: 'restore' }, 'nri: watching pod volume owners');
  }

  /**
   * Which pods run is worked out at once (no file touched); their watches, the end of those that
   * no longer run and the removal of copies of pods not listed follow pod by pod in slices of the
   * loop, after the answer. A pod a CreateContainer or a pod end touched meanwhile is newer than
   * this list and is left as they made it; a newer Synchronize takes over from this one.
   */
  async synchronized(pods: readonly NriPod[], containers: readonly NriSyncContainer[]): Promise<void> {
    const sync = ++this.syncs;
    this.touched.clear();
    const running = new Map<string, MountLike[]>(); // sandbox id → mounts of its containers not stopped
    for (const c of containers) {
      if (c.state === CONTAINER_STOPPED) continue;
      const mounts = running.get(c.podSandboxId) ?? [];
      mounts.push(...c.mounts);
      running.set(c.podSandboxId, mounts);
    }
    const keep = new Map<string, { pod: NriPod; mounts: MountLike[] }>();
    for (const pod of pods) {
      const mounts = running.get(pod.id);
      if (mounts !== undefined && pod.annotations[VOLUME_OWNERS] !== undefined) keep.set(pod.uid, { pod, mounts });
    }
    const steps: (() => void)[] = [];
    const fresh = (uid: string, step: () => void) =>
      steps.push(() => {
        if (this.touched.has(uid)) return;
        try {
          step();
        } catch (err) {
          this.log.error({ err, podUid: uid }, 'owner watcher failed');
        }
      });
    for (const uid of [...this.watched.keys()]) if (!keep.has(uid)) fresh(uid, () => this.forget(uid, 'not running at Synchronize'));
    // NRI 0.8.0 gives a container no user-namespace mappings (wire/plain-data.ts).
    for (const [uid, { pod, mounts }] of keep) fresh(uid, () => this.watch(pod, { mounts, uidMappings: undefined }, 'Synchronize', true));
    // Copies of pods no container runs in (ended while envhook was away), watched or not.
    if (this.opts.runDir !== undefined)
      for (const uid of podsWithCopies(this.opts.runDir))
        if (!keep.has(uid)) fresh(uid, () => this.dropCopies(uid, 'not running at Synchronize'));
    const done = await inSlices(
      steps,
      (step) => step(),
      () => this.closed || this.syncs !== sync,
    );
    if (!done) return;
    const { volumes, watches, polled } = this.registry.stats();
    this.log.info(
      { runtimePods: pods.length, containers: containers.length, watchedPods: this.watched.size, volumes, watches, polled },
      'nri: synchronized owner watches',
    );
  }

  created(request: NriCreateRequest, adjustment?: NriAdjustment): void {
    if (request.pod.annotations[VOLUME_OWNERS] === undefined || isSandbox(request.container.annotations)) return;
    this.touched.add(request.pod.uid);
    const facts = factsFromNri(request);
    // The pod's other containers' mounts too: a volume this container does not mount is still watched for them.
    const w = this.watched.get(request.pod.uid);
    const mine = adjustedMounts(facts.mounts, adjustment);
    const mounts = w?.sandbox === request.pod.id ? unionOf(w.mounts, mine) : mine;
    // The pod's next containers (and restarts) mostly tell nothing new: then nothing is looked up.
    const inputs = inputsOf(request.pod, mounts, facts.uidMappings);
    if (w !== undefined && w.inputs === inputs) return;
    this.watch(request.pod, { mounts, uidMappings: facts.uidMappings }, 'CreateContainer', false, inputs);
  }

  podEnded(pod: NriPod, event: 'stop' | 'remove'): void {
    this.touched.add(pod.uid);
    const w = this.watched.get(pod.uid);
    const why = event === 'stop' ? 'StopPodSandbox' : 'RemovePodSandbox';
    if (w === undefined) return this.dropCopies(pod.uid, why); // copies made but never watched (a start that failed after them)
    if (w.sandbox !== pod.id)
      return this.log.debug({ podUid: pod.uid, sandbox: pod.id, why }, 'nri: an earlier sandbox of a watched pod ended');
    this.forget(pod.uid, why);
  }

  close(): void {
    this.closed = true;
    this.startSweep?.close();
    this.watched.clear();
    this.registry.close();
  }

  /** The pod's copies removed by the copier (a pod of many large copies takes seconds: never on this loop). */
  private dropCopies(uid: string, why: string): void {
    const { runDir } = this.opts;
    if (runDir === undefined) return;
    this.copier.removePod(runDir, uid).then(
      (removed) => removed && this.log.info({ podUid: uid, why }, "nri: pod's owned copies removed"),
      (err: unknown) => this.log.warn({ podUid: uid, err }, `nri: owned copies not removed: ${describeError(err)}`),
    );
  }

  /** `ended`: the pod is gone (its copies go too), not only its watch. */
  private forget(uid: string, why: string, ended = true): void {
    if (ended) this.dropCopies(uid, why);
    if (!this.watched.delete(uid)) return;
    this.registry.remove(uid);
    this.records?.remove(uid);
    this.log.info({ podUid: uid, why }, 'nri: pod no longer watched');
  }

  private check(uid: string): void {
    const w = this.watched.get(uid);
    if (w && (!this.registry.has(uid) || !fs.existsSync(w.podDir))) this.forget(uid, 'its volumes are gone');
  }

  /** Adds or refreshes the pod's watches; `always`: a pass even when nothing changed. */
  private watch(pod: NriPod, mounts: MountFacts, why: 'Synchronize' | 'CreateContainer', always: boolean, inputs?: string): void {
    const { log, opts, registry } = this;
    const where = { podUid: pod.uid, pod: pod.name, namespace: pod.namespace };
    try {
      const podDir = podDirOfUid(pod.uid, opts.kubeletRoot).dir;
      const copies = opts.runDir === undefined ? undefined : { runDir: opts.runDir, podUid: pod.uid };
      const { volumes, skipped } = podWatchVolumes(podDir, pod.annotations, mounts, copies);
      for (const s of skipped) log.info({ ...where, volume: s.volume, reason: s.reason }, 'nri: volume not watched');
      // Whether each volume is read through the copy belongs to the key: the same kubelet directory
      // watched in place (a container created while envhook was away) and then read through the copy
      // (that container evicted and created again) are two different watches.
      const key = JSON.stringify([pod.id, pod.annotations[VOLUME_OWNERS], volumes.map((v) => [v.dir, v.uidMapping, v.copy ?? null])]);
      const same = this.watched.get(pod.uid);
      if (!always && same?.key === key) {
        same.inputs = inputs;
        return;
      }
      registry.add(pod.uid, volumes);
      if (!registry.has(pod.uid)) return this.forget(pod.uid, 'no volume to watch', false);
      this.watched.set(pod.uid, { sandbox: pod.id, podDir, key, mounts: [...mounts.mounts], inputs });
      this.records?.save(pod.uid, pod.id, podDir, volumes);
      log.info({ ...where, sandbox: pod.id, volumes: volumes.length, why }, 'nri: watching pod volume owners');
    } catch (err) {
      // The start reports a bad annotation or a missing pod directory; the watcher only says why not.
      log.warn({ ...where, err }, `nri: pod not watched: ${describeError(err)}`);
      this.forget(pod.uid, 'not watchable', false);
    }
  }
}

/** What a CreateContainer's watch is made from, as one string. */
function inputsOf(pod: NriPod, mounts: readonly MountLike[], uidMappings: unknown): string {
  const m = mounts.map((x) => [(x as { destination?: unknown }).destination, (x as { source?: unknown }).source]);
  return JSON.stringify([pod.id, pod.annotations[VOLUME_OWNERS], uidMappings ?? null, m]);
}

/** The mounts of `a` and `b`, each (destination and source) once: containers restarted add nothing. */
function unionOf(a: readonly MountLike[], b: readonly MountLike[]): MountLike[] {
  const seen = new Map<string, MountLike>();
  for (const m of [...a, ...b]) {
    const { destination, source } = m as { destination?: unknown; source?: unknown };
    seen.set(JSON.stringify([destination, source]), m);
  }
  return [...seen.values()];
}

/** The container's mounts as the runtime makes them: an adjustment's mount replaces the one of its destination. */
function adjustedMounts(mounts: readonly MountLike[], adjustment: NriAdjustment | undefined): MountLike[] {
  const replaced = new Map((adjustment?.mounts ?? []).map((m) => [m.destination, m]));
  return mounts.map((m) => replaced.get((m as { destination?: string }).destination ?? '') ?? m);
}
