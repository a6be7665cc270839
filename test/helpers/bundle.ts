// Real OCI bundles for end-to-end tests: a busybox-static rootfs and a config.json made by
// `runc spec`, adjusted per test. Containers run with real runc under a per-test --root.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawn, spawnSync, type ChildProcess, type SpawnSyncReturns, type StdioOptions } from 'node:child_process';
import { untapped } from './untapped.ts';

export const BUSYBOX = ['/bin/busybox', '/usr/bin/busybox'].find((p) => fs.existsSync(p));
export const RUNC = whichSync('runc');
export const CTR = whichSync('ctr');
export const CONTAINERD = whichSync('containerd');
export const PODMAN = whichSync('podman');
export const NODE = path.resolve(import.meta.dirname, '../../node_modules/.bin/node');
export const REPO = path.resolve(import.meta.dirname, '../..');

export function whichSync(bin: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin'])) {
    const p = path.join(dir, bin);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** Why an e2e test cannot run here, or undefined when runc and busybox-static are present. */
export function missingForRunc(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!RUNC) return 'runc not installed (apt-get install runc)';
  if (!BUSYBOX) return 'busybox-static not installed (apt-get install busybox-static)';
  return undefined;
}

const APPLETS = ['sh', 'env', 'cat', 'ls', 'id', 'stat', 'true', 'echo', 'sleep', 'printenv', 'test', 'head'];

/** A rootfs with static busybox and its applets as symlinks. */
export function makeRootfs(dir: string): string {
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  for (const d of ['proc', 'dev', 'sys', 'tmp', 'etc', 'data']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.copyFileSync(BUSYBOX!, path.join(dir, 'bin/busybox'));
  fs.chmodSync(path.join(dir, 'bin/busybox'), 0o755);
  for (const a of APPLETS) fs.symlinkSync('busybox', path.join(dir, 'bin', a));
  fs.writeFileSync(path.join(dir, 'etc/passwd'), 'root:x:0:0:root:/:/bin/sh\n');
  return dir;
}

export interface BundleOptions {
  args?: string[];
  env?: string[];
  annotations?: Record<string, string>;
  mounts?: { destination: string; source: string; type?: string; options?: string[] }[];
  user?: { uid: number; gid: number };
  /** Extra top-level or nested changes applied last. */
  edit?: (spec: Record<string, any>) => void;
}

/** Writes `<dir>/config.json` from `runc spec`, rootfs at `rootfs` (absolute), terminal off. */
export function makeBundle(dir: string, rootfs: string, opts: BundleOptions = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(dir, '.spec-'));
  execFileSync(RUNC!, ['spec', '--bundle', tmp]);
  const spec = JSON.parse(fs.readFileSync(path.join(tmp, 'config.json'), 'utf8'));
  fs.rmSync(tmp, { recursive: true });
  spec.root = { path: rootfs, readonly: true };
  spec.process.terminal = false;
  spec.process.args = opts.args ?? ['env'];
  spec.process.env = opts.env ?? ['PATH=/bin', 'HOME=/'];
  if (opts.user) spec.process.user = opts.user;
  if (opts.annotations) spec.annotations = opts.annotations;
  if (opts.mounts) spec.mounts.push(...opts.mounts.map((m) => ({ type: 'bind', options: ['rbind', 'ro'], ...m })));
  opts.edit?.(spec);
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(spec, null, '\t'));
  return dir;
}

let counter = 0;
/** A container id unique in this process. */
export function containerId(prefix = 'envhook-test'): string {
  return `${prefix}-${process.pid}-${++counter}`;
}

/** `runc --root ROOT run -b BUNDLE ID`, capturing stdout and stderr. */
export function runcRun(bundle: string, root: string, id = containerId()): SpawnSyncReturns<string> {
  return spawnSync(RUNC!, ['--root', root, 'run', '-b', bundle, id], { encoding: 'utf8', timeout: 60_000 });
}

/** Parses `env` output (one NAME=value a line) into a map. */
export function parseEnvOutput(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}

/**
 * The built CLI as a test starts it, in the foreground (envhook()) or the background
 * (spawnEnvhook()), one way: Node 24 on dist/envhook.cjs, as on a node without the test runner's
 * NODE_OPTIONS (tap adds its loader to every child's, whatever env is given: helpers/untapped.ts
 * unsets it in the child), NODE_EXTRA_CA_CERTS emptied, this process's other variables and `env`.
 */
function cliChild(args: string[], env: NodeJS.ProcessEnv = {}): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const [command, argv] = untapped(NODE, [builtCli(), ...args]);
  return { command, args: argv, env: { ...process.env, NODE_EXTRA_CA_CERTS: '', ...env } };
}

/** Starts the built CLI in the background (a daemon: `envhook watch …`): cliChild(). */
export function spawnEnvhook(args: string[], stdio: StdioOptions = 'ignore'): ChildProcess {
  const c = cliChild(args);
  return spawn(c.command, c.args, { env: c.env, stdio });
}

let checkedBundle: string | undefined;

/**
 * The built CLI bundle (npm test builds it first): it starts in a fraction of the time the
 * sources take to load with type stripping (far more again on a loaded machine). A bundle older
 * than a source file is refused, so a test never runs stale code.
 */
export function builtCli(): string {
  if (checkedBundle) return checkedBundle;
  const bundle = path.join(REPO, 'dist/envhook.cjs');
  const built = fs.existsSync(bundle) ? fs.statSync(bundle).mtimeMs : 0;
  const newest = (dir: string): number =>
    fs
      .readdirSync(dir, {
        withFileTypes: true,
      })
      .reduce((m, e) => Math.max(m, e.isDirectory() ? newest(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).mtimeMs), 0);
  if (built < newest(path.join(REPO, 'src')))
    throw new Error('dist/envhook.cjs is missing or older than src/: run npm run build (npm test does)');
  return (checkedBundle = bundle);
}

/** Runs the built CLI as an admin runs it, `node dist/envhook.cjs ARGS`: cliChild(). */
export function envhook(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  const c = cliChild(args, opts.env);
  return spawnSync(c.command, c.args, {
    encoding: 'utf8',
    input: opts.input ?? '',
    env: c.env,
    timeout: 60_000,
  });
}
