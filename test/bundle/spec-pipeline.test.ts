import t from 'tap';
// The pipeline on a config.json: facts from the spec, the config.json applier, the owners record.
import { runPipeline } from '../../src/bundle/spec-pipeline.ts';
import type { Stage } from '../../src/pipeline.ts';
import { silentLogger } from '../../src/log.ts';
import { appliedDigest, envRequested } from '../../src/plan/mark.ts';
import type { Spec } from '../../src/oci/spec.ts';
import { APPLIED_KEY } from '../../src/k8s/annotation-keys.ts';

const settings = { kubeletRoot: '/nonexistent', runtime: 'runc', logFile: undefined, logLevel: 'info' as const };
const run = (spec: Spec, stage: Stage = 'inject') => runPipeline(spec, { settings, stage, log: silentLogger });
const spec = (annotations: Record<string, string>): Spec => ({
  process: { env: ['PATH=/bin', 'X_SERVICE_HOST=1'] },
  annotations: { 'io.kubernetes.cri.container-name': 'app', ...annotations },
});

t.test('env and envhook.io/applied only when an env annotation has an entry for this container', async (t) => {
  const none = spec({});
  t.equal(run(none).spec, none, 'no annotation: the same spec object');
  const other = spec({ 'envhook.io/env': '{"other":[{"name":"A","value":"1"}]}', 'envhook.io/serviceLinks': '{"other":false}' });
  t.equal(run(other).spec, other, 'entries for other containers only');
  t.notOk(envRequested({ annotations: other.annotations as Record<string, string>, container: 'app' }));
  const mine = spec({ 'envhook.io/env': '{"app":[{"name":"A","value":"$(PATH):x"}]}', 'envhook.io/serviceLinks': '{"*":false}' });
  for (const stage of ['inject', 'create', 'precreate'] as const) {
    const out = run(mine, stage);
    t.same((out.spec.process as { env: string[] }).env, ['PATH=/bin', 'A=/bin:x'], stage);
    t.equal(
      (out.spec.annotations as Record<string, string>)[APPLIED_KEY],
      appliedDigest({ annotations: mine.annotations as Record<string, string>, container: 'app' }),
    );
    t.same(out.plan.env, [{ name: 'A', source: 'value' }]);
    t.same(out.plan.removed, ['X_SERVICE_HOST']);
    t.equal(
      (out.spec.annotations as Record<string, string>)['envhook.io/applied-env'],
      '{"set":["A"],"removed":["X_SERVICE_HOST"]}',
      `${stage}: the names mark, names only`,
    );
  }
  t.same((mine.process as { env: string[] }).env, ['PATH=/bin', 'X_SERVICE_HOST=1'], 'the input spec is not changed');
  // The hook stage does no env work: it only checks the shim or precreate stage left its mark.
  const marked = {
    ...mine,
    annotations: {
      ...(mine.annotations as Record<string, string>),
      [APPLIED_KEY]: appliedDigest({ annotations: mine.annotations as Record<string, string>, container: 'app' }),
    },
  };
  t.equal(run(marked, 'hook').spec, marked, 'the hook stage does no env work');
  const full = run(mine, 'create').spec;
  t.equal(run(full, 'hook').spec, full, "the names mark beside it does not disturb the hook stage's check");
  t.throws(
    () => run(mine, 'hook'),
    {
      message: /^env requested by annotations "envhook\.io\/env", "envhook\.io\/serviceLinks" was not applied before the runtime's create/,
    },
    'and refuses env that was not applied',
  );
  t.ok(envRequested({ annotations: mine.annotations as Record<string, string>, container: 'app' }));
  t.notSame(
    appliedDigest({ annotations: mine.annotations as Record<string, string>, container: 'app' }),
    appliedDigest({ annotations: mine.annotations as Record<string, string>, container: 'b' }),
  );
});

t.test("shim stages record the pod's owners for envhook watch; a failed record does not fail the start", async (t) => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { makePod, rawAnnotations } = await import('../../scripts/kubelet-pod.ts');
  const { readOwnersRecord } = await import('../../src/watch/record.ts');
  const root = t.testdir({});
  const kubeletRoot = path.join(root, 'kubelet');
  const pod = makePod(kubeletRoot, { atomic: [{ plugin: 'secret', name: 'keys', payload: { 'key.pem': { data: 'k', mode: 0o400 } } }] });
  const ownersSpec = (): Spec => ({
    process: { env: ['PATH=/bin'] },
    mounts: pod.mounts('app'),
    annotations: { ...pod.annotations('app'), ...rawAnnotations({ 'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }] }) },
  });
  const warnings: string[] = [];
  const log = { ...silentLogger, warn: (_o: unknown, msg: string) => void warnings.push(msg) } as unknown as typeof silentLogger;
  const runDir = path.join(root, 'run');
  runPipeline(ownersSpec(), { settings: { kubeletRoot }, stage: 'create', log, recordOwnersIn: runDir });
  const record = readOwnersRecord(runDir, `${pod.uid}.json`);
  t.equal(record.podUid, pod.uid, 'the record names the pod');
  t.equal(record.podDir, pod.dir, 'and its directory');
  t.same(
    record.volumes.map((v) => [v.volume, v.defaultUser, v.dir]),
    [['keys', 1000, path.join(pod.dir, 'volumes/kubernetes.io~secret/keys')]],
    'the volume and its owner',
  );
  t.equal(fs.statSync(path.join(runDir, 'owners', `${pod.uid}.json`)).mode & 0o777, 0o600, 'root-only record');

  const other = path.join(root, 'other-run');
  runPipeline(ownersSpec(), { settings: { kubeletRoot }, stage: 'inject', log, dryRun: true, recordOwnersIn: other });
  t.notOk(fs.existsSync(other), 'a dry run records nothing');

  const open = path.join(root, 'open-run');
  fs.mkdirSync(open, { mode: 0o777 });
  fs.chmodSync(open, 0o777);
  const keyFile = path.join(pod.dir, 'volumes/kubernetes.io~secret/keys/key.pem');
  fs.chownSync(fs.realpathSync(keyFile), 0, 0);
  runPipeline(ownersSpec(), { settings: { kubeletRoot }, stage: 'create', log, recordOwnersIn: open });
  t.equal(fs.statSync(keyFile).uid, 1000, 'the start chowned the file');
  t.same(warnings, ['owners not recorded for envhook watch'], 'a run directory writable by others: the start goes on, one warning');
  t.notOk(fs.existsSync(path.join(open, 'owners')), 'and nothing written there');
});
