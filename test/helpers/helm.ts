// The real helm (v4, from the devDependency's layer.zip, extracted once into .cache/ by
// scripts/helm-binary.ts) run on the repository's chart: the exit status, the output, and the
// rendered objects parsed, as an admin's `helm template` gives them.
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { REPO } from './bundle.ts';
import { helmBinary } from '../../scripts/helm-binary.ts';
import { CHART } from '../../scripts/render-examples.ts';

export const HELM = helmBinary();

export function helm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(HELM, args, { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `helm template envhook charts/envhook -n kube-system --set …` as Kubernetes objects; throws with helm's stderr on a failure. */
export function renderChart(set: string[] = [], extra: string[] = []): any[] {
  const r = helm(['template', 'envhook', CHART, '--namespace', 'kube-system', ...set.flatMap((s) => ['--set', s]), ...extra]);
  if (r.status !== 0) throw new Error(`helm template ${set.join(' ')}: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS())
    .filter(Boolean);
}

/** The one object of that kind (and name suffix) in a rendering. */
export function objectOf(objects: any[], kind: string, nameSuffix = ''): any {
  const found = objects.filter((o) => o.kind === kind && String(o.metadata?.name).endsWith(nameSuffix));
  if (found.length !== 1) throw new Error(`${found.length} ${kind} objects named *${nameSuffix}`);
  return found[0];
}
