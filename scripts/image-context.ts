// The envhook image without a registry: a build context for Containerfile.scratch (`FROM scratch`),
// so that `podman build` needs no base image. The context holds the Containerfile and rootfs/:
// the single executable and the hooks/ files at the paths the Dockerfile puts them (IMAGE_FILES,
// one list for both), and exactly the shared libraries the executable loads, as this machine's
// dynamic loader resolves them (`ldd`), each at the path the loader looks for it. A Containerfile
// alone cannot do this: COPY cannot follow ldd, and `FROM scratch` has no shell to RUN one.
//   npm run build && npm run image-context -- /tmp/envhook-image
//   podman build -t envhook:0.1.0 /tmp/envhook-image
// (npm runs it with the checkout's Node 24; a machine's own Node 20 cannot run TypeScript.)
// The libraries come from the machine that runs this: build where the image's glibc should come
// from (Debian bookworm for the Dockerfile's image).
// TypeScript with erasable syntax only: Node 24 runs it as it is.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { markIn } from '../src/version.ts';

const REPO = path.resolve(import.meta.dirname, '..');

/** Path in the image → path in this repository (after `npm run build`). The Dockerfile copies the same. */
export const IMAGE_FILES: Readonly<Record<string, string>> = {
  '/opt/envhook/dist/envhook': 'dist/envhook',
  '/opt/envhook/hooks/envhook-runtime': 'hooks/envhook-runtime',
  '/opt/envhook/hooks/envhook-precreate.json': 'hooks/envhook-precreate.json',
  '/opt/envhook/hooks/envhook-createruntime.json': 'hooks/envhook-createruntime.json',
};

export const CONTAINERFILE = path.join(REPO, 'Containerfile.scratch');

/**
 * Programs only the scratch image needs (the Dockerfile's Debian image has them): chroot, with
 * which install runs the node's own containerd or crio inside --root /host (src/oci/runtime-binary.ts).
 */
export const SCRATCH_PROGRAMS: readonly string[] = ['/usr/sbin/chroot'];

/**
 * The shared objects `exe` loads, as absolute paths the loader resolves them to (the program
 * interpreter included; the kernel's vDSO, which has no file, left out). ldd prints
 * `name => /path (0x...)` for a library and `/path (0x...)` for the interpreter.
 */
export function sharedLibraries(exe: string): string[] {
  const out = execFileSync('ldd', [exe], { encoding: 'utf8' });
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    const m = /^\s*(?:\S+ => )?(\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    if (m) libs.push(m[1]!);
    else if (/=> not found/.test(line)) throw new Error(`${exe}: ${line.trim()}`);
  }
  if (!libs.length) throw new Error(`ldd found no shared library of ${exe}: ${out.trim()}`);
  return libs;
}

/**
 * Writes the build context into `dir` (which must not exist or be empty): `Containerfile` and
 * `rootfs/`. Returns every file of the image (image path → where its bytes came from).
 */
export function writeImageContext(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const [to, from] of Object.entries(IMAGE_FILES)) {
    const src = path.join(REPO, from);
    if (!fs.existsSync(src)) throw new Error(`${from} missing: run \`npm run build\` first (it makes the single executable)`);
    files.set(to, src);
  }
  // The libraries' bytes, not their symlinks (/lib64/ld-linux-x86-64.so.2 is one on Debian):
  // the image has none of the directories those point into.
  for (const program of SCRATCH_PROGRAMS) {
    if (!fs.existsSync(program)) throw new Error(`${program} missing on this machine (Debian: coreutils)`);
    files.set(program, program);
  }
  for (const exe of [path.join(REPO, IMAGE_FILES['/opt/envhook/dist/envhook']!), ...SCRATCH_PROGRAMS])
    for (const lib of sharedLibraries(exe)) files.set(lib, fs.realpathSync(lib));
  const rootfs = path.join(dir, 'rootfs');
  for (const [to, from] of files) {
    const dest = path.join(rootfs, to);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(from, dest);
    fs.chmodSync(dest, fs.statSync(from).mode & 0o777);
  }
  fs.writeFileSync(path.join(dir, 'Containerfile'), withLabels(fs.readFileSync(CONTAINERFILE, 'utf8'), imageLabels()));
  return files;
}

/** The OCI labels' values of the build in dist/: package.json's version and license, the executable's commit. */
export function imageLabels(): { VERSION: string; REVISION: string } {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
  // `VERSION (COMMIT)` of the executable the image gets (src/version.ts)
  const mark = markIn(fs.readFileSync(path.join(REPO, IMAGE_FILES['/opt/envhook/dist/envhook']!)));
  return { VERSION: pkg.version, REVISION: /\(([^)]+)\)$/.exec(mark ?? '')?.[1] ?? 'unknown' };
}

/** The Containerfile with its ARG defaults set to `values` (an ARG it does not declare is an error). */
export function withLabels(text: string, values: Record<string, string>): string {
  let out = text;
  for (const [name, value] of Object.entries(values)) {
    const re = new RegExp(`^ARG ${name}=.*$`, 'm');
    if (!re.test(out)) throw new Error(`Containerfile.scratch: no ARG ${name}=`);
    out = out.replace(re, `ARG ${name}=${value}`);
  }
  return out;
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: npm run image-context -- <dir>');
    process.exit(2);
  }
  const files = writeImageContext(path.resolve(dir));
  console.error(
    `wrote ${dir}: Containerfile and rootfs/ (${[...files.keys()].join(', ')})\nnext: podman build -t envhook:${JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version} ${dir}`,
  );
}
