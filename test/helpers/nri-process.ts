// `envhook nri` from source as a child process, with its log file and a way to wait for it.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { NODE, REPO } from './bundle.ts';

export interface NriProcess {
  child: ChildProcess;
  logFile: string;
  stderr(): string;
  log(): string;
  waitForLog(re: RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after 5 s; resolves with how it ended. */
  stop(): Promise<number | string>;
}

export function startNriProcess(args: string[], opts: { dir: string; env?: NodeJS.ProcessEnv; stdio?: StdioOptions }): NriProcess {
  const logFile = path.join(opts.dir, `envhook-nri-${Date.now()}-${Math.random().toString(16).slice(2)}.log`);
  const config = path.join(opts.dir, 'empty-config.json');
  if (!fs.existsSync(config)) fs.writeFileSync(config, '{}');
  const child = spawn(NODE, [path.join(REPO, 'src/cli/main.ts'), 'nri', '--log-file', logFile, '--log-level', 'debug', ...args], {
    // Its owners records (nri/pod-watch.ts) in the test's directory, not the host's /run/envhook.
    env: { PATH: process.env.PATH, ENVHOOK_CONFIG: config, ENVHOOK_RUN_DIR: path.join(opts.dir, 'run'), ...opts.env },
    stdio: opts.stdio ?? ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  return {
    child,
    logFile,
    stderr: () => err,
    log,
    async waitForLog(re, timeoutMs = 15_000) {
      const end = Date.now() + timeoutMs;
      while (!re.test(log())) {
        if (Date.now() > end) throw new Error(`envhook nri log never matched ${re}: ${log().slice(-1500)} ${err}`);
        if (child.exitCode !== null) throw new Error(`envhook nri exited (${child.exitCode}): ${err}`);
        await new Promise((r) => setTimeout(r, 20));
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
