// The Prometheus text exposition, read back by a strict parser of format 0.0.4 written here:
// every sample belongs to a family with one HELP and one TYPE before it, names and label names
// are valid, counters end in _total, a histogram's buckets are cumulative with +Inf = _count.
import t from 'tap';
import { DURATION_BUCKETS, DurationHistogram, renderMetrics } from '../../../src/nri/supervisor/metrics.ts';
import { sampleStatus } from '../../helpers/nri/status.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  help: string;
  type: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^(?:[+-]?Inf|NaN|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$/;

function parseValue(s: string): number {
  if (!FLOAT.test(s)) throw new Error(`bad value ${s}`);
  return s === '+Inf' || s === 'Inf' ? Infinity : s === '-Inf' ? -Infinity : Number(s);
}

/** Label set `{k="v",…}` at text[i] (i at '{'): the labels and the index after '}'. */
function parseLabels(text: string, i: number): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  i++;
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i);
    const name = text.slice(i, eq);
    if (!LABEL.test(name) || name.startsWith('__')) throw new Error(`bad label name ${name}`);
    if (name in labels) throw new Error(`label ${name} twice`);
    if (text[eq + 1] !== '"') throw new Error('label value not quoted');
    let v = '';
    let j = eq + 2;
    for (; text[j] !== '"'; j++) {
      if (j >= text.length) throw new Error('unterminated label value');
      if (text[j] === '\\') {
        const e = text[++j];
        if (e === 'n') v += '\n';
        else if (e === '\\' || e === '"') v += e;
        else throw new Error(`bad escape \\${e}`);
      } else v += text[j];
    }
    labels[name] = v;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error('bad label separator');
  }
  return [labels, i + 1];
}

