// Prometheus text exposition (format 0.0.4) of the supervisor's snapshot: the status counts, the
// connected gauge and the CreateContainer duration histogram. Written by hand (a dozen lines of
// output need no client library in the resident process). Every family has HELP and TYPE;
// counters end in _total, durations and times are in seconds. Label values are runtime names
// and versions and fixed results, never anything from a pod.
import type { NriStatus } from '../status-file.ts';
import { LATENCY_BUCKETS } from '../../watch/latency.ts';

/**
 * Upper bounds in seconds: fine buckets below a millisecond and up to tens of milliseconds,
 * where CreateContainer answers fall (bench row 8: without annotations, a typical pod, a cold
 * cache); the top buckets catch what nears the runtime's 2 s request timeout.
 */
export const DURATION_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

export class DurationHistogram {
  readonly bounds: readonly number[];
  /** Per bucket, not cumulative; the last slot is +Inf. */
  private readonly counts: number[];
  private total = 0;
  private n = 0;

  constructor(bounds: readonly number[] = DURATION_BUCKETS) {
    this.bounds = bounds;
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    const s = Math.max(0, seconds);
    let i = 0;
    while (i < this.bounds.length && s > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.total += s;
    this.n++;
  }

  /** Cumulative counts per bound (le), the last one +Inf = count; sum in seconds. */
  snapshot(): { buckets: { le: number; count: number }[]; sum: number; count: number } {
    let acc = 0;
    const buckets = this.counts.map((c, i) => ({ le: i < this.bounds.length ? this.bounds[i]! : Infinity, count: (acc += c) }));
    return { buckets, sum: this.total, count: this.n };
  }
}

type Labels = Record<string, string>;
type Sample = [suffix: string, labels: Labels, value: number];

interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  help: string;
  samples: Sample[];
}

/** A family of one sample without labels. */
const one = (name: string, type: Family['type'], help: string, value: number): Family => ({
  name,
  type,
  help,
  samples: [['', {}, value]],
});

export function renderMetrics(status: NriStatus, histogram: DurationHistogram): string {
  const o = status.owners;
  const families: Family[] = [
    ...pluginFamilies(status, histogram),
    ...(o ? ownerFamilies(o) : []),
    ...(o?.copies !== undefined ? copyFamilies(o) : []),
    ...(status.runtime ? [runtimeFamily(status, status.runtime)] : []),
  ];
  return families.map(renderFamily).join('');
}

/** The plugin's connection, its workers and the CreateContainer requests it answered. */
function pluginFamilies(status: NriStatus, histogram: DurationHistogram): Family[] {
  const c = status.counts;
  return [
    one(
      'envhook_nri_connected',
      'gauge',
      'Whether the plugin is registered with the runtime now (1) or not (0).',
      status.connected ? 1 : 0,
    ),
    one(
      'envhook_nri_start_time_seconds',
      'gauge',
      'Start time of the envhook nri supervisor, seconds since the Unix epoch.',
      Date.parse(status.startedAt) / 1000,
    ),
    one('envhook_nri_registrations_total', 'counter', 'Registrations with the runtime since the supervisor started.', c.registrations),
    one('envhook_nri_worker_restarts_total', 'counter', 'Restarts of the NRI worker process by the supervisor.', c.workerRestarts),
    one('envhook_nri_hangs_total', 'counter', 'Workers that stopped answering and were replaced.', c.hangs),
    {
      name: 'envhook_nri_requests_total',
      type: 'counter',
      help: 'CreateContainer requests answered, by result: adjusted (env or owners applied), empty (nothing asked), refused (envhook failed the container), error (the request failed inside envhook).',
      samples: (
        [
          ['adjusted', c.adjusted],
          ['empty', c.empty],
          ['refused', c.refused],
          ['error', c.errors],
        ] as const
      ).map(([result, v]) => ['', { result }, v]),
    },
    histogramFamily('envhook_nri_request_duration_seconds', 'Time envhook took to answer a CreateContainer request.', histogram),
    one(
      'envhook_nri_missed_containers_total',
      'counter',
      'Running containers found after a registration that asked for envhook but were created without it.',
      c.missed,
    ),
    one(
      'envhook_nri_containers_without_env',
      'gauge',
      'Containers running now without the env they asked for: created while the plugin was not registered, not evicted (envhook status names them).',
      status.unapplied?.length ?? 0,
    ),
    one(
      'envhook_nri_evictions_total',
      'counter',
      'Missed containers stopped over CRI so that the kubelet creates them again with their env.',
      c.evicted,
    ),
    one(
      'envhook_nri_eviction_failures_total',
      'counter',
      'Evictions of missed containers that failed (CRI socket unusable, error status, no answer in time).',
      c.evictionsFailed ?? 0,
    ),
    one('envhook_owner_rechowns_total', 'counter', "Volume files given their owner again after the kubelet's rewrites.", c.ownerRechowns),
  ];
}

