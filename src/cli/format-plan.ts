// The --dry-run plan as text: container, each variable's name and source, removed service
// variables, owners. Never a value: the plan holds none. Each line escaped as errors are (a
// path or file name is the pod author's text).
import { oneLine } from '../errors.ts';
import type { Plan } from '../plan/changes.ts';

export function formatPlan(plan: Plan): string {
  const lines = [`container: ${plan.container ?? '(unnamed)'}`];
  if (plan.sandbox) return lines.concat('sandbox: passed through untouched').map(oneLine).join('\n') + '\n';
  lines.push(`env: ${plan.env.length}`);
  for (const v of plan.env) lines.push(`  set ${v.name} from ${v.source}`);
  for (const v of plan.skipped ?? []) lines.push(`  not set ${v.name}: ${v.source}`);
  lines.push(`removed service variables: ${plan.removed.length}`);
  for (const name of plan.removed) lines.push(`  ${name}`);
  lines.push(`owners: ${plan.owners.length}`);
  for (const o of plan.owners)
    lines.push(`  volume ${JSON.stringify(o.volume)} ${JSON.stringify(o.path)} uid ${o.uid} (host ${o.hostUid})`);
  return lines.map(oneLine).join('\n') + '\n';
}
