// The Go baseline of bench row 10: bench/go-plugin/main.go (ours) built against NRI's own Go
// stub, with Go and NRI's Go packages from Debian sid (scripts/debian-sid.mjs: downloaded with
// their dependencies into a cache, never installed), in GOPATH mode as Debian lays them out.
// Returns the binary's path, or { skipped } with the reason when it cannot be had.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sidCacheDir, sidClosure } from '../scripts/debian-sid.mjs';
import { REPO } from './cli.mjs';

const GO = 'golang-1.27-go';

export function goPlugin() {
  const out = path.join(sidCacheDir(), 'go-plugin', 'go-plugin');
  const source = path.join(REPO, 'bench/go-plugin/main.go');
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs >= fs.statSync(source).mtimeMs) return { bin: out };
  try {
    const root = sidClosure('go-nri', [GO, 'golang-github-containerd-nri-dev'], /^golang-/);
    const goroot = path.join(root, 'usr/lib/go-1.27');
    const work = path.join(sidCacheDir(), 'go-plugin');
    fs.mkdirSync(path.join(work, 'src/envhookbench'), { recursive: true });
    fs.copyFileSync(source, path.join(work, 'src/envhookbench/main.go'));
    const env = {
      PATH: process.env.PATH,
      HOME: work,
      GOROOT: goroot,
      GOPATH: `${work}:${path.join(root, 'usr/share/gocode')}`,
      GO111MODULE: 'off',
      GOTOOLCHAIN: 'local',
      GOCACHE: path.join(work, 'cache'),
      GOFLAGS: '',
    };
    execFileSync(path.join(goroot, 'bin/go'), ['build', '-o', out, 'envhookbench'], {
      cwd: work,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return { bin: out };
  } catch (err) {
    return {
      skipped: `the Go baseline could not be built (${String(err.stderr ?? err.message)
        .trim()
        .split('\n')
        .at(-1)})`,
    };
  }
}
