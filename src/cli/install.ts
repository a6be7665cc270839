// `envhook install` and `envhook uninstall` (docs/design.md#modes): place the executables, the sh front and
// the hooks.d files, and register them with containerd, CRI-O or Podman.
import fs from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { DEFAULT_PREFIX, RUNTIMES, type Runtime } from '../install/layout.ts';
import { MODES, type InstallMode } from '../install/mode.ts';
import { applyChanges, changed, missingDirs, pruneEmptyDirs, removeEmptyDirs, revertChanges } from '../install/fsops.ts';
import { planInstall, type Plan } from '../install/plan/install-plan.ts';
import { planUninstall, wrapperSocket } from '../install/plan/uninstall.ts';
import { EnvhookError } from '../errors.ts';
import { outcomeJson, outcomeText, type Outcome } from './install-report.ts';
import { nriRunState, removeNriRunState, runningSupervisor } from '../install/run-state.ts';
import { readState } from '../install/state.ts';
import { nodeRunDir } from '../install/run-dir-setting.ts';

interface Flags {
  runtime: Runtime;
  mode?: InstallMode;
  index?: string;
  nriRequired?: boolean;
  enableNri?: boolean;
  nriLog?: string;
  externalPlugin?: boolean;
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
  serviceConfig?: boolean;
  takeOver?: boolean;
  watchUnit?: boolean;
  json?: boolean;
  runDir?: string;
  criSocket?: string;
  evictUnapplied?: boolean;
  metricsAddress?: string;
}

function common(cmd: Command, mode: Option): Command {
  return cmd
    .addOption(new Option('--runtime <runtime>', 'the container runtime').choices(RUNTIMES).makeOptionMandatory())
    .addOption(mode.choices(MODES))
    .option(
      '--dry-run',
      "print what would change (a diff of each config file, the size and sha256 of envhook's own files) and change nothing",
    )
    .option('--root <dir>', "the node's root: every path, and the runtime's own binaries, are taken under it (DaemonSet: /host)", '/')
    .option('--prefix <dir>', "envhook's own directory on the host", DEFAULT_PREFIX)
    .option('--json', 'print one JSON object of what changed (or would change) instead of the lines (keys: docs/install.md#json-output)');
}

