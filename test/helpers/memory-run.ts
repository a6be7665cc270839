// A node root whose /run is in memory, as on a real node (systemd mounts a tmpfs there): `<root>/run`
// is a link to a fresh directory of /dev/shm, a tmpfs, removed after the test. For the tests of
// `envhook doctor` and `status`, whose run-dir check would otherwise judge the test directory's
// own file system (a disk on the test machine).
import type { Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';

export function memoryRun(t: Test, root: string): string {
  const dir = fs.mkdtempSync('/dev/shm/envhook-test-run-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(root, { recursive: true });
  fs.symlinkSync(dir, path.join(root, 'run'));
  return dir;
}
