// The soak's verdict and report (bench/soak.mjs): each check with what it saw, the trend of each
// series after warm-up with its noise bound (bench/soak-judge.ts), what a run of this length can
// say about a day, and the section of bench/RESULTS.md with the CSV beside it
// (bench/soak-<pods>.csv) for the documented sizes (110 and 250 pods) when the run went its full
// length of at least 15 minutes; otherwise printed only.
import fs from 'node:fs';
import path from 'node:path';
import { machine } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { csvHeader, csvLine, judgeRows, K_SE, TABLE_HEADER, tableRow } from './soak-judge.ts';
import { replaceMarkedSection, soakMarkers } from './sections.mjs';

const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);

function checks({ settings: S, tally: t, log, outcome: o, rows }) {
  const fails = sum(t.fail);
  const out = [];
  const add = (what, ok, detail) => out.push({ what, ok, detail });
  add(
    'every container got its env, or was reported missed (and evicted where its pod asked)',
    t.created > 0 && t.wrongEnv + t.unreported + t.notEvicted + t.falseMissed === 0,
    `${t.created} app containers created: ${t.applied} with their env (PID 1's /proc/<pid>/environ, compared by hash), ${t.missedReported} without it and reported missed (${t.missedEvicted} of them evicted and created again), ${t.wrongEnv} with a wrong or partial env, ${t.unreported} never reported, ${t.notEvicted} reported but not evicted where asked, ${t.falseMissed} reported missed though they had their env`,
  );
  add(
    'no CreateContainer failed',
    t.createFailures === 0,
    t.createFailures === 0
      ? '0 failed'
      : `${t.createFailures} failed: ${[...t.createFailureReasons].map(([r, n]) => `${n}× ${r}`).join('; ')}`,
  );
  add(
    '0 reader failures',
    fails === 0 && (S.readers === 0 || t.reads > 0),
    `${t.reads} reads by ${S.readers} UID-${1000} readers; failures EACCES ${t.fail.EACCES}, ENOENT ${t.fail.ENOENT}, other ${t.fail.other}`,
  );
  add(
    'every rewrite reached the containers, owned',
    t.staleViews + t.notOwnedViews === 0 && (S.readers === 0 || t.seen > 0),
    `${t.rotations} rewrites; ${t.seen} seen by the readers (p50 ${fmt(t.lat.percentile(50))} ms, p99 ${fmt(t.lat.percentile(99))} ms from the kubelet's swap); ${t.views} views checked once a minute: ${t.staleViews} stale (more than 5 s behind), ${t.notOwnedViews} not owned by 1000`,
  );
  const trends = judgeRows(rows, S.warmup);
  const rising = trends.filter((x) => x.trend.verdict === 'rising');
  const short = trends.every((x) => x.trend.verdict === 'too short');
  // A run too short to judge a trend (a try at a few pods) says so in its headline, without failing on it.
  add(
    `after ${S.warmup} min of warm-up, no upward trend in fds, watches, copies, records or memory`,
    rising.length === 0,
    short
      ? 'not judged: too few rows after warm-up (at least 5)'
      : rising.length === 0
        ? 'all flat'
        : `rising: ${rising.map((x) => `${x.what} +${fmt(x.trend.slope, 3)} ${x.unit}/min (bound ${fmt(x.trend.bound, 3)})`).join('; ')}`,
  );
  const ec = o.endCopies;
  add(
    "at the end, the owned copies are exactly the live pods'",
    !!ec && ec.extra.length + ec.missing.length === 0,
    ec
      ? `${ec.present} pods with copies, ${ec.expected} live pods with an applied container; ${ec.extra.length} extra, ${ec.missing.length} missing${settled(ec)}`
      : 'not checked (the run did not end normally)',
  );
  const ar = o.afterRemoval;
  add(
    'after every pod is removed, nothing of them is left',
    !!ar && ar.copies + ar.records + ar.podDirs === 0 && o.leftovers.processes.length + o.leftovers.mounts.length === 0 && o.dirGone,
    ar
      ? `${ar.copies} copies, ${ar.records} records${ar.names.length ? ` (${ar.names.join(', ')})` : ''} in the run directory${settled(ar)}, ${ar.podDirs} pod directories; containerd's teardown: ${o.leftovers.processes.length} processes, ${o.leftovers.mounts.length} mounts left; directory ${o.dirGone ? 'gone' : 'still there'}`
      : 'not checked',
  );
  add(
    "no value in envhook's output",
    log.canaryLines === 0,
    `${log.lines} lines on stderr, ${log.canaryLines} with a canary value, ${log.notJson} not JSON`,
  );
  add('envhook nri exits 0 at SIGTERM', o.envhookExit === 0, `exit ${o.envhookExit}`);
  add(
    'the run went its full length',
    !o.error && o.minutes >= S.minutes - 0.05,
    o.error ? `stopped by an error: ${String(o.error.message).split('\n')[0]}` : `${fmt(o.minutes, 1)} of ${S.minutes} min`,
  );
  return { list: out, trends };
}