function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('no final newline');
  const families = new Map<string, Family>();
  let current: string | undefined;
  const seen = new Set<string>();
  for (const line of text.slice(0, -1).split('\n')) {
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad family name ${name}`);
      if (kind === 'HELP') {
        if (families.has(name)) throw new Error(`family ${name} twice`);
        if (rest.trim() === '') throw new Error(`empty HELP for ${name}`);
        families.set(name, { help: rest, type: '', samples: [] });
        current = name;
      } else {
        const f = families.get(name);
        if (!f || current !== name || f.type !== '' || f.samples.length) throw new Error(`TYPE of ${name} not right after its HELP`);
        if (!['counter', 'gauge', 'histogram'].includes(rest)) throw new Error(`type ${rest}`);
        f.type = rest;
      }
      continue;
    }
    if (line.startsWith('#') || line === '') throw new Error(`unexpected line ${JSON.stringify(line)}`);
    const m = /^([^{ ]+)/.exec(line)!;
    const name = m[1]!;
    if (!NAME.test(name)) throw new Error(`bad sample name ${name}`);
    let [labels, i] = [{} as Record<string, string>, name.length];
    if (line[i] === '{') [labels, i] = parseLabels(line, i);
    if (line[i] !== ' ') throw new Error(`no space before the value: ${line}`);
    const value = parseValue(line.slice(i + 1));
    const f = current === undefined ? undefined : families.get(current);
    if (!f || f.type === '') throw new Error(`sample ${name} without HELP and TYPE`);
    const allowed = f.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => current + s) : [current];
    if (!allowed.includes(name)) throw new Error(`sample ${name} in family ${current}`);
    const key = name + JSON.stringify(Object.entries(labels).sort());
    if (seen.has(key)) throw new Error(`series ${key} twice`);
    seen.add(key);
    f.samples.push({ name, labels, value });
  }
  for (const [name, f] of families) {
    if (f.type === '') throw new Error(`${name} has no TYPE`);
    if (f.samples.length === 0) throw new Error(`${name} has no sample`);
    if (f.type === 'counter') {
      if (!name.endsWith('_total')) throw new Error(`counter ${name} does not end in _total`);
      if (f.samples.some((s) => !(s.value >= 0))) throw new Error(`counter ${name} negative`);
    }
    if (f.type === 'histogram') checkHistogram(name, f);
  }
  return families;
}

function checkHistogram(name: string, f: Family): void {
  const buckets = f.samples.filter((s) => s.name === `${name}_bucket`);
  const count = f.samples.find((s) => s.name === `${name}_count`);
  if (!count || !f.samples.some((s) => s.name === `${name}_sum`)) throw new Error(`${name}: _sum or _count missing`);
  let le = -Infinity;
  let acc = 0;
  for (const b of buckets) {
    const bound = parseValue(b.labels.le ?? 'missing');
    if (!(bound > le)) throw new Error(`${name}: le not increasing`);
    if (b.value < acc) throw new Error(`${name}: buckets not cumulative`);
    [le, acc] = [bound, b.value];
  }
  if (le !== Infinity) throw new Error(`${name}: no +Inf bucket`);
  if (acc !== count.value) throw new Error(`${name}: +Inf bucket ${acc} != _count ${count.value}`);
}

const value = (fams: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
  [...fams.values()].flatMap((f) => f.samples).find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;

t.test('the parser refuses what Prometheus would', async (t) => {
  const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total 1\n';
  t.ok(parseExposition(ok));
  t.throws(() => parseExposition('a_total 1\n'), /without HELP and TYPE/);
  t.throws(() => parseExposition(ok.replace('counter', 'gauge').replace(/a_total/g, 'a') + 'b 1\n'), /sample b in family a/);
  t.throws(() => parseExposition(ok.replace(/a_total/g, 'a')), /does not end in _total/);
  t.throws(() => parseExposition(ok.replace('a_total 1', 'a_total{x="1} 1')), /unterminated/);
  t.throws(() => parseExposition(ok.replace('a_total 1', 'a_total one')), /bad value/);
  const h = '# HELP h H.\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n';
  t.throws(() => parseExposition(h), /not cumulative/);
  t.throws(
    () => parseExposition(h.replace('h_bucket{le="1"} 2', 'h_bucket{le="1"} 1').replace('h_count 1', 'h_count 2')),
    /\+Inf bucket 1 != _count 2/,
  );
});

t.test('every family, named with its unit, from the status and the histogram', async (t) => {
  const hist = new DurationHistogram();
  for (const s of [0.00005, 0.0003, 0.0007, 0.001, 0.003, 3, NaN, -1]) hist.observe(s);
  const status = sampleStatus({
    counts: {
      registrations: 4,
      workerRestarts: 3,
      hangs: 1,
      adjusted: 20,
      empty: 100,
      refused: 2,
      errors: 1,
      missed: 5,
      evicted: 4,
      evictionsFailed: 1,
      ownerRechowns: 7,
    },
    owners: { pods: 3, volumes: 5, watches: 6, polled: 1, ownedBeforeSwap: 5, ownedAfterSwap: 2, refusedByKernel: 1, refusedByBound: 9 },
    unapplied: [
      { id: 'c1', container: 'app', pod: 'web', namespace: 'ns' },
      { id: 'c2', container: 'app', pod: 'api', namespace: 'ns' },
    ],
  });
  const fams = parseExposition(renderMetrics(status, hist));
  t.same(
    [...fams.entries()].map(([n, f]) => `${n} ${f.type}`),
    [
      'envhook_nri_connected gauge',
      'envhook_nri_start_time_seconds gauge',
      'envhook_nri_registrations_total counter',
      'envhook_nri_worker_restarts_total counter',
      'envhook_nri_hangs_total counter',
      'envhook_nri_requests_total counter',
      'envhook_nri_request_duration_seconds histogram',
      'envhook_nri_missed_containers_total counter',
      'envhook_nri_containers_without_env gauge',
      'envhook_nri_evictions_total counter',
      'envhook_nri_eviction_failures_total counter',
      'envhook_owner_rechowns_total counter',
      'envhook_owner_watched_pods gauge',
      'envhook_owner_watched_volumes gauge',
      'envhook_owner_inotify_watches gauge',
      'envhook_owner_polled_volumes gauge',
      'envhook_owner_files_owned_total counter',
      'envhook_owner_watches_refused_total counter',
      'envhook_nri_runtime_info gauge',
    ],
  );
  t.equal(value(fams, 'envhook_nri_connected'), 1);
  t.equal(value(fams, 'envhook_nri_start_time_seconds'), Date.parse('2026-11-26T10:00:00.000Z') / 1000);
  t.equal(value(fams, 'envhook_nri_registrations_total'), 4);
  t.equal(value(fams, 'envhook_nri_worker_restarts_total'), 3);
  t.equal(value(fams, 'envhook_nri_hangs_total'), 1);
  for (const [result, n] of [
    ['adjusted', 20],
    ['empty', 100],
    ['refused', 2],
    ['error', 1],
  ] as const) {
    t.equal(value(fams, 'envhook_nri_requests_total', { result }), n, result);
  }
  t.equal(value(fams, 'envhook_nri_missed_containers_total'), 5);
  t.equal(value(fams, 'envhook_nri_containers_without_env'), 2, 'the containers listed running without their env');
  t.equal(value(fams, 'envhook_nri_evictions_total'), 4);
  t.equal(value(fams, 'envhook_nri_eviction_failures_total'), 1);
  t.equal(value(fams, 'envhook_owner_rechowns_total'), 7);
  t.equal(value(fams, 'envhook_owner_watched_pods'), 3);
  t.equal(value(fams, 'envhook_owner_watched_volumes'), 5);
  t.equal(value(fams, 'envhook_owner_inotify_watches'), 6);
  t.equal(value(fams, 'envhook_owner_polled_volumes'), 1);
  t.equal(value(fams, 'envhook_owner_files_owned_total', { when: 'before_swap' }), 5);
  t.equal(value(fams, 'envhook_owner_files_owned_total', { when: 'after_swap' }), 2);
  t.equal(value(fams, 'envhook_owner_watches_refused_total', { by: 'kernel' }), 1);
  t.equal(value(fams, 'envhook_owner_watches_refused_total', { by: 'bound' }), 9);
  t.equal(value(fams, 'envhook_nri_runtime_info', { runtime: 'containerd', version: '2.1.9', nri_version: 'v0.8.0' }), 1);
  // NaN is dropped, -1 counts as 0; a bound is inclusive (le).
  const d = 'envhook_nri_request_duration_seconds';
  t.equal(value(fams, `${d}_count`), 7);
  t.equal(value(fams, `${d}_sum`), 0.00005 + 0.0003 + 0.0007 + 0.001 + 0.003 + 3);
  const cumulative = [2, 2, 3, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7];
  t.same(
    fams
      .get(d)!
      .samples.filter((s) => s.name === `${d}_bucket`)
      .map((s) => [s.labels.le, s.value]),
    [...DURATION_BUCKETS.map(String), '+Inf'].map((le, i) => [le, cumulative[i]]),
  );
});

t.test('not connected, no runtime yet, an empty histogram', async (t) => {
  const status = sampleStatus({ connected: false });
  delete status.runtime;
  delete status.nriVersion;
  const fams = parseExposition(renderMetrics(status, new DurationHistogram()));
  t.equal(value(fams, 'envhook_nri_connected'), 0);
  t.notOk(fams.has('envhook_nri_runtime_info'), 'no runtime: no info series');
  t.notOk(fams.has('envhook_owner_watched_pods'), 'no worker reported its owner watcher yet: no owner gauges');
  t.equal(value(fams, 'envhook_nri_request_duration_seconds_count'), 0);
  t.equal(value(fams, 'envhook_nri_request_duration_seconds_bucket', { le: '+Inf' }), 0);
});

t.test('label values are escaped', async (t) => {
  const odd = 'v1 "quoted" \\ back\nslash';
  const fams = parseExposition(
    renderMetrics(sampleStatus({ runtime: { name: 'cri-o', version: odd }, nriVersion: undefined }), new DurationHistogram()),
  );
  t.equal(value(fams, 'envhook_nri_runtime_info', { runtime: 'cri-o', version: odd }), 1, 'read back as given');
});

t.test('owned copies: held, updated, failed, and the update latency as a histogram in seconds', async (t) => {
  const status = sampleStatus({
    owners: {
      ...{ pods: 1, volumes: 2, watches: 2, polled: 0, ownedBeforeSwap: 0, ownedAfterSwap: 0, refusedByKernel: 0, refusedByBound: 0 },
      copies: 2,
      copyBytes: 12_345,
      copyFiles: 7,
      copyUpdates: 40,
      copyFailures: 1,
      copyLatency: { buckets: [3, 30, 38, 40, 40, 40, 40, 40, 40, 40, 40, 40], sum: 0.12, count: 40 },
    },
  });
  const fams = parseExposition(renderMetrics(status, new DurationHistogram()));
  t.match(fams.get('envhook_owner_copies'), { type: 'gauge' });
  t.match(fams.get('envhook_owner_copy_updates_total'), { type: 'counter' });
  t.match(fams.get('envhook_owner_copy_failures_total'), { type: 'counter' });
  t.match(fams.get('envhook_owner_copy_update_latency_seconds'), { type: 'histogram' });
  const text = renderMetrics(status, new DurationHistogram());
  t.match(text, 'envhook_owner_copies 2\n');
  t.match(fams.get('envhook_owner_copy_bytes'), { type: 'gauge' });
  t.match(text, 'envhook_owner_copy_bytes 12345\n');
  t.match(text, 'envhook_owner_copy_files 7\n');
  t.match(text, 'envhook_owner_copy_updates_total 40\n');
  t.match(text, 'envhook_owner_copy_failures_total 1\n');
  t.match(text, 'envhook_owner_copy_update_latency_seconds_bucket{le="0.0025"} 30\n');
  t.match(text, 'envhook_owner_copy_update_latency_seconds_bucket{le="+Inf"} 40\n');
  t.match(text, 'envhook_owner_copy_update_latency_seconds_count 40\n');
  t.notMatch(renderMetrics(sampleStatus({}), new DurationHistogram()), 'envhook_owner_copies', 'none before a worker reported copies');
});
