// `envhook inject --bundle DIR`: the whole pipeline on a bundle in place (docs/design.md#modes, direct mode).
// config.json is written once, atomically, at the very end; any failure leaves it untouched.
import type { Command } from 'commander';
import { addSettingFlags, settingsFrom, type SettingOptions } from './options.ts';
import { createLogger } from '../log.ts';
import { loadSpec } from '../oci/spec.ts';
import { runPipeline } from '../bundle/spec-pipeline.ts';
import { flushBundle } from '../bundle/flush.ts';
import { parseVolumeFlags } from '../k8s/volumes.ts';
import { formatPlan } from './format-plan.ts';

interface InjectOptions extends SettingOptions {
  bundle: string;
  dryRun?: boolean;
  podDir?: string;
  volume: string[];
  container?: string;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerInject(program: Command): void {
  const cmd = program
    .command('inject')
    .description("resolve env annotations and apply them to a bundle's config.json")
    .requiredOption('--bundle <dir>', 'OCI bundle directory (holds config.json)')
    .option('--dry-run', 'print the plan (names, sources, owners; never values) and change nothing')
    .option('--pod-dir <dir>', "the pod's kubelet directory (default: found from kubelet-made mounts)")
    .option('--volume <name=dir>', 'map a volume name to a host directory (repeatable)', collect, [])
    .option('--container <name>', 'container name for a bundle without Kubernetes annotations');
  addSettingFlags(cmd).action((opts: InjectOptions) => inject(opts));
}

export function inject(opts: InjectOptions): void {
  const settings = settingsFrom(opts);
  const log = createLogger(settings.logFile, settings.logLevel, { fileGroup: settings.fileGroup });
  const dryRun = opts.dryRun === true;
  log.info({ cmd: 'inject', bundle: opts.bundle, dryRun }, 'inject start');
  try {
    const volumes = parseVolumeFlags(opts.volume);
    const loaded = loadSpec(opts.bundle);
    const { spec, plan } = runPipeline(loaded.spec, {
      settings,
      stage: 'inject',
      log,
      podDir: opts.podDir,
      volumes,
      container: opts.container,
      dryRun,
    });
    if (dryRun) process.stdout.write(formatPlan(plan));
    else flushBundle(loaded, spec);
    log.info(
      { cmd: 'inject', container: plan.container, set: plan.env.length, removed: plan.removed.length, owners: plan.owners.length, dryRun },
      'inject done',
    );
  } catch (err) {
    log.error({ cmd: 'inject', err }, 'inject failed');
    throw err;
  }
}