/** How long the end state took when not at once (envhook's minute pass catches what its events missed). */
const settled = (x) => (x.seconds > 1 ? ` (reached after ${fmt(x.seconds, 1)} s: not at once)` : '');

const fmt = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

export function judgeSoak(ctx) {
  const { list, trends } = checks(ctx);
  const judged = trends.some((x) => x.trend.verdict !== 'too short');
  return { ...ctx, checks: list, trends, judged, pass: list.every((x) => x.ok) };
}

/** The rows shown: all up to 30, else the first 5, one an hour and the last 5 (the CSV has every one). */
function shownRows(rows) {
  if (rows.length <= 30) return rows;
  return rows.filter((r, i) => i < 5 || i >= rows.length - 5 || Math.round(r.minute) % 60 === 0);
}

function trendTable(trends) {
  return [
    '| series | slope per minute | noise bound | verdict | a day at the bound |',
    '|---|---|---|---|---|',
    ...trends.map(
      ({ what, unit, trend: t }) =>
        `| ${what} | ${t.slope >= 0 ? '+' : ''}${fmt(t.slope, 3)} ${unit} | ${fmt(t.bound, 3)} | ${t.verdict} | ${Number.isFinite(t.bound) ? `${fmt(t.bound * 1440, 0)} ${unit}` : 'n/a'} |`,
    ),
  ].join('\n');
}

function sectionText(v, heading) {
  const S = v.settings;
  const m = machine(NODE);
  const t = v.tally;
  return `${heading}

${v.pass ? (v.judged ? '**PASS**' : '**PASS**, trends not judged (too short)') : '**FAIL**'}. ${S.pods} pods at once on a private containerd 2.1.9 (Debian sid) with NRI, for
${S.minutes} minutes after every pod was up: one pod removed and created again every ${S.churnS} s, each pod's
owned secret volume (3 files, UID 1000) rewritten with the kubelet's atomic-writer operations every ${S.rotateS} s, the
worker SIGKILLed every ${S.killS} s (${t.kills} kills), containerd restarted once${t.restarts.length ? ` (minute ${fmt(t.restarts[0].minute, 1)}, envhook registered again after ${fmt(t.restarts[0].registeredMs)} ms)` : ' (not reached)'}; ${S.readers}
pods with a UID-1000 busybox reader of the owned files. \`envhook nri\` ran as the DaemonSet runs it
(${v.daemon?.what ?? 'n/a'}: \`${v.daemon?.argv ?? ''}\`; KUBERNETES_SERVICE_HOST set, logs on stderr).
Machine: ${m.cpu}, ${m.kernel}, Node ${m.node}. \`uptime\` at the start: ${v.started.uptime}; at the end: ${v.ended.uptime}.
Run ${v.started.at.toISOString().replace(/\.\d+Z$/, 'Z')} to ${v.ended.at.toISOString().replace(/\.\d+Z$/, 'Z')}.${v.csvFile ? ` Plot-ready CSV, every row: \`${v.csvFile}\`.` : ''}