export function registerInstall(program: Command): void {
  common(
    program.command('install').description('install envhook for a container runtime and register it'),
    new Option(
      '--mode <mode>',
      'shim: the runtime handler (RuntimeClass envhook); nri: the resident NRI plugin (containerd >= 1.7, CRI-O >= 1.26)',
    ).default('shim'),
  )
    .option(
      '--config <file>',
      'containerd: its root config file (default /etc/containerd/config.toml; another only with --service-config); CRI-O, Podman: the drop-in file to write (in the directory the runtime reads)',
    )
    .option('--service-config', "containerd: --config is the file containerd's service starts it with (containerd --config FILE)")
    .option(
      '--take-over',
      'move the runtime registration of this runtime and mode from an install under another --prefix to this one (refused without it)',
    )
    .option('--index <NN>', 'nri: the plugin index, two digits (the NN of NN-envhook)', '50')
    .option(
      '--nri-required',
      "nri: also make envhook a required plugin of NRI's default validator (containerd >= 2.2, CRI-O >= 1.34): no container is created while envhook is not connected",
    )
    .option(
      '--enable-nri',
      "nri, containerd: where an admin's file sets disable = true in NRI's table (containerd 1.7's config default), change exactly that key to false (the file backed up; uninstall puts it back)",
    )
    .option(
      '--nri-log <file>',
      "nri: the file the pre-installed plugin's log lines (its stderr) are appended to (default /var/log/envhook-nri.log)",
    )
    .option(
      '--external-plugin',
      "nri: envhook nri runs elsewhere (the Helm chart's DaemonSet): only switch NRI on in the runtime's configuration, write no plugin file",
    )
    .option('--drop-in <file>', 'containerd: write the handler into this file, which the root config imports')
    .option(
      '--containerd <path>',
      "containerd: a binary of this machine to ask for its version and config dump (default: the node's containerd, found and run under --root)",
    )
    .option(
      '--crio <path>',
      "CRI-O: a binary of this machine to ask for its config after install (default: the node's crio, found and run under --root)",
    )
    .option(
      '--hooks-dir <dir>',
      "CRI-O: the hooks directory CRI-O reads (default /usr/share/containers/oci/hooks.d; with no crio to ask, the first of hooks_dir as CRI-O's files set it)",
    )
    .option('--kubelet-root <dir>', "write kubeletRoot into /etc/envhook/config.json (the kubelet's --root-dir)")
    .option('--log-file <file>', 'write logFile into /etc/envhook/config.json')
    .option('--log-level <level>', 'write logLevel into /etc/envhook/config.json')
    .option(
      '--oci-runtime <name|path>',
      "write runtime (the real OCI runtime, default runc, or CRI-O's default_runtime for --runtime crio: a name as the node finds it, or an absolute path, refused unless an executable file under --root) into /etc/envhook/config.json",
    )
    .option(
      '--source <dir>',
      "a checkout (dist/ and hooks/) or an installed envhook's directory (default: the checkout above this executable, else the directory it runs from)",
    )
    .option('--node <path>', 'Node 24 on the host, used only when there is no single executable to install')
    .option(
      '--cri-socket <path>',
      "nri: the runtime's CRI socket the plugin evicts through (default: the runtime's own, read from its config: containerd's grpc.address, CRI-O's listen)",
    )
    .option('--evict-unapplied', 'nri: the plugin evicts every container created without its env, not only those of pods that ask')
    .option('--metrics-address <host:port>', 'nri: the plugin serves /metrics, /healthz and /readyz there (off by default)')
    .option(
      '--no-watch-unit',
      'shim, containerd or CRI-O: write no systemd unit for envhook watch (volume owners; it runs elsewhere, e.g. in a DaemonSet)',
    )
    .action(async (flags: Flags) => {
      const plan = planInstall(flags);
      const o = run(plan, flags, 'install');
      if (!flags.dryRun && flags.mode === 'nri' && !flags.externalPlugin && plan.changes.some(changed))
        await upgradeRunning(plan, o, flags.root);
      print(o, flags);
    });
}

export function registerUninstall(program: Command): void {
  common(
    program.command('uninstall').description('reverse envhook install for a container runtime'),
    new Option('--mode <mode>', 'remove only this install (default: every install recorded for the runtime, handler and NRI plugin)'),
  )
    .option(
      '--run-dir <dir>',
      "the NRI plugin's run directory, whose state goes with the last NRI install (default: the settings file's runDir, /run/envhook)",
    )
    .action(async (flags: Flags) => {
      const plan = planUninstall(flags);
      // read before the settings file goes with the install
      const runDir = nodeRunDir(plan.layout, flags.runDir);
      const nri = Object.keys(readState(plan.layout).runtimes).filter((k) => k.endsWith('-nri'));
      const lastNri = flags.mode !== 'shim' && nri.length === 1 && nri[0] === `${flags.runtime}-nri`;
      const o = run(plan, flags, 'uninstall');
      if (!flags.dryRun) for (const socket of plan.stopPlugins ?? []) await stopRunning(socket, o, flags.root);
      if (!flags.dryRun && lastNri && o.nothing === null)
        await stopByStatus(plan.layout, runDir, plan.stopPlugins?.[0] ?? runDir, o, flags.root);
      if (lastNri && o.nothing === null)
        o.removedState = flags.dryRun ? nriRunState(plan.layout, runDir) : removeNriRunState(plan.layout, runDir);
      print(o, flags);
    });
}

function print(o: Outcome, flags: Flags): void {
  process.stdout.write(flags.json ? outcomeJson(o) : outcomeText(o));
}

