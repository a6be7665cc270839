// Install tests: a temporary host root, a source directory to install from, and a snapshot of
// every file under the root (to show that uninstall restores the original files byte for byte).
import fs from 'node:fs';
import path from 'node:path';
import { NODE, REPO, envhook } from './bundle.ts';

export const REAL_NODE = fs.realpathSync(NODE);

/** The repository itself when the runtime front and a build are present, else undefined. */
export function repoSource(): string | undefined {
  const ok = fs.existsSync(path.join(REPO, 'hooks/envhook-runtime')) && (fs.existsSync(path.join(REPO, 'dist/envhook')) || fs.existsSync(path.join(REPO, 'dist/envhook.cjs')));
  return ok ? REPO : undefined;
}

/**
 * A stand-in source, to test the registration apart from envhook itself: a front that execs
 * runc, and a bundle whose `precreate` adds ENVHOOK_STANDIN=precreate to the config (so a test
 * sees that the hook ran) and whose `hook` reads the state and succeeds.
 */
export function fakeSource(dir: string): string {
  fs.mkdirSync(path.join(dir, 'hooks'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'dist'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'hooks/envhook-runtime'), '#!/bin/sh\nexec runc "$@"\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'dist/envhook.cjs'), STANDIN);
  return dir;
}

const STANDIN = `#!/usr/bin/env node
// stand-in for envhook (tests of the registration only)
const cmd = process.argv[2];
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
  if (cmd !== 'precreate') return;
  const config = JSON.parse(input);
  config.process.env.push('ENVHOOK_STANDIN=precreate');
  process.stdout.write(JSON.stringify(config));
});
`;

/** Every regular file under `root` (relative path → bytes), and every symlink. */
export function snapshot(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(path.relative(root, p), fs.readFileSync(p));
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
}

export function install({ runtime, root, source, extra = [] }: InstallArgs) {
  return envhook(['install', '--runtime', runtime, '--root', root, '--source', source, '--node', REAL_NODE, ...extra]);
}

export function uninstall({ runtime, root, extra = [] }: Omit<InstallArgs, 'source'>) {
  return envhook(['uninstall', '--runtime', runtime, '--root', root, ...extra]);
}

/** Writes files under a host root (relative path → content). */
export function hostFiles(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
}
