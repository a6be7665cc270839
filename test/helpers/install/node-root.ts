// A node's root for tests of `--root`: a temporary directory holding real binaries at the node's
// paths with exactly the shared libraries they load (ldd, as scripts/image-context.ts finds them
// for the image), so a binary run inside it with chroot starts as on the node.
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { sharedLibraries } from '../../../scripts/image-context.ts';

/** A root with `bins` (node path → a binary of this machine) and their libraries. */
export function nodeRootWith(t: Test, bins: Record<string, string>): string {
  const root = path.join(t.testdir({ root: {} }), 'root');
  addToRoot(root, bins);
  return root;
}

export function addToRoot(root: string, bins: Record<string, string>): void {
  const files = new Map(Object.entries(bins));
  for (const from of Object.values(bins)) for (const lib of sharedLibraries(from)) files.set(lib, fs.realpathSync(lib));
  for (const [to, from] of files) {
    const dest = path.join(root, to);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(from, dest);
    fs.chmodSync(dest, fs.statSync(from).mode & 0o777);
  }
}

/**
 * `scripts` (node path → sh text) made executable in `root`, with this machine's dash as the
 * root's /bin/sh, so that a runtime stand-in is run inside the root with chroot as the real one is.
 */
export function addScriptsToRoot(root: string, scripts: Record<string, string>): void {
  addToRoot(root, { '/bin/sh': fs.realpathSync('/bin/sh') });
  for (const [to, text] of Object.entries(scripts)) {
    const dest = path.join(root, to);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.writeFileSync(dest, text, { mode: 0o755 });
  }
}