/** Writes the plan's files (not with --dry-run), checks them with the runtime, and says what it did. */
function run(plan: Plan, flags: Flags, command: Outcome['command']): Outcome {
  const any = plan.changes.some(changed);
  let checked: string | undefined;
  // what the dry run prints; the real run prints those of them it removed (the prefix's own
  // directories go with pruneEmptyDirs), so both print the same lines
  let removed = removeEmptyDirs(plan.layout, plan.dirs ?? [], plan.changes, true);
  const existed = (plan.dirs ?? []).filter((d) => fs.existsSync(plan.layout.real(d)));
  if (!flags.dryRun) {
    const dirs = missingDirs(plan.layout, plan.changes);
    const backups = applyChanges(plan.layout, plan.changes);
    if (command === 'uninstall') pruneEmptyDirs(plan.layout, plan.layout.prefix);
    removeEmptyDirs(plan.layout, plan.dirs ?? [], plan.changes, false);
    // every directory install created that is gone now (pruneEmptyDirs took the prefix's)
    removed = existed.filter((d) => !fs.existsSync(plan.layout.real(d)));
    try {
      if (any) checked = plan.verify?.();
    } catch (err) {
      // the runtime would not run envhook with these files: put every file back
      revertChanges(plan.layout, plan.changes, backups);
      for (const d of dirs.reverse()) pruneEmptyDirs(plan.layout, d);
      throw new EnvhookError(`${(err as Error).message}; every file is back as it was`, { cause: err });
    }
  }
  const nothing = `envhook is ${command === 'uninstall' ? 'not' : 'already'} installed for ${flags.runtime}${flags.mode === 'nri' ? ' (NRI plugin)' : ''} under ${plan.layout.prefix}`;
  return {
    command,
    runtime: flags.runtime,
    mode: flags.mode ?? null,
    root: flags.root ?? '/',
    dryRun: !!flags.dryRun,
    layout: plan.layout,
    changes: plan.changes,
    removedDirs: removed,
    notes: any ? plan.notes : [],
    checked: checked ?? null,
    nothing: any ? null : (plan.nothing ?? nothing),
    next: any && !flags.dryRun ? plan.next : [],
    plugins: [],
    warnings: [],
    removedState: [],
  };
}

/**
 * Uninstall of the NRI plugin: the runtime would go on running the plugin it started until it
 * restarts; envhook nri is asked to stop through its instance lock (nri/supervisor/lock.ts), so nothing of
 * envhook is left running. A plugin that does not answer is a warning, not a failure: the files
 * are already gone.
 */
async function stopRunning(socket: string, o: Outcome, root: string | undefined): Promise<void> {
  const { ask } = await import('../nri/supervisor/lock.ts');
  try {
    const pid = await ask(socket, 'stop', 10_000, { root });
    if (pid === undefined) return;
    o.plugins.push({ socket, pid, state: 'stopped' });
    // The lock is released as the supervisor ends, a moment before it exits (its worker is given 3 s
    // to go): its run state is removed only once it is gone (install/run-state.ts), so wait for
    // that, bounded; past the bound the state is kept, and said so.
    if (!(await exited(pid, path.join(root ?? '/', 'proc'), EXIT_WAIT_MS)))
      o.warnings.push(
        `envhook nri (pid ${pid}) was asked to stop but still runs ${EXIT_WAIT_MS / 1000} s later: its run state is kept; stop it by hand (kill ${pid}) and run uninstall again`,
      );
  } catch (err) {
    o.warnings.push(`${(err as Error).message}: stop it by hand (kill the envhook nri process)`);
  }
}

/**
 * The plugin its status file names, still running although its lock did not answer: SIGTERM, as
 * its own process (pid and start time from the status file). Only on this node's own root: under
 * --root the pid is another PID namespace's. Why a lock does not answer while its plugin runs: a
 * pre-installed plugin ends by itself when its runtime stops (its worker's dial is refused:
 * 'runtime-gone'), and its supervisor releases the lock before the process exits. Seen on
 * containerd 2.1.9 on a loaded 2-CPU machine, `ask(socket, 'ping')` every 40 ms from containerd's
 * SIGTERM: the holder answered until 0.26 s, did not answer within 300 ms at 0.72 s (the
 * supervisor busy ending), was gone (ECONNREFUSED) from 0.77 s, while the process ran until
 * 1.1 s. uninstall started right after the runtime stopped (install-containerd-nri) lands there.
 */
