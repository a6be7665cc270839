// The Node side of the runtime shim: `envhook shim <runc argv>` (called by hooks/envhook-runtime
// for create and run). Runs the pipeline on the bundle, rewrites config.json atomically, then
// becomes the real runtime (process.execve) with the same argv, so exit status, signals and
// output are the runtime's. On failure the runtime is never called and config.json is left as
// it was; the caller (cli/main.ts) prints the one-line error and exits 1.
import path from 'node:path';
import { describeError, EnvhookError } from '../errors.ts';
import { createLogger, silentLogger, type Logger } from '../log.ts';
import { loadSettings } from '../settings.ts';
import { flushSpec, loadSpec } from '../oci/spec.ts';
import { parseCreateArgs, parseRuncArgs } from '../oci/runc-args.ts';
import { isSandbox, type Annotations } from '../k8s/identity.ts';
import { runPipeline } from '../pipeline.ts';
import { resolveRuntime } from './runtime.ts';
import { appendRuncLog } from './runc-log.ts';

export interface ShimDeps {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Replaces the process; returns only in tests. */
  execve: (file: string, args: string[], env: NodeJS.ProcessEnv) => void;
}

const defaultDeps = (): ShimDeps => ({
  env: process.env,
  cwd: process.cwd(),
  execve: (file, args, env) => {
    // Node 24 has it on Linux; the types mark it optional for other platforms.
    if (!process.execve) throw new EnvhookError('this Node has no process.execve (Node 24 on Linux needed)');
    process.execve(file, args, env);
  },
});

export function runShim(argv: readonly string[], deps: ShimDeps = defaultDeps()): void {
  const runc = parseRuncArgs(argv);
  let log: Logger = silentLogger;
  try {
    // The shim gets runc's argv, so settings come from the environment and the config file only.
    const settings = loadSettings({}, deps.env);
    log = createLogger(settings.logFile, settings.logLevel);
    const runtime = resolveRuntime(settings.runtime, deps.env);
    const become = () => {
      log.flush?.();
      // ENVHOOK_SHIM_ACTIVE makes a front reached again (a "runtime" that is a copy of a front) refuse.
      deps.execve(runtime, [runtime, ...argv], { ...deps.env, ENVHOOK_SHIM_ACTIVE: '1' });
    };
    const sub = runc.subcommand;
    if (sub !== 'create' && sub !== 'run') return become();
    const create = parseCreateArgs(sub, argv.slice(runc.subcommandIndex + 1));
    if (create.help) return become();
    const bundle = path.resolve(deps.cwd, create.bundle ?? '.');
    const loaded = loadSpec(bundle);
    if (isSandbox((loaded.spec.annotations ?? {}) as Annotations)) {
      log.debug({ id: create.id, bundle }, 'sandbox container: passed through');
      return become();
    }
    const { spec, plan } = runPipeline(loaded.spec, { settings, stage: 'create', log });
    flushSpec(loaded, spec);
    log.info({ id: create.id, bundle, container: plan.container, env: plan.env.map((e) => e.name), removed: plan.removed, owners: plan.owners.length }, 'applied; exec runtime');
    return become();
  } catch (err) {
    const message = `envhook: ${describeError(err)}`;
    appendRuncLog(runc.globals.log, runc.globals['log-format'], message);
    log.error({ err }, 'runtime shim failed');
    throw err;
  }
}
