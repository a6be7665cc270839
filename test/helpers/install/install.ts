// Install tests: a temporary host root, a source directory to install from, and a snapshot of
// every file under the root (to show that uninstall restores the original files byte for byte).
import fs from 'node:fs';
import path from 'node:path';
import { NODE, REPO, envhook } from '../bundle.ts';

export const REAL_NODE = fs.realpathSync(NODE);

/**
 * A source to install from, as a node gets it: this checkout's hooks/ and build (the single
 * executable dist/envhook when `npm run build` made one), or with `bundleOnly` a copy without the
 * single executable, so that install writes the sh wrapper and the bundle (dist/envhook.cjs, the
 * launcher, and dist/envhook-main.cjs, which it loads).
 */
export function realSource(dir?: string, { bundleOnly = false } = {}): string {
  const built = ['dist/envhook.cjs', 'dist/envhook-main.cjs'];
  for (const f of ['hooks/envhook-runtime', ...built]) {
    if (!fs.existsSync(path.join(REPO, f))) throw new Error(`${f} missing: run \`npm run build\` (npm test does)`);
  }
  if (!bundleOnly) return REPO;
  if (!dir) throw new Error('realSource: bundleOnly needs a directory');
  fs.cpSync(path.join(REPO, 'hooks'), path.join(dir, 'hooks'), { recursive: true });
  for (const f of built) fs.cpSync(path.join(REPO, f), path.join(dir, f));
  return dir;
}

/** True when this checkout has the single executable (what install puts on a node). */
export const HAS_SEA = fs.existsSync(path.join(REPO, 'dist/envhook'));

/**
 * A fixture source for the registration tests: small files that only need to be copied, never
 * run (the e2e tests install the real ones: realSource).
 */
export function fakeSource(dir: string): string {
  fs.mkdirSync(path.join(dir, 'hooks'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'dist'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'hooks/envhook-runtime'), '#!/bin/sh\n# fixture front\nexit 1\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'dist/envhook.cjs'), '// fixture launcher\n');
  fs.writeFileSync(path.join(dir, 'dist/envhook-main.cjs'), '// fixture bundle\n');
  return dir;
}

/**
 * A stand-in containerd in `dir`: `--version` prints `version`, `config default` a version 3
 * file, `config dump` the fixture `dump` (what containerd's reading of the files would be).
 */
export function fakeContainerd(dir: string, dump: string, version = '2.1.9'): string {
  fs.writeFileSync(path.join(dir, 'dump.toml'), dump);
  const bin = path.join(dir, 'containerd');
  const script = [
    '#!/bin/sh',
    'case "$*" in',
    `--version) echo "containerd github.com/containerd/containerd/v2 ${version} fake" ;;`,
    '"config default") echo "version = 3" ;;',
    `*"config dump") cat ${JSON.stringify(path.join(dir, 'dump.toml'))} ;;`,
    '*) exit 2 ;;',
    'esac',
    '',
  ].join('\n');
  fs.writeFileSync(bin, script, { mode: 0o755 });
  return bin;
}

/**
 * Every regular file under `root` (relative path → bytes), every symlink, and every directory
 * (`dir/` → its mode), so that a directory install created and uninstall left behind shows.
 */
export function snapshot(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        out.set(path.relative(root, p) + '/', Buffer.from((fs.statSync(p).mode & 0o7777).toString(8)));
        walk(p);
      } else if (e.isFile()) out.set(path.relative(root, p), fs.readFileSync(p));
      else out.set(path.relative(root, p), Buffer.from(`-> ${fs.readlinkSync(p)}`));
    }
  };
  walk(root);
  return out;
}

export interface InstallArgs {
  runtime: 'containerd' | 'crio' | 'podman';
  root: string;
  source: string;
  extra?: string[];
  /** Environment of the install (PATH decides which runtime binaries it finds). */
  env?: NodeJS.ProcessEnv;
}

export function install({ runtime, root, source, extra = [], env }: InstallArgs) {
  return envhook(['install', '--runtime', runtime, '--root', root, '--source', source, '--node', REAL_NODE, ...extra], env ? { env } : {});
}

export function uninstall({ runtime, root, extra = [] }: Omit<InstallArgs, 'source'>) {
  return envhook(['uninstall', '--runtime', runtime, '--root', root, ...extra]);
}

/** A temporary host root holding `files`, and a fixture source to install from. */
export function installRoot(t: { testdir(): string }, files: Record<string, string>): { root: string; source: string } {
  const dir = t.testdir();
  const root = path.join(dir, 'root');
  fs.mkdirSync(root);
  hostFiles(root, files);
  return { root, source: fakeSource(path.join(dir, 'src')) };
}

/**
 * A root that is a CRI-O node for install: its /etc/crio, which every CRI-O package makes (install
 * refuses a node with neither a crio binary nor /etc/crio), here with no file in it.
 */
export function crioNodeRoot(t: { testdir(): string }, files: Record<string, string>): { root: string; source: string } {
  const r = installRoot(t, files);
  crioEtc(r.root);
  return r;
}

/** /etc/crio under `root` (see crioNodeRoot). */
export function crioEtc(root: string): void {
  fs.mkdirSync(path.join(root, 'etc/crio'), { recursive: true });
}

/** Writes files under a host root (relative path → content). */
export function hostFiles(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
}

/**
 * Gives the pre-installed plugin wrapper `wrapper` the settings file `settings`, as an admin does
 * today (one added line: the runtime passes a pre-installed plugin no environment), so the
 * daemon it starts keeps its status and records in the test's directory, not the host's
 * /run/envhook. Returns what install wrote, to be written back before uninstall (which removes
 * only what it installed).
 */
export function confineInstalledPlugin(wrapper: string, settings: string): Buffer {
  const installed = fs.readFileSync(wrapper);
  fs.writeFileSync(wrapper, withSettingsFile(installed.toString(), settings));
  return installed;
}

/** A plugin wrapper's text with the admin's one line added before its `exec`: ENVHOOK_CONFIG=`settings`. */
export function withSettingsFile(wrapper: string, settings: string): string {
  return wrapper.replace(/^exec /m, `ENVHOOK_CONFIG=${JSON.stringify(settings)}\nexport ENVHOOK_CONFIG\nexec `);
}

/**
 * The arguments of `envhook install --runtime containerd --mode nri` for a private containerd:
 * its config file, envhook's prefix, the containerd binary asked, and the plugin's log file.
 */
export function nriInstallArgs(o: { config: string; prefix: string; containerd: string; nriLog?: string }): string[] {
  return [
    ...['--mode', 'nri', '--config', o.config, '--service-config', '--prefix', o.prefix, '--containerd', o.containerd],
    ...(o.nriLog ? ['--nri-log', o.nriLog] : []),
  ];
}
