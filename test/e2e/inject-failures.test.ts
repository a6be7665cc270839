// Every failure row of docs/design.md#failures that `envhook inject` can meet (all but the hook-only row), end to
// end: exactly one `envhook: …` line on stderr, exit status 1, nothing on stdout, config.json
// byte-identical and no temporary file left. Canary values in env files and in `value`s never
// reach stdout, stderr or the debug-level log. config.json round-trips losslessly.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { missingForRunc, parseEnvOutput, runcRun } from '../helpers/bundle.ts';
import { inject, ref, setup, type InjectSetup } from '../helpers/shim/inject.ts';
import { refused } from '../helpers/refusal.ts';
// What a volume that is not in the pod directory is refused with, as the user reads it.
const NOT_SET_UP =
  "the kubelet sets up only volumes that a container of the pod mounts; mount it in one of the pod's containers (the init container is enough)";

const missing = missingForRunc();
const CANARY = 'CANARY-3f9e1c7d-do-not-leak';
const good = `CONFIG_VAR='HELLO'\nSECRET='${CANARY}'\n`;
const files = {
  'config.env': good,
  'unquoted.env': `OK='1'\nSECRET=${CANARY}\n`,
  'export.env': `export SECRET='${CANARY}'\n`,
  'unclosed.env': `OK='1'\n\nSECRET='${CANARY}\nmore\n`,
  'after.env': `SECRET='${CANARY}'${CANARY}\n`,
  'crlf.env': `SECRET='${CANARY}'\r\n`,
  'long-value.env': `SECRET='${CANARY}${'x'.repeat(32768)}'\n`,
  'huge.env': `SECRET='${CANARY}'\n${'#'.repeat(70000)}\n`,
  'sub/nested.env': good,
};
const fileEnv = (p: string, key = 'CONFIG_VAR', optional?: boolean) => ({
  'envhook.io/env': { app: [{ name: 'X', valueFrom: ref(key, p, optional) }] },
});

const rows: [string, Record<string, unknown>, string][] = [
  [
    'volume not found',
    { 'envhook.io/env': { app: [{ name: 'X', valueFrom: { fileKeyRef: { volumeName: 'nope', path: 'a', key: 'A', optional: true } } }] } },
    `volume "nope" not found in the pod: ${NOT_SET_UP}`,
  ],
  [
    'volume is not one env is read from',
    { 'envhook.io/env': { app: [{ name: 'X', valueFrom: { fileKeyRef: { volumeName: 'share', path: 'a', key: 'A' } } }] } },
    'volume "share" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume',
  ],
  ['file missing, not optional', fileEnv('missing.env'), 'volume "config": file "missing.env": not found'],
  ['directory missing, not optional', fileEnv('no/such.env'), 'volume "config": file "no/such.env": not found'],
  [
    'envFrom file missing, not optional',
    { 'envhook.io/envFrom': { app: [{ fileRef: { volumeName: 'config', path: 'missing.env' } }] } },
    'volume "config": file "missing.env": not found',
  ],
  ['key missing, not optional', fileEnv('config.env', 'NOPE'), 'volume "config": file "config.env": key "NOPE" not found'],
  [
    'file not parsable: unquoted value',
    fileEnv('unquoted.env', 'OK', true),
    'volume "config": file "unquoted.env": line 2: value must be single-quoted',
  ],
  [
    'invalid name: export',
    fileEnv('export.env', 'SECRET'),
    'volume "config": file "export.env": line 1: \'export\' not allowed: write NAME=\'value\'',
  ],
  [
    'unclosed quote, reported where the value started',
    fileEnv('unclosed.env', 'OK'),
    'volume "config": file "unclosed.env": line 3: unclosed quote',
  ],
  [
    'text after the closing quote',
    { 'envhook.io/envFrom': { app: [{ fileRef: { volumeName: 'config', path: 'after.env', optional: true } }] } },
    'volume "config": file "after.env": line 1: text after closing quote',
  ],
  ['CRLF', fileEnv('crlf.env', 'SECRET'), 'volume "config": file "crlf.env": line 1: carriage return outside quotes'],
  [
    'value limit exceeded',
    fileEnv('long-value.env', 'SECRET'),
    'volume "config": file "long-value.env": line 1: value longer than 32768 bytes',
  ],
  ['file limit exceeded', fileEnv('huge.env', 'SECRET'), 'volume "config": file "huge.env": larger than 65536 bytes'],
  ['symbolic link', fileEnv('link.env'), 'volume "config": file "link.env": is a symbolic link'],
  [
    'symbolic link on the way',
    fileEnv('linkdir/nested.env'),
    'volume "config": file "linkdir/nested.env": a path element is a symbolic link',
  ],
  ['FIFO', fileEnv('fifo.env', 'CONFIG_VAR', true), 'volume "config": file "fifo.env": is a FIFO'],
  [
    'annotation not valid JSON',
    { 'envhook.io/env': `{"app": [{"name": "A", "value": "${CANARY}"` },
    'annotation "envhook.io/env" is not valid JSON (at offset 61)',
  ],
  ['annotation not valid JSON, unquoted text', { 'envhook.io/env': `{"app": ${CANARY}}` }, 'annotation "envhook.io/env" is not valid JSON'],
  [
    'annotation not matching the schema: value and valueFrom',
    { 'envhook.io/env': { app: [{ name: 'A', value: CANARY, valueFrom: ref('A', 'config.env') }] } },
    'annotation "envhook.io/env": /app/0: must have exactly one of "value" or "valueFrom"',
  ],
  [
    "a misspelt field: lint's line, the nearest field, how many more",
    { 'envhook.io/env': { app: [{ name: 'A', vaule: CANARY }] } },
    'annotation "envhook.io/env": /app/0: unknown field "vaule" (did you mean "value"?) (and 1 more: envhook lint lists them)',
  ],
  [
    "a misspelt volume: the nearest of the pod's volumes",
    { 'envhook.io/env': { app: [{ name: 'X', valueFrom: { fileKeyRef: { volumeName: 'confg', path: 'a', key: 'A' } } }] } },
    `volume "confg" not found in the pod (did you mean "config"?): ${NOT_SET_UP}`,
  ],
  [
    'annotation not matching the schema: path',
    { 'envhook.io/envFrom': { app: [{ fileRef: { volumeName: 'config', path: '../../etc/passwd' } }] } },
    'annotation "envhook.io/envFrom": /app/0/fileRef/path: must be a relative path with no \'..\' element and no NUL byte',
  ],
  [
    'annotation not matching the schema: serviceLinks',
    { 'envhook.io/serviceLinks': { app: 'no' } },
    'annotation "envhook.io/serviceLinks": /app: must be boolean',
  ],
];