${v.checks.map((c) => `- ${c.ok ? 'pass' : '**FAIL**'}: ${c.what}: ${c.detail}.`).join('\n')}

Per minute (fds, watches and memory of the supervisor "sup" and the worker "wrk"; counts cumulative;
"seen" and its percentiles are the minute's rewrites seen by the readers, from the kubelet's swap to
the reader's next read that found it, to 10 ms):

${TABLE_HEADER}
${shownRows(v.rows).map(tableRow).join('\n')}

Trends after ${S.warmup} min of warm-up: the least-squares slope is "rising" above its noise bound,
${K_SE} standard errors of the slope plus one quantum (1 fd, watch, copy, directory or record; 4 KiB;
1 MiB) over the window; the last column is that bound over 24 hours, the growth a run of this length
could not have told from noise:

${trendTable(v.trends)}

${dayText(v)}
`;
}

/** What the run's rates and bounds say about a day. */
function dayText(v) {
  const S = v.settings;
  const t = v.tally;
  const minutes = v.outcome.minutes ?? S.minutes;
  const perDay = (n) => fmt((n / minutes) * 1440);
  const bound = (key) => {
    const x = v.trends.find((y) => y.key === key)?.trend;
    return x && Number.isFinite(x.bound)
      ? `${fmt(x.bound * 1440, x.bound * 1440 < 10 ? 1 : 0)} ${v.trends.find((y) => y.key === key).unit}`
      : 'n/a';
  };
  const rising = v.trends.filter((x) => x.trend.verdict === 'rising');
  return `What this says about 24 hours: at this run's rates a day is ~${perDay(t.created)} app containers created, ~${perDay(t.kills)} worker kills and ~${perDay(t.rotations)} rewrites. ${
    rising.length
      ? `Rising here (${rising.map((x) => x.what).join(', ')}): extrapolated, ${rising.map((x) => `${x.what} +${fmt(x.trend.slope * 1440)} ${x.unit}`).join(', ')} a day.`
      : 'No series rose.'
  } A growth below the noise bound would not show in ${fmt(minutes)} minutes: over a day at most the supervisor's Pss +${bound('supPss')} (RssAnon +${bound('supAnon')}), its fds +${bound('supFds')}, the worker's watches +${bound('wrkWatches')}, copies +${bound('copies')}, records +${bound('records')}. The worker is replaced at every kill (every ${S.killS} s here), so its memory only grows within one worker's life; the supervisor lives the whole day, and its bound is the one that counts for a day. Copies, records and watches follow the live pods (one each a pod with an owned volume), not time.`;
}

export function writeSoakReport(v, { write }) {
  const markers = soakMarkers(v.settings.pods);
  if (write && markers) v.csvFile = `bench/soak-${v.settings.pods}.csv`;
  const heading = `## Soak (${v.settings.pods} pods, ${v.settings.minutes} min): a full node with churn, rotations, worker kills and a containerd restart`;
  const text = sectionText(v, heading);
  console.log(text);
  const csv = `${csvHeader()}\n${v.rows.map(csvLine).join('\n')}\n`;
  if (write && markers) {
    replaceMarkedSection(markers[0], markers[1], `${markers[0]}\n${text}${markers[1]}`);
    fs.writeFileSync(path.join(REPO, `bench/soak-${v.settings.pods}.csv`), csv);
    console.error(`soak: wrote its section of bench/RESULTS.md and bench/soak-${v.settings.pods}.csv`);
  } else {
    console.log(csv);
    console.error(
      `soak: RESULTS.md left alone (${!markers ? `${v.settings.pods} pods is not a documented size (110, 250)` : 'a run shorter than 15 minutes or stopped early'}); the CSV is printed above`,
    );
  }
}
