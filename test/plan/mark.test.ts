// The applied mark: a digest of the container name and the three env annotations' raw text,
// and the hook stage's check of it.
import t from 'tap';
import { appliedDigest, checkApplied, envRequested } from '../../src/plan/mark.ts';
import { EnvhookError } from '../../src/errors.ts';
import { APPLIED_KEY } from '../../src/k8s/annotation-keys.ts';

const env = { 'envhook.io/env': '{"app":[{"name":"A","value":"1"}]}' };

t.test('the digest: per container and per annotation text; other annotations do not count', async (t) => {
  const d = appliedDigest({ annotations: env, container: 'app' });
  t.match(d, /^sha256:[0-9a-f]{32}$/);
  t.equal(appliedDigest({ annotations: { ...env, other: 'x', 'envhook.io/volumeOwners': '[]' }, container: 'app' }), d);
  t.not(appliedDigest({ annotations: env, container: 'b' }), d);
  t.not(appliedDigest({ annotations: { 'envhook.io/env': '{"app":[{"name":"A","value":"2"}]}' }, container: 'app' }), d);
  t.not(appliedDigest({ annotations: env, container: undefined }), d);
});

t.test('checkApplied: passes when nothing was asked or the mark matches; fails otherwise', async (t) => {
  t.doesNotThrow(() => checkApplied({ annotations: {}, container: 'app' }));
  t.notOk(envRequested({ annotations: {}, container: 'app' }));
  t.ok(envRequested({ annotations: env, container: 'app' }));
  t.doesNotThrow(() =>
    checkApplied({ annotations: { ...env, [APPLIED_KEY]: appliedDigest({ annotations: env, container: 'app' }) }, container: 'app' }),
  );
  t.throws(
    () => checkApplied({ annotations: env, container: 'app' }),
    new EnvhookError(
      'env requested by annotation "envhook.io/env" was not applied before the runtime\'s create: the runtime shim (hooks/envhook-runtime in place of runc) or the precreate hook (Podman) is needed; the createRuntime hook alone cannot set variables',
    ),
  );
  t.throws(
    () =>
      checkApplied({
        annotations: { ...env, [APPLIED_KEY]: 'sha256:forged' },
        container: 'app',
      }),
    { message: /\("envhook\.io\/applied" belongs to other annotations\)/ },
  );
  t.doesNotThrow(() => checkApplied({ annotations: env, container: 'app' }, false), 'the caller already knows nothing was asked');
});
