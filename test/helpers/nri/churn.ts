// Continuous annotated pod churn over CRI, as a busy node sees it while envhook nri is killed
// and replaced: a new pod every INTERVAL_MS (RunPodSandbox, CreateContainer of a container whose
// pod asks for a variable from an env file, StartContainer), each container classified by its
// PID 1's environment (the variable there or not), then removed. A pod is held until the kill
// driver has checked a registration containerd logged after its CreateContainer returned
// (advance()), so every container created while envhook was away still runs at the Synchronize
// that must report it.
// Also: containerd's own log of the plugin's registrations and closes, read in order.
import { APPLIED_KEY } from '../../../src/k8s/annotation-keys.ts';
import { DB_FILES, raw } from '../cri/cases.ts';
import type { CriContainerd } from '../cri/containerd.ts';
import { runPod, type KubeletPod } from '../cri/pod.ts';
import { procEnviron } from '../proc.ts';
import { sleep } from '../wait.ts';

const INTERVAL_MS = 100;
/** The variable the churn pods ask for, and its value from DB_FILES. */
const VARIABLE = ['DB', 'db.internal'] as const;
const ANNOTATIONS = raw({
  'envhook.io/env': { app: [{ name: VARIABLE[0], valueFrom: { fileKeyRef: { volumeName: 'config', path: 'db.env', key: 'DB_HOST' } } }] },
});
const CONTAINER = { name: 'app', command: ['sleep', '3600'], env: { POD_ENV: 'kept' } };

export interface ChurnContainer {
  name: string;
  launchedAt: number;
  /** CreateContainer sent, answered (ms since the epoch). */
  created?: [number, number];
  id?: string;
  /** PID 1 has the variable with its value. */
  env?: boolean;
  /** Without the variable: whether its stored spec has envhook's applied mark all the same (never, unless the env was lost after NRI). */
  marked?: boolean;
  error?: string;
  done: boolean;
}

export interface Churn {
  containers: ChurnContainer[];
  /** Milliseconds between consecutive launches. */
  gaps(): number[];
  maxAlive(): number;
  /** The registration at `at` is checked: pods whose CreateContainer returned before it are removed. */
  advance(at: number): void;
  /** Resolves once every container whose CreateContainer returned before `at` is classified. */
  settled(at: number): Promise<void>;
  /** No more launches; every pod removed. */
  stop(): Promise<void>;
}

/** Starts the churn; at most `cap` pods at once (a machine that cannot keep up makes the gaps longer: see gaps()). */
export function startChurn(c: CriContainerd, kubeletRoot: string, { intervalMs = INTERVAL_MS, cap = 24 } = {}): Churn {
  const containers: ChurnContainer[] = [];
  const launches: number[] = [];
  const lives = new Set<Promise<void>>();
  let releasedAt = -Infinity;
  let stopping = false;
  let alive = 0;
  let maxAlive = 0;
  let freed: (() => void) | undefined;
  let release: Array<{ at: number; go: () => void }> = [];
  const released = (k: ChurnContainer) => {
    const at = k.created?.[1] ?? -Infinity; // never created: nothing to report
    return at < releasedAt ? Promise.resolve() : new Promise<void>((go) => release.push({ at, go }));
  };

  async function life(k: ChurnContainer): Promise<void> {
    let pod: KubeletPod | undefined;
    try {
      pod = await runPod(c, kubeletRoot, { name: k.name, handler: '', annotations: ANNOTATIONS, emptyDirs: { config: DB_FILES } });
      const sent = Date.now();
      k.id = await pod.create(CONTAINER);
      k.created = [sent, Date.now()];
      await pod.start(k.id);
      const pid = await pod.pid(k.id);
      c.track(pid);
      k.env = procEnviron(pid).get(VARIABLE[0]) === VARIABLE[1];
      if (!k.env) k.marked = APPLIED_KEY in (await pod.specAnnotations(k.id));
    } catch (err) {
      k.error = (err as Error).message;
    } finally {
      k.done = true;
    }
    await released(k);
    await pod?.remove().catch((err: Error) => (k.error ??= `remove: ${err.message}`));
  }

  const loop = (async () => {
    let next = Date.now();
    for (let n = 0; !stopping; n++) {
      const wait = next - Date.now();
      if (wait > 0) await sleep(wait);
      while (alive >= cap && !stopping) await new Promise<void>((r) => (freed = r));
      if (stopping) break;
      const now = Date.now();
      launches.push(now);
      // On time, without a burst to catch up after a late turn.
      next = Math.max(next + intervalMs, now);
      const k: ChurnContainer = { name: `churn${n}-${process.pid}`, launchedAt: now, done: false };
      containers.push(k);
      alive += 1;
      maxAlive = Math.max(maxAlive, alive);
      const p = life(k).finally(() => {
        alive -= 1;
        lives.delete(p);
        freed?.();
      });
      lives.add(p);
    }
  })();

  return {
    containers,
    gaps: () => launches.slice(1).map((t, i) => t - launches[i]!),
    maxAlive: () => maxAlive,
    advance(at) {
      releasedAt = Math.max(releasedAt, at);
      const go = release.filter((r) => r.at < releasedAt);
      release = release.filter((r) => r.at >= releasedAt);
      for (const r of go) r.go();
    },
    async settled(at) {
      while (containers.some((k) => !k.done && (k.created === undefined ? Date.now() < at : k.created[1] < at))) await sleep(20);
    },
    async stop() {
      stopping = true;
      freed?.();
      await loop;
      releasedAt = Infinity;
      for (const r of release) r.go();
      release = [];
      while (lives.size > 0) await Promise.all([...lives]);
    },
  };
}

export interface NriLogEvent {
  kind: 'registered' | 'closed';
  /** containerd's time of the line (ms since the epoch). */
  at: number;
  /** The peer's pid containerd names in a registration (`external:50-envhook[PID]`). */
  pid?: number;
  line: string;
}

const TIME = /time="([^"]+)"/;
const REGISTERED = /plugin \\"(?:external|pre-connected):50-envhook\[(\d+)\]\\" registered as \\"50-envhook\\"/;
const CLOSED = /connection to plugin \\"50-envhook\\" closed/;

/** The plugin's registrations and closed connections in containerd's log, in its order. */
export function nriLogEvents(log: string): NriLogEvent[] {
  const out: NriLogEvent[] = [];
  for (const line of log.split('\n')) {
    const reg = REGISTERED.exec(line);
    if (!reg && !CLOSED.test(line)) continue;
    const at = Date.parse(TIME.exec(line)?.[1] ?? '');
    out.push(reg ? { kind: 'registered', at, pid: Number(reg[1]), line } : { kind: 'closed', at, line });
  }
  return out;
}

/**
 * Registrations containerd logged while another connection of 50-envhook was still open (it had
 * logged that one's registration and not yet its close), and closes with none open: each
 * registration must follow the close of the one before. Empty when there were none.
 */
export function overlaps(events: readonly NriLogEvent[]): string[] {
  const found: string[] = [];
  let open = 0;
  for (const e of events) {
    if (e.kind === 'registered') {
      if (open > 0) found.push(`registered while ${open} open: ${e.line}`);
      open += 1;
    } else if (open === 0) found.push(`closed with none open: ${e.line}`);
    else open -= 1;
  }
  return found;
}

/** The nearest-rank percentile of `values` (p in 0..100). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}
