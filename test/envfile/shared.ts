// Finds a file of ../shared, the directory beside the repository that holds SPEC.md and the
// kubelet's parser cases. In a git worktree the repository's own checkout is the main
// worktree, so shared/ is also looked for beside that. Missing: throws, naming where it looked.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

export function sharedFile(name: string): string {
  const candidates = [path.resolve(import.meta.dirname, '../../../shared', name)];
  try {
    const gitCommon = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd: import.meta.dirname,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    candidates.push(path.resolve(gitCommon, '../../shared', name));
  } catch {
    // not a git checkout: only the first place applies
  }
  const found = candidates.find((c) => fs.existsSync(c));
  if (!found) throw new Error(`shared file ${name} not found; looked at ${candidates.join(', ')}`);
  return found;
}

export interface KubeletCase {
  name: string;
  input: string;
  key: string;
  value?: string | null;
  rejected?: boolean;
  reason?: string;
}

export function kubeletCases(): KubeletCase[] {
  const doc = JSON.parse(fs.readFileSync(sharedFile('envfile-kubelet-cases.json'), 'utf8')) as { cases: KubeletCase[] };
  return doc.cases;
}
