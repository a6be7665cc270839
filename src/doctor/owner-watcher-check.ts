// Volume owners (envhook.io/volumeOwners) hold across the kubelet's rewrites only while a watcher
// runs: the NRI plugin in NRI mode, `envhook watch` on shim nodes (docs/ownership.md). Where no
// pod has asked for owners, nothing needs to run.
import fs from 'node:fs';
import { podUidOfRecord } from '../watch/record.ts';
import { recordsDir } from '../watch/run-dir.ts';
import { ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';
import type { PluginView } from './plugin-state.ts';
import { envhookPids } from './procs.ts';

const CHECK = 'owner-watcher';

/** One line: the NRI plugin's watcher and, where the shim is installed too, `envhook watch`'s, joined. */
export function ownerWatcherCheck(node: NodeView, plugin: PluginView): CheckResult[] {
  const parts: CheckResult[] = [];
  if (node.installs.some((i) => i.mode === 'nri') || plugin.runsAs !== null) {
    const o = node.status?.owners;
    if (plugin.state !== 'connected')
      parts.push(skipped(CHECK, 'the NRI plugin, which watches volume owners in NRI mode, is not connected (see plugin)'));
    else parts.push(ok(CHECK, `the NRI plugin watches volume owners${o ? ` (${o.pods} pods, ${o.volumes} volumes)` : ''}`));
  }
  if (node.installs.some((i) => i.mode === 'shim') || parts.length === 0) parts.push(shimWatcher(node));
  return [joined(parts)];
}

/** The worst state of the parts (problem, then skipped, then ok), their findings in order, the problem's remedy. */
function joined(parts: CheckResult[]): CheckResult {
  if (parts.length === 1) return parts[0]!;
  const state = (['problem', 'skipped', 'ok'] as const).find((s) => parts.some((p) => p.state === s))!;
  const todo = parts.find((p) => p.todo)?.todo;
  return { check: CHECK, state, what: parts.map((p) => p.what).join('; '), ...(todo ? { todo } : {}) };
}

/** Shim nodes: the shim records each pod's owners in <runDir>/owners for `envhook watch`. */
function shimWatcher(node: NodeView): CheckResult {
  const dir = recordsDir(node.settings.runDir!);
  let pods = 0;
  try {
    pods = fs.readdirSync(node.real(dir)).filter((n) => podUidOfRecord(n) !== undefined).length;
  } catch {
    /* no records directory: no pod asked */
  }
  const pids = envhookPids(node.root, 'watch');
  if (pids.length) return ok(CHECK, `envhook watch runs (pid ${pids.join(', ')}); ${pods} pods recorded volume owners in ${dir}`);
  if (pods === 0) return ok(CHECK, `no pod recorded volume owners in ${dir}: envhook watch not needed yet`);
  return problem(
    CHECK,
    `${pods} pods recorded volume owners in ${dir} but no envhook watch runs: their files go back to root at the kubelet's next rewrite`,
    'run envhook watch as a service of the node (docs/ownership.md)',
  );
}
