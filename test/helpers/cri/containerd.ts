// A private containerd with the CRI plugin, for kubelet-like tests: Debian's containerd 1.6
// (/usr/bin/containerd, config version 2), containerd 1.7 from Debian trixie (config version 2)
// or 2.1 from Debian sid (version 3), chosen by `version`; the fetched ones run with their own
// containerd, containerd-shim-runc-v2 and ctr.
// Everything lives in a short temporary directory (cri-config.ts). Two steps, so that a test
// can register a handler in the config (`envhook install --config`) before the daemon reads it:
// prepareCriContainerd() writes the config, start() runs containerd, waits for the CRI plugin
// and imports the busybox images (oci-image.ts). stop() removes every pod through the CRI as the
// kubelet would, stops containerd by PID, and reports whatever is left (processes, mounts)
// before sweeping it, so a test can assert that nothing was.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { debianPackages, debianVersion, type DebianSuite } from '../../../scripts/debian-sid.mjs';
import { CONTAINERD, CTR, RUNC } from '../bundle.ts';
import { criConfig, criPaths, type ContainerdVersion } from './config.ts';
import { CriClient } from './client.ts';
import { missingForCriProto } from './proto.ts';
import { leftoverMounts, leftoverProcesses, startTime, sweep, type Leftovers } from '../leftovers.ts';
import { writeImageTar } from './oci-image.ts';

export type { ContainerdVersion } from './config.ts';

const PAUSE_IMAGE = 'docker.io/envhook/pause:test';
/**
 * containerd's log line for the plugin (index 50) once it is registered: `connected and
 * synchronized` from NRI 0.8.0 (containerd 1.7.26, 2.x), `connected` alone from NRI 0.6.1
 * (containerd 1.7.24), which logs it for an external plugin after its Synchronize.
 */
export const NRI_CONNECTED = /plugin \\"50-envhook\\" connected(?: and synchronized)?"/;
export const BUSYBOX_IMAGE = 'docker.io/envhook/busybox:test';

export interface CriContainerdOptions {
  version: ContainerdVersion;
  /** containerd's environment (inherited by the shims and the runtimes they run). */
  env?: NodeJS.ProcessEnv;
  /** Where the temporary directory goes (default os.tmpdir()): a tmpfs for benchmarks, as a node's /run/containerd is. */
  tmpBase?: string;
  /** NRI on with a socket under the temporary directory (1.7 and 2.1). */
  nri?: boolean;
  /** TOML appended to the config (extra runtime handlers, settings). */
  extraConfig?: string;
  /** The root config's `imports`, relative to the temporary directory or absolute. */
  imports?: string[];
  /** Files written under the temporary directory before anything reads the config (drop-ins). */
  files?: Record<string, string>;
  /** The runc the runc handler runs (default: the machine's). */
  runc?: string;
}

export interface CriContainerd {
  version: ContainerdVersion;
  dir: string;
  paths: ReturnType<typeof criPaths>;
  /** The containerd, ctr and runc binaries this instance runs. */
  bin: { containerd: string; ctr: string; runc: string; pathDirs: string[] };
  /** containerd's environment at start(): add settings for the runtimes here before starting. */
  env: NodeJS.ProcessEnv;
  /** `containerd --version` of the binary. */
  label: string;
  cri: CriClient;
  ctr(args: string[]): SpawnSyncReturns<string>;
  start(): Promise<void>;
  /** containerd stopped (SIGTERM) and started again on the same root; pods keep running. */
  restart(): Promise<void>;
  /** containerd stopped (SIGTERM), everything kept (a node's containerd stopped for an uninstall); restart() starts it again. */
  halt(): Promise<void>;
  /** Records a container or sandbox PID (with its start time) for the leftover check. */
  track(pid: number): void;
  stop(): Promise<Leftovers>;
}

/** The Debian suite a fetched containerd comes from (1.6 is the machine's own). */
export const SUITE_OF: Record<Exclude<ContainerdVersion, '1.6'>, DebianSuite> = { '1.7': 'trixie', '2.1': 'sid' };

/** Why this containerd cannot run here, or undefined. 1.7 and 2.1 come from Debian trixie and sid (fetched into a cache). */
export function missingForCri(version: ContainerdVersion): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!RUNC) return 'runc not installed (apt-get install runc)';
  const proto = missingForCriProto();
  if (proto) return proto;
  if (version === '1.6') return !CONTAINERD || !CTR ? 'containerd not installed (apt-get install containerd)' : undefined;
  try {
    debianPackages(SUITE_OF[version], ['containerd']);
  } catch (err) {
    return `containerd ${version} from Debian ${SUITE_OF[version]} unavailable: ${(err as Error).message}`;
  }
  return undefined;
}

