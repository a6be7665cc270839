// `envhook nri`'s supervisor, top to bottom (docs/design.md#nri-mode): the start checks; the
// hand-over of the runtime's connection when the runtime started this process; a DaemonSet pod
// that handed over before stays out (yield-marks.ts); then the instance (instance.ts: the lock,
// or serving beside the holder until it hands over; the metrics endpoint) and the supervisor
// proper (supervisor.ts), which keeps one worker (worker/main.ts) registered and publishes its
// status, until SIGTERM, SIGINT or a newer instance takes over.
import { createLogger, type Logger } from '../../log.ts';
import { fileAccess } from '../../fs/file-group.ts';
import type { AllSettings } from '../../settings.ts';
import { DEFAULT_RUN_DIR } from '../../watch/run-dir.ts';
import { reexecAsDaemon } from '../process.ts';
import { HANDED_ENV, inheritedFd, pluginFileOf, roleOf, startedFromPluginFile } from '../roles.ts';
import { writeStatus, type RunsAs } from '../status-file.ts';
import { startHealth } from './health.ts';
import { Instance } from './instance.ts';
import { DurationHistogram } from './metrics.ts';
import { checkStart } from './start-checks.ts';
import { handOver, workerSpawner } from './spawn.ts';
import { startSupervisor, type Supervisor } from './supervisor.ts';
import { startPluginFile } from './upgrade.ts';
import { podUidFrom, yieldMarks } from './yield-marks.ts';

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

  const podUid = podUidFrom(env);
  const marks = yieldMarks(runDir, settings.kubeletRoot, log);
  if (podUid !== undefined && marks.has(podUid)) return stayYielded(log, plugin, 'this pod handed over before: it does not register again');

  // the pre-installed plugin (or the instance its file started for an upgrade) can start its file anew
  const pluginFile = fd !== undefined || startedFromPluginFile(fd, env) ? pluginFileOf(env) : undefined;
  const histogram = new DurationHistogram();
  let supervisor: Supervisor | undefined;
  const instance = new Instance({
    socketPath: settings.nriSocket,
    plugin,
    log,
    podUid,
    marks,
    handoverWaitMs: settings.handoverWait * 1000,
    upgrade:
      pluginFile === undefined
        ? undefined
        : (by) => {
            log.info({ plugin, by, file: pluginFile }, 'nri: upgrade asked: the plugin file started anew, to take over from this one');
            return startPluginFile(pluginFile, role, env, log);
          },
    startHealth: async (status, lock) => {
      const health = await startHealth(settings.metricsAddress, status, histogram, log, lock);
      return health && (() => health.close());
    },
    startServing: (sharing, onListed) => {
      // Started: every start-up check passed (a failure before here is the one line `envhook: …` alone).
      log.info({ cmd: 'nri', plugin, socket: settings.nriSocket, fd, sharing }, 'nri: start');
      if (warning !== undefined) log.warn({ runDir }, `nri: ${warning}`);
      supervisor = startSupervisor({
        name: role.name,
        index: role.index,
        socketPath: settings.nriSocket,
        runsAs: runsAs(fd, env),
        log,
        spawnWorker: workerSpawner({ role, fd, env, fifoPriority: settings.fifoPriority, log }),
        // Once handed over, the status file is the new instance's.
        publish: (status) => void (instance.handedOver || writeStatus(runDir, status, access)),
        onDurations: (seconds) => {
          for (const s of seconds) histogram.observe(s);
        },
        sharing,
        onListed,
      });
      return supervisor;
    },
  });
  const signal = (name: NodeJS.Signals) => instance.signal(name);
  process.on('SIGTERM', signal);
  process.on('SIGINT', signal);
  try {
    await instance.start();
    const end = await instance.untilEnded();
    log.info({ cmd: 'nri', plugin }, 'nri: stopped');
    if (end === 'yielded' && podUid !== undefined && !instance.isTerminating)
      await stayYielded(log, plugin, 'handed over: waiting to be stopped (this pod does not register again)');
  } finally {
    process.off('SIGTERM', signal);
    process.off('SIGINT', signal);
  }
}

/** A DaemonSet pod's instance that handed over: idle until SIGTERM or SIGINT, then exit 0 (never restarted in between). */
async function stayYielded(log: Logger, plugin: string, why: string): Promise<void> {
  log.info({ cmd: 'nri', plugin }, `nri: ${why}`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
}

/** How this envhook nri was started: the kubelet gives every container of a pod KUBERNETES_SERVICE_HOST. */
const runsAs = (fd: number | undefined, env: NodeJS.ProcessEnv): RunsAs =>
  fd !== undefined ? 'pre-installed' : startedFromPluginFile(fd, env) ? 'upgraded' : env.KUBERNETES_SERVICE_HOST ? 'daemonset' : 'external';
