// `envhook install` and `envhook uninstall` (SPEC §1): place the executables, the sh front and
// the hooks.d files, and register them with containerd, CRI-O or Podman.
import { Command, Option } from 'commander';
import { DEFAULT_PREFIX, RUNTIMES, type Runtime } from '../install/layout.ts';
import { MODES, type InstallMode } from '../install/mode.ts';
import { applyChanges, changed, describeChanges, missingDirs, pruneEmptyDirs, removeEmptyDirs, revertChanges } from '../install/fsops.ts';
import { planInstall, type Plan } from '../install/plan.ts';
import { planUninstall } from '../install/uninstall.ts';
import { EnvhookError } from '../errors.ts';

interface Flags {
  runtime: Runtime;
  mode?: InstallMode;
  index?: string;
  nriRequired?: boolean;
  enableNri?: boolean;
  dryRun?: boolean;
  root?: string;
  prefix?: string;
  config?: string;
  dropIn?: string;
  containerd?: string;
  crio?: string;
  source?: string;
  node?: string;
  hooksDir?: string;
  kubeletRoot?: string;
  logFile?: string;
  logLevel?: string;
  ociRuntime?: string;
}

function common(cmd: Command, mode: Option): Command {
  return cmd
    .addOption(new Option('--runtime <runtime>', 'the container runtime').choices(RUNTIMES).makeOptionMandatory())
    .addOption(mode.choices(MODES))
    .option('--dry-run', "print what would change (a diff of each config file, the size and sha256 of envhook's own files) and change nothing")
    .option('--root <dir>', 'host root: every path is taken under it (DaemonSet: /host)', '/')
    .option('--prefix <dir>', "envhook's own directory on the host", DEFAULT_PREFIX);
}

export function registerInstall(program: Command): void {
  common(program.command('install').description('install envhook for a container runtime and register it'), new Option('--mode <mode>', 'shim: the runtime handler (RuntimeClass envhook); nri: the resident NRI plugin (containerd >= 1.7)').default('shim'))
    .option('--config <file>', "containerd: its root config file (containerd --config); CRI-O, Podman: the drop-in file to write")
    .option('--index <NN>', 'nri: the plugin index, two digits (the NN of NN-envhook)', '50')
    .option('--nri-required', "nri: also make envhook a required plugin of NRI's default validator (containerd >= 2.2, CRI-O >= 1.34): no container is created while envhook is not connected")
    .option('--enable-nri', "nri, containerd: where an admin's file sets disable = true in NRI's table (containerd 1.7's config default), change exactly that key to false (the file backed up; uninstall puts it back)")
    .option('--drop-in <file>', 'containerd: write the handler into this file, which the root config imports')
    .option('--containerd <path>', 'containerd: the binary to ask for its version and config dump (default: containerd on PATH)')
    .option('--crio <path>', 'CRI-O: the binary to ask for its config after install (default: crio on PATH)')
    .option('--hooks-dir <dir>', 'CRI-O: the hooks directory CRI-O reads (default /usr/share/containers/oci/hooks.d)')
    .option('--kubelet-root <dir>', "write kubeletRoot into /etc/envhook/config.json (the kubelet's --root-dir)")
    .option('--log-file <file>', 'write logFile into /etc/envhook/config.json')
    .option('--log-level <level>', 'write logLevel into /etc/envhook/config.json')
    .option('--oci-runtime <path>', 'write runtime (the real OCI runtime, default runc on PATH) into /etc/envhook/config.json')
    .option('--source <dir>', 'directory holding dist/ and hooks/ (default: found from this executable)')
    .option('--node <path>', 'Node 24 on the host, used only when there is no single executable to install')
    .action((flags: Flags) => run(planInstall(flags), flags, false));
}

export function registerUninstall(program: Command): void {
  common(program.command('uninstall').description('reverse envhook install for a container runtime'), new Option('--mode <mode>', 'remove only this install (default: every install recorded for the runtime, handler and NRI plugin)'))
    .action((flags: Flags) => run(planUninstall(flags), flags, true));
}

function run(plan: Plan, flags: Flags, uninstall: boolean): void {
  const described = describeChanges(plan.layout, plan.changes, { dryRun: !!flags.dryRun, diffs: !!flags.dryRun });
  const any = plan.changes.some(changed);
  let checked: string | undefined;
  let removed = flags.dryRun ? removeEmptyDirs(plan.layout, plan.dirs ?? [], plan.changes, true) : [];
  if (!flags.dryRun) {
    const dirs = missingDirs(plan.layout, plan.changes);
    const backups = applyChanges(plan.layout, plan.changes);
    if (uninstall) pruneEmptyDirs(plan.layout, plan.layout.prefix);
    removed = removeEmptyDirs(plan.layout, plan.dirs ?? [], plan.changes, false);
    try {
      if (any) checked = plan.verify?.();
    } catch (err) {
      // the runtime would not run envhook with these files: put every file back
      revertChanges(plan.layout, plan.changes, backups);
      for (const d of dirs.reverse()) pruneEmptyDirs(plan.layout, d);
      throw new EnvhookError(`${(err as Error).message}; every file is back as it was`, { cause: err });
    }
  }
  const out = [described, ...removed.map((d) => `${flags.dryRun ? 'would ' : ''}remove directory ${d} (install created it)`)].filter((l) => l !== '').join('\n');
  if (out) process.stdout.write(out + '\n');
  if (any) for (const n of plan.notes) process.stdout.write(`note: ${n}\n`);
  if (checked) process.stdout.write(checked + '\n');
  if (!any) process.stdout.write(`nothing changed: ${plan.nothing ?? `envhook is ${uninstall ? 'not' : 'already'} installed for ${flags.runtime}${flags.mode === 'nri' ? ' (NRI plugin)' : ''} under ${plan.layout.prefix}`}\n`);
  else if (!flags.dryRun && plan.next.length) process.stdout.write(`next:\n${plan.next.map((l) => `  ${l}`).join('\n')}\n`);
}
