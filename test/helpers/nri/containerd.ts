// A containerd 2.1.9 (Debian sid, unpacked by scripts/debian-sid.mjs, never installed) of the
// test's own, with NRI on and every path in a private temporary directory: root, state, the
// gRPC and NRI sockets, the plugin directories. Started in the background, stopped by PID.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { sidPackage } from '../../../scripts/debian-sid.mjs';
import { sleep } from '../wait.ts';

export interface NriContainerd {
  dir: string;
  nriSocket: string;
  pluginDir: string;
  log(): string;
  /** Waits until containerd's log matches `re` (after `from` characters); returns the match. */
  waitForLog(re: RegExp, timeoutMs?: number, from?: number): Promise<RegExpMatchArray>;
  /** Starts containerd (again) with the same directories. */
  start(): Promise<void>;
  /** SIGTERM, waits for the exit; the directories stay until cleanup(). */
  stop(): Promise<void>;
  /** containerd's PID while it runs. */
  pid(): number | undefined;
  cleanup(): Promise<void>;
}

/** Why containerd 2.1.9 cannot run here, or undefined. */
export function missingNriContainerd(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  try {
    if (!fs.existsSync(containerd2Binary())) return 'containerd 2.1.9 (Debian sid) has no binary in its package';
  } catch (err) {
    return `containerd 2.1.9 (Debian sid) not available: ${(err as Error).message}`;
  }
  return undefined;
}

export function containerd2Binary(): string {
  return path.join(sidPackage('containerd'), 'usr/bin/containerd');
}

/** containerd 2.1.9's binary for the install tests that ask it, or why not (a tap skip). */
export function containerd2ForInstall(): { c2: string | undefined; skip2: string | false } {
  try {
    if (fs.existsSync(containerd2Binary())) return { c2: containerd2Binary(), skip2: false };
  } catch {
    // the sid package could not be fetched: the tests that need it are skipped
  }
  return { c2: undefined, skip2: 'containerd 2.1.9 (Debian sid) not available' };
}

export async function startNriContainerd(): Promise<NriContainerd> {
  const bin = containerd2Binary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-nri-ctrd-'));
  const nriSocket = path.join(dir, 'nri.sock');
  const pluginDir = path.join(dir, 'plugins');
  fs.mkdirSync(pluginDir);
  const config = path.join(dir, 'config.toml');
  fs.writeFileSync(
    config,
    [
      'version = 3',
      `root = ${JSON.stringify(path.join(dir, 'root'))}`,
      `state = ${JSON.stringify(path.join(dir, 'state'))}`,
      'disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]',
      '[grpc]',
      `  address = ${JSON.stringify(path.join(dir, 'sock'))}`,
      '[plugins."io.containerd.nri.v1.nri"]',
      '  disable = false',
      `  socket_path = ${JSON.stringify(nriSocket)}`,
      `  plugin_path = ${JSON.stringify(pluginDir)}`,
      `  plugin_config_path = ${JSON.stringify(path.join(dir, 'plugin-conf'))}`,
      // NRI's default is 5 s: a plugin run from source on a loaded test machine can take longer
      // to start (seen at load 40). The request timeout stays at its 2 s default.
      '  plugin_registration_timeout = "30s"',
      '',
    ].join('\n'),
  );
  const logFile = path.join(dir, 'containerd.log');
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const log = () => fs.readFileSync(logFile, 'utf8');

  async function waitForLog(re: RegExp, timeoutMs = 20_000, from = 0): Promise<RegExpMatchArray> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const m = log().slice(from).match(re);
      if (m) return m;
      if (Date.now() > end) throw new Error(`containerd log never matched ${re}: ${log().slice(-1500)}`);
      await sleep(20);
    }
  }

  async function start(): Promise<void> {
    const fd = fs.openSync(logFile, 'a');
    const from = fs.statSync(logFile).size;
    child = spawn(bin, ['--config', config], { stdio: ['ignore', fd, fd] });
    fs.closeSync(fd);
    const c = child;
    exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    // NRI is up once the adaptation has started: it logs this before accepting plugins.
    await waitForLog(/Synchronizing NRI \(plugin\) with current runtime state/, 30_000, from);
  }

  async function stop(): Promise<void> {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  await start();
  return {
    dir,
    nriSocket,
    pluginDir,
    log,
    waitForLog,
    start,
    stop,
    pid: () => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    async cleanup() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
