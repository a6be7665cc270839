// envhook registered with a private CRI containerd (cri-containerd.ts) as a node admin does it:
// the real `envhook install --runtime containerd --config <its config.toml> --prefix <dir>`
// from this checkout's build, settings in a config file named by ENVHOOK_CONFIG in containerd's
// environment (containerd → runc shim → the front), a private kubelet root, envhook's log at
// debug level, and ENVHOOK_BIN pointing at a wrapper that records each envhook run (its argv:
// subcommand and runc's arguments, never a value) before running the installed envhook, so a
// test can tell whether Node ran without timing anything.
import fs from 'node:fs';
import path from 'node:path';
import { install, realSource } from '../install/install.ts';
import { prepareCriContainerd, type CriContainerd, type CriContainerdOptions } from './containerd.ts';

export interface CriEnvhook {
  containerd: CriContainerd;
  kubeletRoot: string;
  /** envhook's own log (pino JSON lines, debug level). */
  log: string;
  prefix: string;
  /** One line per envhook run: its argv. */
  runs(): string[];
  /** envhook's log text ('' before the first line). */
  logText(): string;
}

/** A containerd with the envhook handler installed in its config; not started yet. */
export function prepareWithEnvhook(opts: CriContainerdOptions & { countRuns?: boolean; logLevel?: string; dropIn?: string }): CriEnvhook {
  const { countRuns, logLevel, dropIn, ...containerdOpts } = opts;
  // The front reads only the environment and the config file: none of this process's settings.
  const base = Object.fromEntries(Object.entries(opts.env ?? process.env).filter(([k]) => !k.startsWith('ENVHOOK_')));
  const containerd = prepareCriContainerd({ ...containerdOpts, env: { ...base, NODE_EXTRA_CA_CERTS: '' } });
  const dir = containerd.dir;
  const prefix = path.join(dir, 'envhook');
  const kubeletRoot = path.join(dir, 'kubelet');
  const log = path.join(dir, 'envhook.log');
  const runsFile = path.join(dir, 'envhook-runs');
  const settings = path.join(dir, 'envhook.json');
  fs.mkdirSync(kubeletRoot, { recursive: true });
  // runDir (the owners records of `envhook watch`) in the temporary directory, not the host's /run/envhook.
  fs.writeFileSync(
    settings,
    JSON.stringify({ kubeletRoot, logFile: log, logLevel: logLevel ?? 'debug', runDir: path.join(dir, 'run') }) + '\n',
  );
  const r = install({
    runtime: 'containerd',
    root: '/',
    source: realSource(),
    extra: [
      '--config',
      containerd.paths.config,
      '--service-config',
      '--no-watch-unit', // not the machine's systemd: the tests run envhook watch themselves
      '--prefix',
      prefix,
      '--containerd',
      containerd.bin.containerd,
      ...(dropIn ? ['--drop-in', path.resolve(dir, dropIn)] : []),
    ],
  });
  if (r.status !== 0) {
    // Nothing runs yet: remove the directory, or a failed set-up leaves it in /tmp.
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`envhook install failed: ${r.stderr}`);
  }
  const wrapper = path.join(dir, 'envhook-counted');
  fs.writeFileSync(
    wrapper,
    `#!/bin/sh\nprintf '%s\\n' "$*" >> ${JSON.stringify(runsFile)}\nexec ${JSON.stringify(path.join(prefix, 'envhook'))} "$@"\n`,
    { mode: 0o755 },
  );
  // Without the counter (benchmarks), the front finds the installed envhook next to itself.
  Object.assign(containerd.env, { ENVHOOK_CONFIG: settings }, countRuns === false ? {} : { ENVHOOK_BIN: wrapper });
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
  return {
    containerd,
    kubeletRoot,
    log,
    prefix,
    runs: () => read(runsFile).split('\n').filter(Boolean),
    logText: () => read(log),
  };
}
