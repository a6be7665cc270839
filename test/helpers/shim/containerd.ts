// A containerd of the test's own: root, state, socket and config in a temporary directory
// (short, for the 108-byte socket path limit), started in the background and stopped by PID.
// Its environment is the front's (containerd → runc v2 shim → --runc-binary), so settings
// for envhook go in `env`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { CONTAINERD, CTR } from '../bundle.ts';
import { sleep } from '../wait.ts';

export interface Containerd {
  dir: string;
  address: string;
  /** `ctr --address SOCK ARGS`. */
  ctr(args: string[]): SpawnSyncReturns<string>;
  stop(): Promise<void>;
}

/** Why containerd tests cannot run here, or undefined. */
export function missingForContainerd(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!CONTAINERD) return 'containerd not installed (apt-get install containerd)';
  if (!CTR) return 'ctr not installed (apt-get install containerd)';
  return undefined;
}

export async function startContainerd(env: NodeJS.ProcessEnv): Promise<Containerd> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-ctrd-'));
  const address = path.join(dir, 'sock');
  const config = path.join(dir, 'config.toml');
  // Only what `ctr run --rootfs` needs: no CRI, no snapshotter with host requirements.
  fs.writeFileSync(
    config,
    [
      'version = 2',
      `root = ${JSON.stringify(path.join(dir, 'root'))}`,
      `state = ${JSON.stringify(path.join(dir, 'state'))}`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]',
      '[grpc]',
      `  address = ${JSON.stringify(address)}`,
      '',
    ].join('\n'),
  );
  const log = fs.openSync(path.join(dir, 'containerd.log'), 'a');
  const child = spawn(
    CONTAINERD!,
    ['--config', config, '--root', path.join(dir, 'root'), '--state', path.join(dir, 'state'), '--address', address],
    {
      env,
      stdio: ['ignore', log, log],
    },
  );
  fs.closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ctr = (args: string[]) => spawnSync(CTR!, ['--address', address, ...args], { encoding: 'utf8', timeout: 60_000 });
  for (let i = 0; ; i++) {
    if (fs.existsSync(address) && ctr(['version']).status === 0) break;
    if (i >= 200 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`containerd did not start: ${fs.readFileSync(path.join(dir, 'containerd.log'), 'utf8').slice(-2000)}`);
    }
    await sleep(50);
  }
  return {
    dir,
    address,
    ctr,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      // Leftover task mounts would make the removal fail; there are none with --rootfs and --rm.
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