function binaries(version: ContainerdVersion) {
  if (version === '1.6') return { containerd: CONTAINERD!, ctr: CTR!, runc: RUNC!, pathDirs: [] as string[] };
  const bin = path.join(debianPackages(SUITE_OF[version], ['containerd']).containerd, 'usr/bin');
  // containerd finds containerd-shim-runc-v2 on its PATH: the fetched one first.
  return { containerd: path.join(bin, 'containerd'), ctr: path.join(bin, 'ctr'), runc: RUNC!, pathDirs: [bin] };
}

export function prepareCriContainerd(opts: CriContainerdOptions): CriContainerd {
  const dir = fs.mkdtempSync(path.join(opts.tmpBase ?? os.tmpdir(), 'ehc-'));
  const paths = criPaths(dir);
  const bin = binaries(opts.version);
  for (const d of ['cni/bin', 'cni/conf', paths.nriPlugins, paths.nriConf]) fs.mkdirSync(path.resolve(dir, d), { recursive: true });
  for (const [rel, text] of Object.entries(opts.files ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  fs.writeFileSync(
    paths.config,
    criConfig({
      version: opts.version,
      dir,
      runc: opts.runc ?? bin.runc,
      sandboxImage: PAUSE_IMAGE,
      nri: opts.nri,
      extra: opts.extraConfig,
      imports: opts.imports?.map((i) => path.resolve(dir, i)),
    }),
  );
  const env = { ...(opts.env ?? process.env) };
  env.PATH = [...bin.pathDirs, env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'].join(':');
  const suite = opts.version === '1.6' ? undefined : SUITE_OF[opts.version];
  const label =
    spawnSync(bin.containerd, ['--version'], { encoding: 'utf8' }).stdout.trim() +
    (suite ? ` (Debian ${suite} ${debianVersion(suite, 'containerd')})` : '');
  const recorded = new Map<number, number>();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const ctr = (args: string[]) => spawnSync(bin.ctr, ['--address', paths.address, ...args], { encoding: 'utf8', timeout: 120_000 });
  const cri = new CriClient(paths.address);

  const launch = async () => {
    const log = fs.openSync(paths.log, 'a');
    const c = spawn(bin.containerd, ['--config', paths.config], { env, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    child = c;
    // A run that dies (a test runner's timeout) must not leave the daemon behind.
    const killOnExit = () => c.kill('SIGKILL');
    process.once('exit', killOnExit);
    c.once('exit', () => process.removeListener('exit', killOnExit));
    exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    try {
      await Promise.race([cri.waitReady(60_000), exited.then(() => Promise.reject(new Error('containerd exited')))]);
    } catch (err) {
      c.kill('SIGKILL');
      throw new Error(
        `containerd ${opts.version} did not serve CRI: ${(err as Error).message}\n${fs.readFileSync(paths.log, 'utf8').slice(-3000)}`,
        { cause: err },
      );
    }
  };
  const halt = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child?.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };

  return {
    version: opts.version,
    dir,
    paths,
    bin,
    env,
    label,
    cri,
    ctr,
    async start() {
      await launch();
      const tar = writeImageTar(path.join(dir, 'image'), [
        { name: PAUSE_IMAGE, entrypoint: ['/bin/sleep', '2147483647'], cmd: [] },
        { name: BUSYBOX_IMAGE, cmd: ['sh'] },
      ]);
      const r = ctr(['-n', 'k8s.io', 'images', 'import', tar]);
      if (r.status !== 0) throw new Error(`ctr images import failed: ${r.stderr}`);
      fs.rmSync(path.dirname(tar), { recursive: true });
    },
    async restart() {
      await halt();
      await launch();
    },
    halt,
    track(pid) {
      const start = startTime(pid);
      if (pid > 0 && start !== undefined) recorded.set(pid, start);
    },
    async stop() {
      try {
        if (child && child.exitCode === null) await removeAllPods(cri);
      } finally {
        cri.close();
        await halt();
      }
      const found = { processes: leftoverProcesses(dir, recorded), mounts: leftoverMounts(dir) };
      sweep(found);
      // After a sweep, the rootfs mounts are gone (lazily): the removal then succeeds.
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      return found;
    },
  };
}

/** What the kubelet does when pods go: stop and remove every container, then every sandbox. */
async function removeAllPods(cri: CriClient): Promise<void> {
  const { containers = [] } = await cri.call('ListContainers', {});
  for (const c of containers) {
    await cri.call('StopContainer', { containerId: c.id, timeout: 0n }).catch(() => undefined);
    await cri.call('RemoveContainer', { containerId: c.id }).catch(() => undefined);
  }
  const { items = [] } = await cri.call('ListPodSandbox', {});
  for (const s of items) {
    await cri.call('StopPodSandbox', { podSandboxId: s.id }).catch(() => undefined);
    await cri.call('RemovePodSandbox', { podSandboxId: s.id }).catch(() => undefined);
  }
}
