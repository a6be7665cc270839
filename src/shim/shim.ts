// The Node side of the runtime shim: `envhook shim <runc argv>`, run by hooks/envhook-runtime
// for create and run, and for an exec into a container with envhook's names mark (exec.ts).
// Runs the pipeline on the bundle and rewrites config.json atomically;
// on success it exits 0 and the front execs the real runtime with the same argv, so exit
// status, signals, stdio and inherited descriptors are the runtime's. (Node's
// process.execve would close every descriptor but stdio, breaking runc's --preserve-fds and
// socket activation, so the exec stays in sh.) On failure config.json is left as it was; the
// caller (cli/main.ts) prints the one-line error and exits 1, and the front runs nothing.
import path from 'node:path';
import { describeError } from '../errors.ts';
import { createLogger, silentLogger, type Logger } from '../log.ts';
import { loadSettings } from '../settings.ts';
import { loadSpec } from '../oci/spec.ts';
import { parseCreateArgs, parseRuncArgs } from '../oci/runc-args.ts';
import { runPipeline } from '../bundle/spec-pipeline.ts';
import { flushBundle } from '../bundle/flush.ts';
import { containerName, podUidAnnotation, type Annotations } from '../k8s/identity.ts';
import { prepareExec } from './exec.ts';
import { resolveRuntime } from './runtime.ts';
import { appendRuncLog } from './runc-log.ts';
import { APPLIED_KEY, VOLUME_OWNERS } from '../k8s/annotation-keys.ts';
import { checkRunDirForCopies } from '../watch/run-dir-memory.ts';
import { budgetsOf } from '../mirror/budget.ts';

export interface ShimEnv {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * Prepares the bundle of a create/run, or the process file of an exec; any other argv needs
 * nothing. The front resolves and execs the runtime itself; this checks, before any write, that
 * the runtime it will find is real (and asks it for an exec's bundle).
 */
export function runShim(argv: readonly string[], where: ShimEnv = { env: process.env, cwd: process.cwd() }): void {
  const runc = parseRuncArgs(argv);
  let log: Logger = silentLogger;
  // Which container this is, as far as known: the failure line names it as the success line does.
  const about: Record<string, unknown> = {};
  try {
    // The shim gets runc's argv, so settings come from the environment and the config file only.
    const settings = loadSettings({}, where.env);
    log = createLogger(settings.logFile, settings.logLevel, { fileGroup: settings.fileGroup });
    // Checked before any write: the runtime the front will exec must be a real one.
    const runtime = resolveRuntime(settings.runtime, where.env);
    const sub = runc.subcommand;
    if (sub === 'exec') {
      prepareExec({ argv, runc, runtime, env: where.env, cwd: where.cwd, log, about });
      return;
    }
    if (sub !== 'create' && sub !== 'run') return;
    const create = parseCreateArgs(sub, argv.slice(runc.subcommandIndex + 1));
    if (create.help) return;
    const bundle = path.resolve(where.cwd, create.bundle ?? '.');
    Object.assign(about, { id: create.id, bundle });
    const loaded = loadSpec(bundle);
    const annotations = (loaded.spec.annotations ?? {}) as Annotations;
    Object.assign(about, { container: containerName(annotations), pod: podUidAnnotation(annotations) });
    // Applied by an earlier stage (the NRI plugin, or an earlier create of this bundle): the
    // front decides the same without Node when it sees the key unescaped.
    if (annotations[APPLIED_KEY] !== undefined) {
      log.info(about, 'already applied; runtime next');
      return;
    }
    // Volumes with owners are read through envhook's owned copies, which `envhook watch` keeps in
    // step with the kubelet's rewrites (docs/ownership.md); config.json keeps a mount's ID mappings.
    const copies = settings.runDir === undefined ? undefined : { runDir: settings.runDir, keepsIdMappings: true };
    // A pod asking for owners may get copies: the run directory must be in memory (or allowed not to be).
    if (copies && annotations[VOLUME_OWNERS] !== undefined)
      checkRunDirForCopies(copies.runDir, settings.runDirOnDisk ?? 'warn', false, log, true);
    const budgets = budgetsOf(settings);
    const { spec, plan } = runPipeline(loaded.spec, { settings, stage: 'create', log, recordOwnersIn: settings.runDir, copies, budgets });
    flushBundle(loaded, spec, { id: create.id, log, about });
    log.info(
      { ...about, sandbox: plan.sandbox, env: plan.env.map((e) => e.name), removed: plan.removed, owners: plan.owners.length },
      'applied; runtime next',
    );
  } catch (err) {
    const message = `envhook: ${describeError(err)}`;
    appendRuncLog(runc.globals.log, runc.globals['log-format'], message);
    log.error({ err, ...about }, runc.subcommand === 'exec' ? 'runtime shim failed (exec)' : 'runtime shim failed');
    throw err;
  } finally {
    log.flush?.();
  }
}
