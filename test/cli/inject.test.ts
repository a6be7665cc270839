// `envhook inject --bundle DIR` through the CLI on a bare config.json (no rootfs needed: inject
// only rewrites the bundle's config.json); env files in a real directory given with --volume.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { envhook } from '../helpers/bundle.ts';
import { refused } from '../helpers/refusal.ts';

const CANARY = 'canary-value-9f3e';

function bundle(t: Test) {
  const dir = t.testdir({
    'config.json': '{}',
    vol: { 'app.env': `SECRET='${CANARY}'\n` },
    bundle: {
      'config.json': JSON.stringify({
        ociVersion: '1.0.2',
        process: { env: ['PATH=/bin'] },
        annotations: {
          'envhook.io/env': JSON.stringify({
            app: [{ name: 'SECRET', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'app.env', key: 'SECRET' } } }],
          }),
        },
      }),
    },
  });
  const run = (...args: string[]) =>
    envhook(['inject', '--bundle', path.join(dir, 'bundle'), '--log-file', path.join(dir, 'log'), '--log-level', 'debug', ...args], {
      env: { ENVHOOK_CONFIG: path.join(dir, 'config.json') },
    });
  const read = () => fs.readFileSync(path.join(dir, 'bundle/config.json'), 'utf8');
  return { dir, run, read, vol: `cfg=${path.join(dir, 'vol')}` };
}

t.test('--volume and --container: the value reaches config.json, never the log or the output', async (t) => {
  const b = bundle(t);
  const r = b.run('--volume', b.vol, '--container', 'app');
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, '');
  t.equal(r.stderr, '');
  const spec = JSON.parse(b.read());
  t.same(spec.process.env, ['PATH=/bin', `SECRET=${CANARY}`]);
  t.equal(spec.annotations['envhook.io/applied-env'], '{"set":["SECRET"],"removed":[]}');
  const log = fs.readFileSync(path.join(b.dir, 'log'), 'utf8');
  t.match(log, /"msg":"inject done"/);
  t.notMatch(log, CANARY);
});

t.test('--dry-run prints the plan (names and sources) and leaves config.json byte for byte', async (t) => {
  const b = bundle(t);
  const before = b.read();
  const r = b.run('--volume', b.vol, '--container', 'app', '--dry-run');
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^container: app\nenv: 1\n  set SECRET from /);
  t.match(r.stdout, /\nremoved service variables: 0\nowners: 0\n$/);
  t.notMatch(r.stdout, CANARY);
  t.equal(b.read(), before);
});

t.test('a bad --volume flag: one line, exit 1, config.json intact', async (t) => {
  const b = bundle(t);
  const before = b.read();
  const r = b.run('--volume', 'cfg', '--container', 'app');
  refused(t, r, 'envhook: --volume "cfg": expected NAME=DIR\n');
  t.equal(b.read(), before);
  t.match(fs.readFileSync(path.join(b.dir, 'log'), 'utf8'), /"msg":"inject failed"/);
});

t.test('a missing env file key: one line without the value, exit 1, config.json intact', async (t) => {
  const b = bundle(t);
  fs.writeFileSync(path.join(b.dir, 'vol/app.env'), `OTHER='${CANARY}'\n`);
  const before = b.read();
  const r = b.run('--volume', b.vol, '--container', 'app');
  refused(t, r, 'envhook: volume "cfg": file "app.env": key "SECRET" not found\n');
  t.equal(b.read(), before);
});

t.test('an env file the parser refuses: the line number only, exit 1, config.json intact', async (t) => {
  const b = bundle(t);
  fs.writeFileSync(path.join(b.dir, 'vol/app.env'), `SECRET=${CANARY}\n`);
  const before = b.read();
  const r = b.run('--volume', b.vol, '--container', 'app');
  refused(t, r, 'envhook: volume "cfg": file "app.env": line 1: value must be single-quoted\n');
  t.notMatch(fs.readFileSync(path.join(b.dir, 'log'), 'utf8'), CANARY);
  t.equal(b.read(), before);
});

t.test('--bundle is required', async (t) => {
  const r = envhook(['inject']);
  refused(t, r, /required option '--bundle <dir>' not specified/);
});

t.test('a bidi override in an annotation key or path: escaped on stderr and in the log, exit 1', async (t) => {
  const b = bundle(t);
  const spec = JSON.parse(b.read());
  spec.annotations['envhook.io/env'] = JSON.stringify({
    'ap\u202ep': [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'x\u2066y', key: 'A' } } }],
  });
  fs.writeFileSync(path.join(b.dir, 'bundle/config.json'), JSON.stringify(spec));
  const before = b.read();
  const r = b.run('--volume', b.vol, '--container', 'app');
  refused(
    t,
    r,
    'envhook: annotation "envhook.io/env": /ap\\u202ep: container name must be a DNS label: lowercase letters, digits and \'-\', at most 63 characters\n',
  );
  t.equal(b.read(), before);
  spec.annotations['envhook.io/env'] = JSON.stringify({
    app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'x\u2066y\u200b', key: 'A' } } }],
  });
  fs.writeFileSync(path.join(b.dir, 'bundle/config.json'), JSON.stringify(spec));
  const r2 = b.run('--volume', b.vol, '--container', 'app');
  refused(t, r2, 'envhook: volume "cfg": file "x\\u2066y\\u200b": not found\n');
  const log = fs.readFileSync(path.join(b.dir, 'log'), 'utf8');
  t.notMatch(log, /[\u202e\u2066\u200b]/u, 'no raw format character in the log');
  t.match(log, /x\\\\u2066y\\\\u200b/);
});

t.test('a temporary config.json a crashed envhook left (values included) is removed by the next inject', async (t) => {
  const b = bundle(t);
  const dead = spawnSync('true').pid!;
  const ns = /^pid:\[(\d+)\]$/.exec(fs.readlinkSync('/proc/self/ns/pid'))![1];
  const leftover = path.join(b.dir, 'bundle', `.config.json.envhook-${dead}-${ns}-1kq2`);
  fs.writeFileSync(leftover, `{"process":{"env":["SECRET=${CANARY}"]}}`, { mode: 0o600 });
  const r = b.run('--volume', b.vol, '--container', 'app');
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
  t.same(fs.readdirSync(path.join(b.dir, 'bundle')), ['config.json'], 'the leftover is gone, and no new one');
});

t.test('envFrom volumeRef on a directory of 20,000 files: refused with the limit, exit 1, config.json intact', async (t) => {
  const b = bundle(t);
  const many = path.join(b.dir, 'many');
  fs.mkdirSync(many);
  for (let i = 0; i < 20_000; i++) fs.closeSync(fs.openSync(path.join(many, `F${i}`), 'w'));
  const spec = JSON.parse(b.read());
  spec.annotations['envhook.io/envFrom'] = JSON.stringify({ app: [{ volumeRef: { volumeName: 'many' } }] });
  fs.writeFileSync(path.join(b.dir, 'bundle/config.json'), JSON.stringify(spec));
  const before = b.read();
  const r = b.run('--volume', b.vol, '--volume', `many=${many}`, '--container', 'app');
  refused(t, r, 'envhook: volume "many": directory ".": has more than 1024 entries\n');
  t.equal(b.read(), before);
});
