// `envhook nri`'s worker, top to bottom (docs/design.md#nri-mode): the heartbeat to the
// supervisor (supervisor-link.ts), the owner watcher (pod-watch.ts), the evictor of missed
// containers (evict.ts), the CreateContainer handler (handler.ts), then the session loop
// (session-loop.ts), whose sessions register with the runtime and serve its calls (plugin.ts),
// until the runtime is gone, SIGTERM or SIGINT, or the supervisor is.
import { createLogger } from '../../log.ts';
import type { AllSettings } from '../../settings.ts';
import { daemonJitTiers } from '../process.ts';
import { inheritedFd, notForAdmins, type WorkerRole } from '../roles.ts';
import { DEFAULT_RUN_DIR } from '../../watch/run-dir.ts';
import type { SupervisorMessage } from '../worker-messages.ts';
import { createClaims } from './claims.ts';
import { createEvictor, type Evictor } from './evict.ts';
import { createNriHandler } from './handler.ts';
import { slicedCopier } from '../../mirror/copier.ts';
import { budgetsOf } from '../../mirror/budget.ts';
import type { NriObserver } from './observer.ts';
import { createPodWatcher } from './pod-watch.ts';
import { startDaemon, type Daemon } from './session-loop.ts';
import { linkToSupervisor, type SupervisorLink } from './supervisor-link.ts';

export async function runWorker(settings: AllSettings, env: NodeJS.ProcessEnv, role: WorkerRole): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw notForAdmins();
  daemonJitTiers();
  // The heartbeat starts once everything is loaded: until its first beat, the supervisor allows
  // FIRST_BEAT_MS for the start; after it, HANG_MS of silence (STOPPED_MS when stopped) is a hang.
  const link = linkToSupervisor((m) => {
    if (process.connected) send(m);
  });
  const fd = inheritedFd(env);
  const log = createLogger(settings.logFile, settings.logLevel, { stderr: true, fileGroup: settings.fileGroup });
  log.debug({ plugin: `${role.index}-${role.name}`, fd, socket: settings.nriSocket }, 'nri: worker start');
  // Owners survive the kubelet's rewrites: the watcher lives as long as the worker, across sessions.
  // Owned copies are made, re-made and removed on this loop in slices of 10 ms, never in one go (mirror/copier.ts).
  const copier = slicedCopier(budgetsOf(settings));
  const pods = createPodWatcher({ kubeletRoot: settings.kubeletRoot, log, runDir: settings.runDir, copier });
  // The watches of before (this worker's predecessor, or before a runtime restart): a runtime
  // that sends no Synchronize to its pre-installed plugin (containerd 1.7) tells nothing else.
  void pods.restore();
  link.watchOwners(() => {
    const { queued: _, ...stats } = pods.registry.stats();
    // What the copies hold, as the copier measured after its last job (never read here).
    const held = copier.stats().held;
    return held === undefined ? stats : { ...stats, copyBytes: held.bytes, copyFiles: held.files };
  });
  const evictor = createEvictor({ log, observer: link.observer, all: settings.evictUnapplied, criSocket: settings.criSocket });
  // A hand-over: claimed containers while another envhook nri serves beside this one (claims.ts).
  const claims = createClaims(settings.runDir ?? DEFAULT_RUN_DIR, role.sharing === true, log);
  const commands = (m: SupervisorMessage) => {
    if (m?.t !== 'share') return;
    claims.share(m.on);
    // Alone again: the pods the other one watched (its records) are this one's now.
    if (!m.on) void pods.restore();
    if (process.connected) send({ t: 'sharing', on: m.on });
  };
  process.on('message', commands);
  const daemon = startDaemon({
    socketPath: settings.nriSocket,
    fd,
    preinstalled: role.preinstalled,
    name: role.name,
    index: role.index,
    handler: createNriHandler({ settings, log, runDir: settings.runDir, claims, copier }),
    pods,
    observer: evictingObserver(link, evictor),
    log,
  });
  try {
    const end = await untilEnded(daemon);
    if (end === 'runtime-gone' && process.connected) send({ t: 'end', why: end });
  } finally {
    process.off('message', commands);
    pods.close();
    await copier.close();
    evictor.close();
    link.stop();
    if (process.connected) process.disconnect();
  }
}

/**
 * Missed containers go to the supervisor (reported once, counted) and to the evictor, which
 * stops those it should over CRI once Synchronize is answered.
 */
function evictingObserver(link: SupervisorLink, evictor: Evictor): NriObserver {
  return {
    ...link.observer,
    registered(info) {
      evictor.registered(info.runtimeName);
      link.observer.registered(info);
    },
    missed(list, whole) {
      link.observer.missed(list, whole);
      evictor.missed(list);
    },
  };
}

/** How long a worker whose supervisor is gone may take to close its session before it exits anyway. */
const ORPHAN_EXIT_MS = 3000;

/**
 * Waits for the session loop's end; SIGTERM, SIGINT and the supervisor's end stop it. A worker
 * never runs without its supervisor: once the supervisor is gone (killed), nobody would stop it
 * any more, so it exits after ORPHAN_EXIT_MS even if its session has not closed by then.
 */
async function untilEnded(daemon: Daemon): Daemon['done'] {
  const stop = () => daemon.stop();
  const orphaned = () => {
    stop();
    setTimeout(() => process.exit(1), ORPHAN_EXIT_MS).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', orphaned);
  try {
    return await daemon.done;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('disconnect', orphaned);
  }
}
