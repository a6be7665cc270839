// `envhook inject` on real busybox bundles with a kubelet-like pod directory, then `runc run`:
// the KEP-3721 stories, optional references, envFrom, $(VAR), service links, plain bundles.
// Failures (docs/design.md#failures), canaries and the lossless round trip: inject-failures.test.ts.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { envhook, makeBundle, missingForRunc, parseEnvOutput, runcRun } from '../helpers/bundle.ts';
import { inject, ref, setup, sharedRootfs } from '../helpers/shim/inject.ts';

const missing = missingForRunc();
const story1 = `CONFIG_VAR='HELLO'\n`;
const story2 = `# written by the init container\nCONFIG_INIT='hello'\nOTHER='x'\n`;

t.test('KEP-3721 stories, optional refs, envFrom with a prefix, $(VAR), in a real container', { skip: missing }, async (t) => {
  const s = setup(
    t,
    { 'config.env': story1, 'init.env': story2, 'shared.env': `DB_HOST='db'\nDB_PORT='5432'\n` },
    {
      'envhook.io/envFrom': { app: [{ prefix: 'APP_', fileRef: { volumeName: 'config', path: 'shared.env' } }] },
      'envhook.io/env': {
        app: [
          { name: 'CONFIG_VAR', valueFrom: ref('CONFIG_VAR', 'config.env') },
          { name: 'CONFIG_MAIN', valueFrom: ref('CONFIG_INIT', 'init.env') },
          { name: 'MISSING_KEY', valueFrom: ref('NOPE', 'init.env', true) },
          { name: 'MISSING_FILE', valueFrom: ref('X', 'not-written.env', true) },
          { name: 'URL', value: 'postgres://$(APP_DB_HOST):$(APP_DB_PORT)/$(HOME)?$$(KEEP)&$(UNDEFINED)' },
        ],
      },
    },
  );
  const r = inject(s);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, '');
  const run = runcRun(s.bundle, s.runcRoot);
  t.equal(run.status, 0, run.stderr);
  const env = parseEnvOutput(run.stdout);
  t.equal(env.get('CONFIG_VAR'), 'HELLO', 'story 1');
  t.equal(env.get('CONFIG_MAIN'), 'hello', 'story 2: key CONFIG_INIT');
  t.notOk(env.has('MISSING_KEY'), 'optional missing key: not set');
  t.notOk(env.has('MISSING_FILE'), 'optional missing file: not set');
  t.notOk(env.has('OTHER'), 'fileKeyRef reads one key');
  t.equal(env.get('APP_DB_HOST'), 'db');
  t.equal(env.get('APP_DB_PORT'), '5432');
  t.equal(env.get('URL'), 'postgres://db:5432//?$(KEEP)&$(UNDEFINED)');
  t.equal(env.get('PATH'), '/bin');
  const spec = JSON.parse(fs.readFileSync(s.config, 'utf8'));
  t.match(spec.annotations['envhook.io/applied'], /^sha256:[0-9a-f]{32}$/);
  t.same(spec.process.env, [
    'PATH=/bin',
    'HOME=/',
    'APP_DB_HOST=db',
    'APP_DB_PORT=5432',
    'CONFIG_VAR=HELLO',
    'CONFIG_MAIN=hello',
    'URL=postgres://db:5432//?$(KEEP)&$(UNDEFINED)',
  ]);
});

t.test('service links off: three services removed, kubernetes kept, app variables kept', { skip: missing }, async (t) => {
  const svc = (x: string, ip: string, port: number, proto = 'TCP') => [
    `${x}_SERVICE_HOST=${ip}`,
    `${x}_SERVICE_PORT=${port}`,
    `${x}_PORT=${proto.toLowerCase()}://${ip}:${port}`,
    `${x}_PORT_${port}_${proto}=${proto.toLowerCase()}://${ip}:${port}`,
    `${x}_PORT_${port}_${proto}_PROTO=${proto.toLowerCase()}`,
    `${x}_PORT_${port}_${proto}_PORT=${port}`,
    `${x}_PORT_${port}_${proto}_ADDR=${ip}`,
  ];
  const services = [
    ...svc('REDIS', '10.0.0.11', 6379),
    'REDIS_SERVICE_PORT_REDIS=6379',
    ...svc('DNS', '10.0.0.10', 53, 'UDP'),
    ...svc('MY_WEB', '10.0.0.12', 80),
  ];
  const kube = svc('KUBERNETES', '10.0.0.1', 443).concat('KUBERNETES_SERVICE_PORT_HTTPS=443');
  const s = setup(t, {}, { 'envhook.io/serviceLinks': { '*': false } }, ['PATH=/bin', 'FOO_PORT=8080', ...services, ...kube]);
  const r = inject(s, '--dry-run');
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^container: app\nenv: 0\nremoved service variables: 22\n  REDIS_SERVICE_HOST\n/);
  t.equal(fs.readFileSync(s.config, 'utf8').includes('REDIS_SERVICE_HOST'), true, 'dry run changes nothing');
  t.equal(inject(s).status, 0);
  const env = parseEnvOutput(runcRun(s.bundle, s.runcRoot).stdout);
  t.same([...env.keys()].sort(), ['FOO_PORT', 'HOME', ...kube.map((e) => e.split('=')[0]!), 'PATH'].sort());
  t.equal(env.get('KUBERNETES_SERVICE_HOST'), '10.0.0.1');
});

t.test('a plain bundle: --container and --volume, serviceLinks "*"', { skip: missing }, async (t) => {
  const dir = t.testdir({ vol: { 'a.env': story1 } });
  const bundle = makeBundle(path.join(dir, 'bundle'), sharedRootfs(), {
    annotations: {
      'envhook.io/env': JSON.stringify({
        web: [{ name: 'V', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'a.env', key: 'CONFIG_VAR' } } }],
      }),
    },
  });
  const without = envhook(['inject', '--bundle', bundle, '--volume', `cfg=${path.join(dir, 'vol')}`]);
  t.equal(
    without.stderr,
    'envhook: annotation "envhook.io/env": the container has no name (no Kubernetes annotations in config.json): add the annotation io.kubernetes.container.name=NAME or use envhook inject --container NAME\n',
  );
  t.equal(envhook(['inject', '--bundle', bundle, '--volume', `cfg=${path.join(dir, 'vol')}`, '--container', 'web']).status, 0);
  t.equal(parseEnvOutput(runcRun(bundle, path.join(dir, 'runc-root')).stdout).get('V'), 'HELLO');
});