async function stopByStatus(layout: Plan['layout'], runDir: string, socket: string, o: Outcome, root: string | undefined): Promise<void> {
  const pid = runningSupervisor(layout, runDir);
  if (pid === undefined) return;
  if (root !== undefined && path.resolve(root) !== '/') {
    o.warnings.push(
      `envhook nri (pid ${pid} on the node) still runs: its run state is kept; stop it on the node (kill ${pid}) and run uninstall again`,
    );
    return;
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // gone meanwhile
  }
  o.plugins.push({ socket, pid, state: 'stopped' });
  if (!(await exited(pid, '/proc', EXIT_WAIT_MS)))
    o.warnings.push(
      `envhook nri (pid ${pid}) still runs ${EXIT_WAIT_MS / 1000} s after SIGTERM: its run state is kept; stop it by hand (kill ${pid}) and run uninstall again`,
    );
}

/** How long uninstall waits for a stopped envhook nri to exit. */
const EXIT_WAIT_MS = 15_000;

/** True once `pid` is gone (or a zombie); false if it still runs after `ms`. */
async function exited(pid: number, procRoot: string, ms: number): Promise<boolean> {
  const { procStat } = await import('../nri/proc-stat.ts');
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 25))) {
    const st = procStat(pid, procRoot);
    if (st === undefined || st.state === 'Z') return true;
  }
  return false;
}

/** How long install waits for the new envhook nri to take over from the running one (its Node start, registration, 2 s settle). */
const UPGRADE_WAIT_MS = 60_000;

/**
 * Install over a running envhook nri (an upgrade, docs/nri-guarantees.md#an-upgrade-of-the-pre-installed-plugin):
 * the runtime started it from the previous files and never starts a pre-installed plugin again
 * while it runs. So it is asked (its instance lock, nri/supervisor/upgrade.ts) to start the
 * plugin file just written, and the envhook nri so started takes over from it with no window.
 * Done: the restart line goes from `next:`, unless the runtime's own configuration changed too.
 * Not done (an older plugin that does not know upgrades, external connections off, a new one that
 * did not take over): the old plugin goes on until the runtime restarts, and install says so.
 */
async function upgradeRunning(plan: Plan, o: Outcome, root: string | undefined): Promise<void> {
  const { ask } = await import('../nri/supervisor/lock.ts');
  const wrapper = plan.changes.find((c) => /^[0-9]{2}-envhook$/.test(path.posix.basename(c.file)) && c.after !== undefined);
  const socket = plan.upgrade?.socket ?? wrapperSocket(wrapper?.after);
  if (!plan.upgrade) {
    const pid = await ask(socket, 'ping', 2000, { root }).catch(() => undefined);
    if (pid !== undefined)
      o.plugins.push({ socket, pid, state: 'running-previous-files', why: 'the runtime accepts no external NRI connections' });
    return;
  }
  const { askUpgrade } = await import('../nri/supervisor/upgrade-ask.ts');
  const a = await askUpgrade(socket, UPGRADE_WAIT_MS, { root });
  if (a.kind === 'none') return;
  if (a.kind === 'handed-over') {
    o.plugins.push({ socket, pid: a.pid, state: 'handed-over', to: a.to });
    const config = new Set(plan.upgrade.configFiles);
    if (!plan.changes.some((c) => changed(c) && config.has(c.file))) o.next = o.next.filter((l) => !PREINSTALLED_RESTART.test(l));
    return;
  }
  if (a.kind === 'unanswered') {
    const pid = await ask(socket, 'ping', 2000, { root }).catch(() => undefined);
    if (pid !== undefined)
      o.plugins.push({ socket, pid, state: 'running-previous-files', why: 'it is of a version that cannot be upgraded in place' });
    return;
  }
  const why =
    a.kind === 'refused'
      ? `it refused the upgrade: ${a.why}`
      : `the new envhook nri${a.to ? ` (pid ${a.to})` : ''} did not take over within ${UPGRADE_WAIT_MS / 1000} s: see the plugin's log`;
  o.plugins.push({ socket, pid: a.pid, state: 'running-previous-files', why });
}

/** The `next:` line of a pre-installed plugin, which an upgrade in place makes unnecessary. */
const PREINSTALLED_RESTART = /starts its pre-installed NRI plugins when it starts/;
