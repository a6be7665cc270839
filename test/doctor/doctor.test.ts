// `envhook doctor`'s report: every check of the node in the order an admin looks (settings, the
// kubelet, the run directory, what is installed, the runtime, its own reading, the NRI socket, the front, the
// plugin, the owner watcher), the counts, and ok only without a problem (a skipped check is not
// one). Each line's text is its check's own test; the CLI's output is test/cli/doctor.test.ts's.
import t from 'tap';
import path from 'node:path';
import { doctor, type DoctorReport } from '../../src/doctor/doctor.ts';
import { addScriptsToRoot } from '../helpers/install/node-root.ts';
import { hostFiles, install, installRoot } from '../helpers/install/install.ts';
import { memoryRun } from '../helpers/memory-run.ts';

const PREFIX = '/usr/local/lib/envhook';
const lines = (r: DoctorReport) => r.checks.map((c) => `${c.state} ${c.check}`);

t.test('a Podman node: each check once, in order; ok and skipped only, so ok', async (t) => {
  const { root, source } = installRoot(t, { 'var/lib/kubelet/pods/.keep': '' });
  addScriptsToRoot(root, { '/usr/bin/podman': "#!/bin/sh\necho 'podman version 4.3.1'\n" });
  memoryRun(t, root);
  const r = install({ runtime: 'podman', root, source });
  t.equal(r.status, 0, r.stderr);
  const report = await doctor({ root, prefix: PREFIX }, {});
  t.same(lines(report), [
    'ok settings',
    'ok kubelet-root',
    'ok run-dir',
    'ok installed',
    'ok runtime',
    'ok hooks',
    'skipped nri-socket',
    'skipped front',
    'skipped plugin',
    'ok owner-watcher',
  ]);
  t.same(report.checks[4], { check: 'runtime', state: 'ok', what: `podman 4.3.1 (/usr/bin/podman)` }, 'the node under --root asked');
  t.same(report.counts, { ok: 7, problem: 0, skipped: 3 });
  t.equal(report.ok, true);
});

t.test('an empty root: its problems counted, and not ok', async (t) => {
  const report = await doctor({ root: t.testdir({}), prefix: PREFIX }, {});
  t.same(lines(report), [
    'ok settings',
    'problem kubelet-root',
    'problem run-dir',
    'problem installed',
    'skipped nri-socket',
    'skipped front',
    'skipped plugin',
    'ok owner-watcher',
  ]);
  t.same(report.counts, { ok: 2, problem: 3, skipped: 3 });
  t.equal(report.ok, false);
});

t.test("the environment given, not this process's: ENVHOOK_CONFIG names the settings file", async (t) => {
  const root = t.testdir({});
  const file = path.join(root, 'settings.json');
  hostFiles(root, { 'settings.json': '{"kubeletRoot": "/k"}\n', 'k/pods/.keep': '' });
  const report = await doctor({ root, prefix: PREFIX }, { ENVHOOK_CONFIG: file });
  t.same(report.checks.slice(0, 2), [
    { check: 'settings', state: 'ok', what: `${file} is valid` },
    { check: 'kubelet-root', state: 'ok', what: '/k/pods exists' },
  ]);
});