function prepare(s: InjectSetup): void {
  const vol = s.pod.emptyDir('config');
  fs.symlinkSync('config.env', path.join(vol, 'link.env'));
  fs.symlinkSync('sub', path.join(vol, 'linkdir'));
  execFileSync('mkfifo', [path.join(vol, 'fifo.env')]);
  fs.mkdirSync(path.join(s.pod.dir, 'volumes/kubernetes.io~nfs/share'), { recursive: true });
}

function noCanary(t: Test, s: InjectSetup, out: { stdout: string; stderr: string }): void {
  t.notOk(out.stdout.includes(CANARY), 'no canary on stdout');
  t.notOk(out.stderr.includes(CANARY), 'no canary on stderr');
  const log = fs.readFileSync(s.log, 'utf8');
  t.match(log, /"msg":"inject (failed|done)"/, 'the log was written');
  t.notOk(log.includes(CANARY), 'no canary in the debug log');
}

for (const [name, annotations, message] of rows) {
  t.test(`§6: ${name}`, { skip: missing }, async (t) => {
    const s = setup(t, files, annotations, ['PATH=/bin', `APP_SECRET=${CANARY}`]);
    prepare(s);
    const before = fs.readFileSync(s.config);
    const r = inject(s);
    refused(t, r, `envhook: ${message}\n`);
    t.equal(r.stdout, '');
    t.ok(fs.readFileSync(s.config).equals(before), 'config.json byte-identical');
    t.same(fs.readdirSync(s.bundle), ['config.json'], 'no temporary file left');
    noCanary(t, s, r);
  });
}

t.test('canary values that are injected never reach stdout, stderr or the debug log', { skip: missing }, async (t) => {
  const s = setup(
    t,
    files,
    {
      'envhook.io/envFrom': { app: [{ prefix: 'F_', fileRef: { volumeName: 'config', path: 'config.env' } }] },
      'envhook.io/env': {
        app: [
          { name: 'V', value: `${CANARY}-$(F_SECRET)` },
          { name: 'K', valueFrom: ref('SECRET', 'config.env') },
        ],
      },
    },
    ['PATH=/bin', `APP_SECRET=${CANARY}`],
  );
  const dry = inject(s, '--dry-run');
  t.equal(dry.status, 0, dry.stderr);
  t.match(dry.stdout, /set F_SECRET from envFrom volume "config": file "config.env"\n/);
  t.match(dry.stdout, /set K from volume "config": file "config.env": key "SECRET"\n/);
  noCanary(t, s, dry);
  const r = inject(s);
  t.equal(r.status, 0, r.stderr);
  noCanary(t, s, r);
  const env = parseEnvOutput(runcRun(s.bundle, s.runcRoot).stdout);
  t.equal(env.get('V'), `${CANARY}-${CANARY}`);
  t.equal(env.get('K'), CANARY);
});

t.test('round trip: unknown fields and a 2^64-1 rlimit survive digit for digit', { skip: missing }, async (t) => {
  const s = setup(
    t,
    {
      'config.env': good,
    },
    { 'envhook.io/env': { app: [{ name: 'CONFIG_VAR', valueFrom: ref('CONFIG_VAR', 'config.env') }] } },
  );
  const text = fs
    .readFileSync(s.config, 'utf8')
    .replace('"process": {', '"x-vendor": {"n": 1.0, "deep": [{"k": 1e3}]},\n\t"process": {\n\t\t"x-unknown": true,')
    .replace('"rlimits": [', '"rlimits": [{"type": "RLIMIT_CORE", "hard": 18446744073709551615, "soft": 18446744073709551615},');
  t.equal(text.match(/: 18446744073709551615\b/g)?.length, 2);
  fs.writeFileSync(s.config, text);
  const r = inject(s);
  t.equal(r.status, 0, r.stderr);
  const after = fs.readFileSync(s.config, 'utf8');
  t.equal(after.match(/: 18446744073709551615\b/g)?.length, 2, 'both rlimit values digit for digit');
  t.match(after, /"n": 1\.0,/);
  t.match(after, /"k": 1e3\n/);
  t.match(after, /"x-unknown": true/);
  const run = runcRun(s.bundle, s.runcRoot);
  t.equal(run.status, 0, run.stderr);
  t.equal(parseEnvOutput(run.stdout).get('CONFIG_VAR'), 'HELLO');
});