/** The owner watcher: what it watches now, and what it did. */
function ownerFamilies(o: NonNullable<NriStatus['owners']>): Family[] {
  return [
    one('envhook_owner_watched_pods', 'gauge', 'Pods whose volume owners are watched now.', o.pods),
    one('envhook_owner_watched_volumes', 'gauge', 'Volumes whose owners are watched now.', o.volumes),
    one('envhook_owner_inotify_watches', 'gauge', 'inotify watches the owner watcher holds now.', o.watches),
    one('envhook_owner_polled_volumes', 'gauge', 'Watched volumes polled for want of an inotify watch.', o.polled),
    {
      name: 'envhook_owner_files_owned_total',
      type: 'counter',
      help: "Volume files given their owner by the watcher after the kubelet's rewrites, by when: before_swap (before ..data pointed at them), after_swap (visible, still root's, for a moment).",
      samples: [
        ['', { when: 'before_swap' }, o.ownedBeforeSwap],
        ['', { when: 'after_swap' }, o.ownedAfterSwap],
      ],
    },
    {
      name: 'envhook_owner_watches_refused_total',
      type: 'counter',
      help: "inotify watches not set, by whom: kernel (its inotify limit), bound (envhook's per-pod and per-node bounds); those volumes are polled.",
      samples: [
        ['', { by: 'kernel' }, o.refusedByKernel],
        ['', { by: 'bound' }, o.refusedByBound],
      ],
    },
  ];
}

/** The runtime the plugin last registered with. */
function runtimeFamily(status: NriStatus, runtime: NonNullable<NriStatus['runtime']>): Family {
  const labels: Labels = { runtime: runtime.name, version: runtime.version };
  if (status.nriVersion !== undefined) labels.nri_version = status.nriVersion;
  return {
    name: 'envhook_nri_runtime_info',
    type: 'gauge',
    help: 'The runtime the plugin last registered with (always 1).',
    samples: [['', labels, 1]],
  };
}

/** The owned copies (docs/ownership.md): held now, updated, failed, and how long after the kubelet's swap. */
function copyFamilies(o: NonNullable<NriStatus['owners']>): Family[] {
  const gauge = (name: string, help: string, value: number): Family => ({ name, type: 'gauge', help, samples: [['', {}, value]] });
  const counter = (name: string, help: string, value: number): Family => ({ name, type: 'counter', help, samples: [['', {}, value]] });
  const l = o.copyLatency ?? { buckets: [], sum: 0, count: 0 };
  const samples: Sample[] = LATENCY_BUCKETS.map((le, i) => ['_bucket', { le: formatValue(le) }, l.buckets[i] ?? 0]);
  samples.push(['_bucket', { le: '+Inf' }, l.count], ['_sum', {}, l.sum], ['_count', {}, l.count]);
  return [
    gauge('envhook_owner_copies', "Volumes containers read through envhook's owned copy now.", o.copies ?? 0),
    gauge(
      'envhook_owner_copy_bytes',
      'Bytes of file content of all owned copies under the run directory now (the node budget counts these).',
      o.copyBytes ?? 0,
    ),
    gauge('envhook_owner_copy_files', 'Files of all owned copies under the run directory now.', o.copyFiles ?? 0),
    counter('envhook_owner_copy_updates_total', "Owned copies swapped in after the kubelet's rewrites.", o.copyUpdates ?? 0),
    counter(
      'envhook_owner_copy_failures_total',
      'Owned copies not made after a rewrite (the container keeps reading the last good copy).',
      o.copyFailures ?? 0,
    ),
    {
      name: 'envhook_owner_copy_update_latency_seconds',
      type: 'histogram',
      help: "Time from the kubelet's ..data swap to the owned copy's.",
      samples,
    },
  ];
}

function histogramFamily(name: string, help: string, h: DurationHistogram): Family {
  const { buckets, sum, count } = h.snapshot();
  const samples: Sample[] = buckets.map((b) => ['_bucket', { le: formatValue(b.le) }, b.count]);
  samples.push(['_sum', {}, sum], ['_count', {}, count]);
  return { name, type: 'histogram', help, samples };
}

function renderFamily(f: Family): string {
  const lines = [`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`];
  for (const [suffix, labels, value] of f.samples) lines.push(`${f.name}${suffix}${renderLabels(labels)} ${formatValue(value)}`);
  return lines.join('\n') + '\n';
}

function renderLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** Go's ParseFloat spellings, which Prometheus reads: +Inf, -Inf, NaN, JS's own for the rest. */
function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

const escapeHelp = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
