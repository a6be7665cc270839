// `envhook lint` end to end, from the sources and from the bundle: exit status, text and JSON
// output, stdin, unreadable files; no value of the manifest in any output (canaries).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { refused } from '../helpers/refusal.ts';
import { COMPILE_CACHE_ENV } from '../helpers/compile-cache.ts';
import { untapped } from '../helpers/untapped.ts';

const root = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(root, 'node_modules/.bin/node');
const CANARY = 'CANARY_83af';
// Process-heavy (a CLI start per case): room for a busy machine.
t.setTimeout(300_000);

const POD = (annotations: string, runtimeClass = 'envhook') => `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
${annotations}
spec:
  runtimeClassName: ${runtimeClass}
  containers:
    - name: main
      env: [{name: OWN, value: "${CANARY}"}]
  volumes:
    - name: config
      emptyDir: {}
`;

/** Run as an admin runs it, without the test runner's NODE_OPTIONS; the sources with Node's compile cache. */
function envhook(entry: string, args: string[], input?: string) {
  const env = { ...process.env, ...(entry.startsWith('src/') ? COMPILE_CACHE_ENV : {}) };
  return spawnSync(...untapped(NODE, [path.join(root, entry), ...args]), { encoding: 'utf8', timeout: 120_000, cwd: root, input, env });
}

for (const entry of ['src/cli/main.ts', 'dist/envhook.cjs']) {
  t.test(entry, async (t) => {
    const dir = t.testdir({
      'good.yaml': POD(`    envhook.io/env: '{"main": [{"name": "A", "value": "${CANARY} $(OWN)"}]}'`),
      'warn.yaml': POD(`    envhook.io/env: '{"main": [{"name": "A", "value": "${CANARY}"}, {"name": "A", "value": "${CANARY}"}]}'`),
      'bad.yaml': POD(
        `    envhook.io/env: '{"main": [{"name": "A", "value": "${CANARY}", "valueFrom": "${CANARY}"}], "${CANARY}": [${CANARY}'`,
      ),
      'norc.yaml': POD(`    envhook.io/serviceLinks: '{"*": false}'`, '""'),
      'three.yaml': POD(
        `    envhook.io/env: '{"main": [{"name": "A"}, {"name": "B=${CANARY}", "value": "${CANARY}"}, {"name": "C", "valueFrom": {"fileKeyRef": {"volumeName": "config", "path": "a.env", "key": "${CANARY}-1"}}}]}'`,
      ),
    });
    const f = (n: string) => path.join(dir, n);

    let r = envhook(entry, [
      'lint',
      f('good.yaml'),
      ...fs.readdirSync(path.join(root, 'examples/pods')).map((e) => path.join(root, 'examples/pods', e)),
    ]);
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stdout, '');
    t.equal(r.stderr, '0 errors, 0 warnings\n');

    r = envhook(entry, ['lint', f('warn.yaml')]);
    t.equal(r.status, 0, 'warnings only: exit 0');
    t.equal(
      r.stdout,
      `${f('warn.yaml')}:6:5: envhook.io/env /main/1/name: warning: name defined again (first at /main/0): the last one wins\n`,
    );
    t.equal(r.stderr, '0 errors, 1 warning\n');

    r = envhook(entry, ['lint', f('bad.yaml'), f('warn.yaml')]);
    t.equal(r.status, 1, 'an error: exit 1');
    t.equal(r.stdout.split('\n')[0], `${f('bad.yaml')}:6:5: envhook.io/env: is not valid JSON`);
    t.equal(r.stderr, '1 error, 1 warning\n');

    // Every schema error of an annotation, one line each (the node stops at the first).
    r = envhook(entry, ['lint', f('three.yaml')]);
    t.equal(r.status, 1);
    t.equal(
      r.stdout,
      [
        `${f('three.yaml')}:6:5: envhook.io/env /main/0: must have exactly one of "value" or "valueFrom"`,
        `${f('three.yaml')}:6:5: envhook.io/env /main/1/name: must be printable ASCII without '='`,
        `${f('three.yaml')}:6:5: envhook.io/env /main/2/valueFrom/fileKeyRef/key: must be a variable name ([A-Za-z_][A-Za-z0-9_]*)`,
        '',
      ].join('\n'),
    );
    t.equal(r.stderr, '3 errors, 0 warnings\n');

    r = envhook(entry, ['lint', '--format', 'json', '-'], fs.readFileSync(f('norc.yaml'), 'utf8'));
    t.equal(r.status, 1);
    t.same(JSON.parse(r.stdout), [
      {
        file: '<stdin>',
        line: 8,
        column: 3,
        severity: 'error',
        annotation: 'spec.runtimeClassName',
        path: '',
        message:
          'missing: a pod with envhook annotations needs runtimeClassName: envhook in shim mode (containerd passes envhook.io/* annotations to that handler only; use --mode nri for nodes that run envhook nri)',
      },
    ]);
    t.equal(r.stderr, '', 'json: nothing on stderr');

    const json = r.stdout;
    r = envhook(entry, ['lint', '--json', '-'], fs.readFileSync(f('norc.yaml'), 'utf8'));
    t.same([r.status, r.stdout, r.stderr], [1, json, ''], '--json is --format json');
    r = envhook(entry, ['lint', '--json', '--format', 'text', f('norc.yaml')]);
    refused(t, r, "envhook: option '--json' cannot be used with option '--format <format>'\n");

    r = envhook(entry, ['lint', '--mode', 'nri', f('norc.yaml')]);
    t.equal(r.status, 0, 'nri mode: no runtime class needed');

    r = envhook(entry, ['lint', f('missing.yaml')]);
    refused(t, r, `envhook: cannot read ${f('missing.yaml')}: no such file or directory (ENOENT)\n`);
    t.equal(r.stdout, '');

    r = envhook(entry, ['lint', '--mode', 'both', f('good.yaml')]);
    refused(t, r, /^envhook: option '--mode <mode>' argument 'both' is invalid/);

    // The bundle only: the sources start slowly (type stripping), and run the same code.
    for (const name of entry.startsWith('dist/') ? ['good.yaml', 'warn.yaml', 'bad.yaml', 'norc.yaml'] : []) {
      for (const args of [
        ['lint', '--format', 'json'],
        ['convert', '--to', name === 'good.yaml' ? 'annotations' : 'native'],
      ]) {
        const run = envhook(entry, [...args, f(name)]);
        t.notMatch(run.stderr, CANARY, `${args.join(' ')} ${name}: no value on stderr`);
        if (args[0] === 'lint') t.notMatch(run.stdout, CANARY, `${args.join(' ')} ${name}: no value on stdout`);
      }
    }
  });
}
