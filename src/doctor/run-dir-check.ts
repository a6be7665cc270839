// The run directory holds the owned copies of secret volumes: it must be in memory (tmpfs or
// ramfs), as the kubelet keeps those volumes (watch/run-dir-memory.ts). Judged where it is under
// --root, or, not made yet, where it will be made (the nearest directory above it).
import { errnoReason } from '../errors.ts';
import { onDiskWhat, runDirStorage, type RunDirStorage } from '../watch/run-dir-memory.ts';
import { ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';

const CHECK = 'run-dir';

export function runDirCheck(node: NodeView): CheckResult {
  const runDir = node.settings.runDir!;
  let s: RunDirStorage;
  try {
    s = runDirStorage(runDir, node.real);
  } catch (err) {
    return skipped(CHECK, `the file system of ${runDir} cannot be read: ${errnoReason(err)}`);
  }
  const made = s.at === runDir;
  if (s.inMemory)
    return ok(
      CHECK,
      `${made ? `${runDir} is on ${s.type}` : `${runDir} will be made on ${s.type} (${s.at})`}: owned copies stay in memory`,
    );
  return problem(
    CHECK,
    onDiskWhat(runDir, s, made ? 'are written' : 'would be written'),
    `mount a tmpfs at ${runDir}, or set runDir in ${node.settingsFile} to a directory on one (runDirOnDisk "refuse" makes envhook refuse to write copies there)`,
  );
}
