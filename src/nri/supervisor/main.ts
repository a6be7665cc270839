// `envhook nri`'s supervisor, top to bottom (docs/design.md#nri-mode): the start checks; the
// hand-over when the runtime started this process; the instance lock; the metrics endpoint;
// then the supervisor proper (supervisor.ts), which keeps one worker (worker/main.ts)
// registered and publishes its status, until SIGTERM, SIGINT or a newer instance takes over.
import { createLogger } from '../../log.ts';
import { fileAccess } from '../../fs/file-group.ts';
import type { AllSettings } from '../../settings.ts';
import { DEFAULT_RUN_DIR } from '../../watch/run-dir.ts';
import { reexecAsDaemon } from '../process.ts';
import { HANDED_ENV, inheritedFd, roleOf } from '../roles.ts';
import { writeStatus, type RunsAs } from '../status-file.ts';
import { startHealth } from './health.ts';
import { acquireLock } from './lock.ts';
import { DurationHistogram } from './metrics.ts';
import { checkStart } from './start-checks.ts';
import { handOver, workerSpawner } from './spawn.ts';
import { startSupervisor, type Supervisor } from './supervisor.ts';

export async function runSupervisor(settings: AllSettings, env: NodeJS.ProcessEnv): Promise<void> {
  const runDir = settings.runDir ?? DEFAULT_RUN_DIR;
  const warning = await checkStart(settings, runDir);
  const fd = inheritedFd(env);
  const log = createLogger(settings.logFile, settings.logLevel, { stderr: true, fileGroup: settings.fileGroup });
  const access = fileAccess(settings.fileGroup); // the status file's mode and group
  // NRI kills the process it started (SIGKILL) once that plugin's connection has closed (its
  // removeClosedPlugins, at the next container event): that process must not be the supervisor,
  // or the first worker's death would take envhook down for good. The plugin file install writes
  // hands over in sh (ENVHOOK_NRI_HANDED: this process is already the supervisor, one Node start
  // less before the registration: docs/design.md#the-pre-installed-plugins-start); started any
  // other way with the connection, this process hands it to a supervisor of its own and exits;
  // the runtime reaps it when it kills it.
  if (fd !== undefined && env[HANDED_ENV] === undefined) return handOver(fd, env, log);
  reexecAsDaemon(fd, (why, err) => log.debug({ err }, `nri: supervisor on Node's default V8 threads (${why})`));
  const role = roleOf(fd, env, settings.nriIndex);
  const plugin = `${role.index}-${role.name}`;

  let supervisor: Supervisor | undefined;
  const lock = await acquireLock({
    socketPath: settings.nriSocket,
    onTakeover: (pid) => log.info({ plugin, previous: pid }, 'nri: took over from the envhook nri that was running'),
    onRequest: async (request, pid) => {
      log.info({ plugin, by: pid, request }, request === 'stop' ? 'nri: asked to stop' : 'nri: a newer envhook nri takes over');
      await supervisor?.stop(request === 'stop' ? `stop asked by pid ${pid}` : `taken over by pid ${pid}`);
    },
  });
  const histogram = new DurationHistogram();
  const health = await startHealth(settings.metricsAddress, () => supervisor!.status(), histogram, log, lock);
  // Started: every start-up check passed (a failure before here is the one line `envhook: …` alone).
  log.info({ cmd: 'nri', plugin, socket: settings.nriSocket, fd }, 'nri: start');
  if (warning !== undefined) log.warn({ runDir }, `nri: ${warning}`);
  supervisor = startSupervisor({
    name: role.name,
    index: role.index,
    socketPath: settings.nriSocket,
    runsAs: runsAs(fd, env),
    log,
    spawnWorker: workerSpawner({ role, fd, env, fifoPriority: settings.fifoPriority, log }),
    publish: (status) => writeStatus(runDir, status, access),
    onDurations: (seconds) => {
      for (const s of seconds) histogram.observe(s);
    },
  });
  try {
    await untilEnded(supervisor);
  } finally {
    await health?.close();
    await lock.release();
  }
  log.info({ cmd: 'nri', plugin }, 'nri: stopped');
}

/** How this envhook nri was started: the kubelet gives every container of a pod KUBERNETES_SERVICE_HOST. */
const runsAs = (fd: number | undefined, env: NodeJS.ProcessEnv): RunsAs =>
  fd !== undefined ? 'pre-installed' : env.KUBERNETES_SERVICE_HOST ? 'daemonset' : 'external';

/** Waits for the supervisor's end; SIGTERM and SIGINT stop it meanwhile. */
async function untilEnded(supervisor: Supervisor): Promise<void> {
  const stop = (signal: NodeJS.Signals) => void supervisor.stop(signal);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    await supervisor.done;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}
