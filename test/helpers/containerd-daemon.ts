// A private containerd for e2e tests: its own root, state and socket in a temporary directory,
// the CRI plugin off, so it touches nothing of the machine's containerd. The directory is a
// short one under /tmp: a unix socket path is limited to 107 bytes.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { CONTAINERD, CTR, containerId } from './bundle.ts';

export interface Containerd {
  address: string;
  ctr(args: string[]): SpawnSyncReturns<string>;
  stop(): Promise<void>;
}

export async function startContainerd(): Promise<Containerd> {
  const dir = fs.mkdtempSync('/tmp/envhook-ctd-');
  const address = path.join(dir, 'containerd.sock');
  const config = path.join(dir, 'containerd.toml');
  fs.writeFileSync(
    config,
    [
      'version = 2',
      `root = ${JSON.stringify(path.join(dir, 'root'))}`,
      `state = ${JSON.stringify(path.join(dir, 'state'))}`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      '[grpc]',
      `  address = ${JSON.stringify(address)}`,
      '[ttrpc]',
      `  address = ${JSON.stringify(address + '.ttrpc')}`,
      '',
    ].join('\n'),
  );
  const log = fs.openSync(path.join(dir, 'containerd.log'), 'a');
  const proc: ChildProcess = spawn(CONTAINERD!, ['--config', config], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(address)) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill('SIGKILL');
      throw new Error(`private containerd did not start: ${fs.readFileSync(path.join(dir, 'containerd.log'), 'utf8').slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const ctr = (args: string[]) => spawnSync(CTR!, ['--address', address, '--namespace', 'envhook-test', ...args], { encoding: 'utf8', timeout: 60_000 });
  return {
    address,
    ctr,
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once('exit', r)));
      spawnSync('umount', ['-R', path.join(dir, 'state')], { stdio: 'ignore' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `ctr run --rm --rootfs ROOTFS --runc-binary BIN [--annotation k=v…] ID ARGS…`. */
export function ctrRun(c: Containerd, rootfs: string, runcBinary: string, annotations: Record<string, string>, args: string[]) {
  const ann = Object.entries(annotations).flatMap(([k, v]) => ['--annotation', `${k}=${v}`]);
  return c.ctr(['run', '--rm', '--rootfs', '--env', 'PATH=/bin', '--runc-binary', runcBinary, ...ann, rootfs, containerId('envhook-install'), ...args]);
}
