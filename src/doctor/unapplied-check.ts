// Containers that run without the env they asked for: created while the NRI plugin was not
// registered (NRI fails open), not evicted and still running (their process checked in /proc
// under --root: src/nri/unapplied.ts). Each is a problem of its own, naming the pod, its
// namespace and the container, with what to do: delete the pod (the kubelet creates it again,
// through envhook), or let envhook evict such containers. Nothing listed: ok while a plugin's
// status file is there; without one, skipped where NRI mode is installed, else not a check at all.
import path from 'node:path';
import { oneLine } from '../errors.ts';
import { EVICT_KEY } from '../k8s/annotation-keys.ts';
import { stillRuns } from '../nri/unapplied.ts';
import type { UnappliedContainer } from '../nri/status-file.ts';
import { ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';

const CHECK = 'unapplied';

export function unappliedChecks(node: NodeView): CheckResult[] {
  const s = node.status;
  // a node without NRI mode and no plugin running: nothing to look at, nothing said
  if (!s) return node.installs.some((i) => i.mode === 'nri') ? [skipped(CHECK, `no NRI plugin status file ${node.statusFile}`)] : [];
  const procRoot = path.join(node.root, 'proc');
  const running = (s.unapplied ?? []).filter((u) => stillRuns(u, procRoot));
  if (running.length === 0) return [ok(CHECK, 'no container runs without the env it asked for')];
  return running.map((u) => problem(CHECK, what(u), todo(node, u)));
}

const what = (u: UnappliedContainer): string =>
  `container ${oneLine(u.container)} of pod ${oneLine(u.pod)} in namespace ${oneLine(u.namespace)} runs without its env (created while the NRI plugin was not registered)`;

function todo(node: NodeView, u: UnappliedContainer): string {
  const del = `kubectl delete pod ${oneLine(u.pod)} -n ${oneLine(u.namespace)} (the kubelet creates it again, through envhook)`;
  if (u.evictionFailed || node.settings.evictUnapplied) return `its eviction failed (see the plugin's log); ${del}`;
  return `${del}, or let envhook evict such containers: the pod annotation ${EVICT_KEY}: "true", or evictUnapplied in ${node.settingsFile}`;
}
