// `envhook nri` from source as a child process, with its log file and a way to wait for it.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { builtCli, NODE } from '../bundle.ts';
import { sleep } from '../wait.ts';
import { readProc } from '../proc.ts';

export interface NriProcess {
  child: ChildProcess;
  logFile: string;
  /** The run directory (status file), private to the test. */
  runDir: string;
  /** The status file the supervisor writes, or undefined before the first write. */
  status(): NriStatusFile | undefined;
  /** Resolves with the status once `ok` holds for it. */
  waitForStatus(ok: (s: NriStatusFile) => boolean, timeoutMs?: number): Promise<NriStatusFile>;
  stderr(): string;
  log(): string;
  waitForLog(re: RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after 5 s; resolves with how it ended. */
  stop(): Promise<number | string>;
}

export type NriStatusFile = { pid: number; workerPid?: number; connected: boolean; counts: Record<string, number> } & Record<
  string,
  unknown
>;

/**
 * The capabilities a test's `envhook nri` runs with, as a non-privileged root container gets them:
 * `capabilities` (names as in a pod's securityContext, `CHOWN`), else the comma-separated
 * ENVHOOK_NRI_CAPABILITIES (to run any NRI suite under a set), else undefined: every capability.
 */
function nriCapabilities(capabilities?: readonly string[]): readonly string[] | undefined {
  if (capabilities) return capabilities;
  const env = process.env.ENVHOOK_NRI_CAPABILITIES;
  return env === undefined ? undefined : env.split(',').filter(Boolean);
}

/**
 * `command args` started as root with only `capabilities` (setpriv): the bounding set, hence the
 * permitted and effective sets of every process it execs (the worker too), reduced to them;
 * no inheritable or ambient ones; no_new_privs. What runc gives a container whose
 * securityContext drops ALL and adds these, with allowPrivilegeEscalation: false.
 */
export function underCapabilities(capabilities: readonly string[], command: string, args: readonly string[]): [string, string[]] {
  const set = ['-all', ...capabilities.map((c) => `+${c.toLowerCase().replace(/^cap_/, '')}`)].join(',');
  return ['setpriv', ['--bounding-set', set, '--inh-caps', '-all', '--ambient-caps', '-all', '--no-new-privs', '--', command, ...args]];
}

/** Capability names as a securityContext writes them, by their number (linux/capability.h). */
const CAPABILITY_NAMES = (
  'CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE ' +
  'NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN ' +
  'SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE ' +
  'MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE'
).split(' ');

/**
 * What the kernel says of process `pid` (/proc/<pid>/status): its effective capabilities by name
 * (a bit with no name here as its number), no_new_privs, and its seccomp mode (0 none, 2 a filter).
 */
export function privilegesOf(pid: number): { effective: string[]; noNewPrivs: number; seccomp: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)$`, 'm').exec(status)?.[1] ?? '';
  const mask = BigInt(`0x${field('CapEff') || '0'}`);
  const effective: string[] = [];
  for (let bit = 0; bit < 64; bit++) if (mask & (1n << BigInt(bit))) effective.push(CAPABILITY_NAMES[bit] ?? String(bit));
  return { effective, noNewPrivs: Number(field('NoNewPrivs')), seccomp: Number(field('Seccomp')) };
}

/**
 * `logToStderr`: no --log-file, so the JSON lines go to stderr (its default) and log() reads them there.
 * `capabilities`: run under only these (nriCapabilities).
 */
export function startNriProcess(
  args: string[],
  opts: {
    dir: string;
    env?: NodeJS.ProcessEnv;
    stdio?: StdioOptions;
    logToStderr?: boolean;
    capabilities?: readonly string[];
    /** The run directory to share with another envhook nri (default: one of its own under `dir`). */
    runDir?: string;
    /** A command that execs the rest (`unshare -m … sh -c '…; exec "$@"' sh`): the same PID runs envhook. */
    prefix?: string[];
  },
): NriProcess {
  const id = `${Date.now()}-${Math.random().toString(16).slice(2)}`;
  const logFile = path.join(opts.dir, `envhook-nri-${id}.log`);
  const runDir = opts.runDir ?? path.join(opts.dir, `run-${id}`);
  const config = path.join(opts.dir, 'empty-config.json');
  if (!fs.existsSync(config)) fs.writeFileSync(config, '{}');
  const logArgs = opts.logToStderr ? [] : ['--log-file', logFile];
  const argv = [builtCli(), 'nri', ...logArgs, '--log-level', 'debug', ...args];
  const capabilities = nriCapabilities(opts.capabilities);
  const [command, commandArgs] = capabilities ? underCapabilities(capabilities, NODE, argv) : [NODE, argv];
  const [file, ...rest] = [...(opts.prefix ?? []), command, ...commandArgs] as [string, ...string[]];
  const child = spawn(file, rest, {
    // The status file and the owners records (nri/worker/pod-watch.ts) in the test's directory, not the host's /run/envhook.
    env: { PATH: process.env.PATH, ENVHOOK_CONFIG: config, ENVHOOK_RUN_DIR: runDir, ...opts.env },
    stdio: opts.stdio ?? ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const log = () => (opts.logToStderr ? err : fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  const statusFile = path.join(runDir, 'nri-status.json');
  const status = () => (fs.existsSync(statusFile) ? (JSON.parse(fs.readFileSync(statusFile, 'utf8')) as NriStatusFile) : undefined);
  return {
    child,
    logFile,
    runDir,
    status,
    async waitForStatus(ok, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const s = status();
        if (s && ok(s)) return s;
        if (Date.now() > end) throw new Error(`envhook nri status never as expected: ${JSON.stringify(s)}`);
        await sleep(20);
      }
    },
    stderr: () => err,
    log,
    async waitForLog(re, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      while (!re.test(log())) {
        if (Date.now() > end) throw new Error(`envhook nri log never matched ${re}: ${log().slice(-1500)} ${err}`);
        if (child.exitCode !== null) throw new Error(`envhook nri exited (${child.exitCode}): ${err}`);
        await sleep(20);
      }
    },
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  };
}

/** True while `pid` is a process that has not exited (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The processes `pid` started that it has not reaped (zombies too): each with its name, state, parent and, once exited, its exit status. */
export function childrenOf(pid: number): { pid: number; name: string; state: string; exitStatus: number | undefined }[] {
  const kids = fs
    .readdirSync(`/proc/${pid}/task`)
    .flatMap((tid) => readProc(pid, `task/${tid}/children`).trim().split(/\s+/).filter(Boolean));
  return kids.map(Number).map((k) => {
    const stat = readProc(k, 'stat');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 52, the exit status as waitpid reports it (set once the process has exited).
    const state = f[0] ?? '';
    return {
      pid: k,
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      state,
      exitStatus: state === 'Z' ? Number(f[49]) >> 8 : undefined,
    };
  });
}

/** The parent PID of `pid` (/proc/PID/status), or undefined when it is gone. */
export function parentOf(pid: number): number | undefined {
  const m = /^PPid:\s+(\d+)$/m.exec(readProc(pid, 'status'));
  return m ? Number(m[1]) : undefined;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}
