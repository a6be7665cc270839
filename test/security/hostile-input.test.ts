// Hostile input (docs/design.md#failures, #the-spec-file): config.json and the hook's state JSON as a broken or hostile
// runtime, or a pod author through annotations, could hand them over. Each case: one clear
// line naming the input, never a byte of the input's values, config.json byte-identical.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadSpec, parseSpec } from '../../src/oci/spec.ts';
import { MAX_DEPTH } from '../../src/oci/json.ts';
import { parseState } from '../../src/oci/state.ts';
import { EnvhookError, describeError } from '../../src/errors.ts';
import { RUNC } from '../helpers/bundle.ts';
import {
  CLI,
  NODE24,
  envhookCli,
  fastTempDir,
  frontCreate,
  hookRun,
  makeCanary,
  pool,
  precreateRun,
  readIf,
  runAsync,
  runtimeBundle,
  type CliResult,
  type RuntimeBundle,
} from './helpers.ts';

const canary = makeCanary('SECRET');

/** A realistic config.json (from `runc spec` when available) carrying the canary in env. */
function realisticSpec(): Record<string, any> {
  let spec: Record<string, any> = { ociVersion: '1.0.2', process: { args: ['sh'], env: [] }, root: { path: 'rootfs' }, mounts: [] };
  if (RUNC) {
    const dir = fs.mkdtempSync('/tmp/eh-spec-');
    execFileSync(RUNC, ['spec', '--bundle', dir]);
    spec = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    fs.rmSync(dir, { recursive: true });
  }
  spec.process.env.push(`TOKEN=${canary}`, `Q="${canary}'`);
  spec.annotations = { 'envhook.io/env': JSON.stringify({ app: [{ name: 'A', value: canary }] }), note: canary };
  return spec;
}

/** The message an entry point would print, checked to be one line and free of the canary. */
function checkMessage(t: Test, err: unknown, name: string, want?: RegExp): boolean {
  const line = describeError(err);
  return (
    t.ok(err instanceof EnvhookError, `${name}: an EnvhookError (got ${(err as Error)?.name})`) &&
    t.notMatch(line, /[\r\n]/, `${name}: one line`) &&
    t.notMatch(line, canary, `${name}: no canary in the message`) &&
    t.notMatch(JSON.stringify(serialize(err)), canary, `${name}: no canary in the cause chain`) &&
    (want ? t.match(line, want, `${name}: ${line}`) : true)
  );
}

/** Every message and string field of an error chain (what a careless logger might print). */
function serialize(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error) || depth > 8) return undefined;
  return { name: err.name, message: err.message, stack: err.stack, cause: serialize(err.cause, depth + 1) };
}

t.test('config.json: every truncation of a realistic spec is refused cleanly', async (t) => {
  const full = JSON.stringify(realisticSpec(), null, '\t');
  let tried = 0;
  let passed = 0;
  for (let n = 0; n < full.length; n++) {
    const text = full.slice(0, n);
    tried++;
    try {
      parseSpec(text, 'config.json');
      t.fail(`prefix ${n} accepted`);
    } catch (err) {
      const line = describeError(err);
      if (
        err instanceof EnvhookError &&
        !/[\r\n]/.test(line) &&
        !line.includes(canary) &&
        /^config\.json(:| is not valid JSON)/.test(line) &&
        !JSON.stringify(serialize(err)).includes(canary)
      )
        passed++;
      else t.fail(`prefix ${n}: ${line}`);
    }
  }
  t.equal(passed, tried, `truncations: ${passed}/${tried} refused with one clean line`);
  t.doesNotThrow(() => parseSpec(full, 'config.json'), 'the whole file is accepted');
});

t.test('config.json: hostile shapes, through loadSpec, file byte-identical', async (t) => {
  const deep = (n: number) => '{"x":' + '['.repeat(n) + ']'.repeat(n) + '}';
  const cases: [string, string | Buffer | null, RegExp][] = [
    ['missing', null, /^cannot read \S+config\.json: no such file or directory \(ENOENT\)$/],
    ['empty', '', /config\.json is not valid JSON \(empty\)$/],
    ['blank', ' \n\t', /config\.json is not valid JSON \(empty\)$/],
    ['truncated', '{"process":{"env":["A=' + canary, /config\.json is not valid JSON \((truncated|at offset \d+)\)$/],
    ['garbage with canary', canary + '}', /config\.json is not valid JSON( \(at offset \d+\))?$/],
    ['unquoted canary value', `{"process":{"env":[${canary}]}}`, /config\.json is not valid JSON( \(at offset \d+\))?$/],
    ['trailing garbage', `{"a":1} ${canary}`, /config\.json is not valid JSON \(at offset \d+\)$/],
    ['an array', '[1,2]', /config\.json: not a JSON object$/],
    ['a string', JSON.stringify(canary), /config\.json: not a JSON object$/],
    ['a number', '18446744073709551615', /config\.json: not a JSON object$/],
    ['null', 'null', /config\.json: not a JSON object$/],
    ['true', 'true', /config\.json: not a JSON object$/],
    ['env not an array', `{"process":{"env":"${canary}"}}`, /config\.json: \/process\/env: must be array$/],
    ['env entry a number', '{"process":{"env":[1]}}', /config\.json: \/process\/env\/0: must be string$/],
    ['env entry an object', `{"process":{"env":[{"v":"${canary}"}]}}`, /config\.json: \/process\/env\/0: must be string$/],
    ['process not an object', `{"process":"${canary}"}`, /config\.json: \/process: must be object$/],
    ['annotations not an object', '{"annotations":[]}', /config\.json: \/annotations: must be object$/],
    ['annotation value a number', '{"annotations":{"envhook.io/env":1}}', /config\.json: \/annotations\/envhook.io~1env: must be string$/],
    [
      'annotation value an object',
      `{"annotations":{"envhook.io/env":{"a":"${canary}"}}}`,
      /config\.json: \/annotations\/envhook.io~1env: must be string$/,
    ],
    ['mounts not an array', '{"mounts":{}}', /config\.json: \/mounts: must be array$/],
    ['mount without destination', '{"mounts":[{"source":"/x"}]}', /config\.json: \/mounts\/0: missing field "destination"$/],
    [
      'uidMappings negative',
      '{"linux":{"uidMappings":[{"containerID":0,"hostID":-1,"size":1}]}}',
      /config\.json: \/linux\/uidMappings\/0\/hostID: must be >= 0$/,
    ],
    [
      'uidMappings fractional',
      '{"linux":{"uidMappings":[{"containerID":0.5,"hostID":1,"size":1}]}}',
      /config\.json: \/linux\/uidMappings\/0\/containerID: must be integer$/,
    ],
    [`nesting ${MAX_DEPTH + 1} levels`, deep(MAX_DEPTH), new RegExp(`config\\.json nests deeper than ${MAX_DEPTH} levels$`)],
    ['nesting 10,000 levels', deep(10_000), new RegExp(`config\\.json nests deeper than ${MAX_DEPTH} levels$`)],
    ['nesting 10,000 levels in an annotation value (a string: fine)', JSON.stringify({ annotations: { x: '['.repeat(10_000) } }), /^ok$/],
    ['1 MiB annotation', JSON.stringify({ annotations: { 'envhook.io/env': 'x'.repeat(1024 * 1024) } }), /^ok$/],
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from('{"process":{"env":["A='), Buffer.from([0xff, 0xfe]), Buffer.from(canary + '"]}}')]),
      /^ok$/,
    ],
    ['byte-order mark', '\ufeff{}', /config\.json is not valid JSON( \(at offset 0\))?$/],
    ['__proto__ key', '{"__proto__":{"polluted":true},"annotations":{"__proto__":"x"}}', /^ok$/],
  ];
  let passed = 0;
  for (const [name, text, want] of cases) {
    const dir = t.testdir(text === null ? {} : { 'config.json': text });
    const before = text === null ? null : fs.readFileSync(path.join(dir, 'config.json'));
    let err: unknown;
    try {
      loadSpec(dir);
    } catch (e) {
      err = e;
    }
    const ok = want.source === '^ok$' ? t.equal(err, undefined, `${name}: accepted`) : checkMessage(t, err, name, want);
    const same = before === null || t.same(fs.readFileSync(path.join(dir, 'config.json')), before, `${name}: byte-identical`);
    if (ok && same) passed++;
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
  t.equal(passed, cases.length, `config.json shapes: ${passed}/${cases.length} passed`);
});

t.test('config.json that is not a regular file is refused without blocking', async (t) => {
  const dir = t.testdir({ fifo: {}, dev: {}, dir: { 'config.json': {} } });
  execFileSync('mkfifo', [path.join(dir, 'fifo/config.json')]);
  fs.symlinkSync('/dev/zero', path.join(dir, 'dev/config.json'));
  for (const sub of ['fifo', 'dev', 'dir']) {
    // A blocking open (the FIFO has no writer) or a read of /dev/zero would never return.
    t.throws(() => loadSpec(path.join(dir, sub)), { message: /config\.json: not a regular file$/ }, sub);
  }
});

t.test('state JSON (hook stdin): malformed, truncated, missing bundle', async (t) => {
  const state = JSON.stringify({
    ociVersion: '1.0.2',
    id: 'c1',
    status: 'creating',
    pid: 42,
    bundle: '/run/b',
    annotations: { x: canary },
  });
  const cases: [string, string, RegExp][] = [
    ['empty', '', /^state is not valid JSON \(empty\)$/],
    ['malformed', `{bundle: ${canary}}`, /^state is not valid JSON/],
    ['not an object', '[]', /^state: \/: must be object$/],
    ['missing bundle', JSON.stringify({ id: 'c1', note: canary }), /^state: \/: missing field "bundle"$/],
    ['empty bundle', '{"bundle":""}', /^state: \/bundle: must NOT have fewer than 1 characters$/],
    ['bundle a number', '{"bundle":1}', /^state: \/bundle: must be string$/],
    ['annotations with a non-string', `{"bundle":"/b","annotations":{"a":{"v":"${canary}"}}}`, /^state: \/annotations\/a: must be string$/],
    [
      'nesting 10,000 levels',
      '{"bundle":"/b","x":' + '['.repeat(10_000) + ']'.repeat(10_000) + '}',
      /^state nests deeper than \d+ levels$/,
    ],
  ];
  for (let n = 0; n < state.length; n++) cases.push([`truncated at ${n}`, state.slice(0, n), /^state (is not valid JSON|: )/]);
  let passed = 0;
  for (const [name, text, want] of cases) {
    let err: unknown;
    try {
      parseState(text, 'state');
    } catch (e) {
      err = e;
    }
    if (checkMessage(t, err, name, want)) passed++;
  }
  t.equal(passed, cases.length, `state JSON: ${passed}/${cases.length} passed`);
});

/** A bundle for `envhook inject`: config.json with container `app`, emptyDir `cfg` via --volume. */
function injectBundle(root: string, name: string, annotations: Record<string, string> | null, raw?: string): { dir: string; vol: string } {
  const dir = path.join(root, name);
  const vol = path.join(dir, 'cfg');
  fs.mkdirSync(vol, { recursive: true });
  fs.writeFileSync(path.join(vol, 'app.env'), `A='${canary}'\n`);
  if (raw !== undefined) fs.writeFileSync(path.join(dir, 'config.json'), raw);
  else if (annotations) {
    const spec = {
      ociVersion: '1.0.2',
      process: { args: ['sh'], env: ['PATH=/bin', `IMG=${canary}`] },
      annotations: { 'io.kubernetes.cri.container-name': 'app', ...annotations },
    };
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(spec, null, '\t'));
  }
  return { dir, vol };
}

const ENV = 'envhook.io/env';
const env = (list: unknown, container = 'app') => ({ [ENV]: JSON.stringify({ [container]: list }) });
const fileRef = (over: Record<string, unknown>) =>
  env([{ name: 'X', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'app.env', key: 'A', ...over } } }]);
const owners = (entries: unknown) => ({ 'envhook.io/volumeOwners': JSON.stringify(entries) });

t.test('envhook inject on hostile input: one clear line, status 1, config.json byte-identical', async (t) => {
  const root = fastTempDir('envhook-hostile-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const deepArray = '['.repeat(10_000) + ']'.repeat(10_000);
  // [name, annotations (or null: no config.json), raw config.json text, expected stderr]
  const cases: [string, Record<string, string> | null, string | undefined, RegExp][] = [
    ['config.json missing', null, undefined, /^envhook: cannot read \S+\/config\.json: no such file or directory \(ENOENT\)$/],
    [
      'config.json truncated',
      null,
      `{"process":{"env":["A=${canary}`,
      /^envhook: \S+\/config\.json is not valid JSON \((truncated|at offset \d+)\)$/,
    ],
    ['config.json not an object', null, JSON.stringify([canary]), /^envhook: \S+\/config\.json: not a JSON object$/],
    ['config.json nests 10,000 levels', null, `{"x":${deepArray}}`, /^envhook: \S+\/config\.json nests deeper than \d+ levels$/],
    [
      'annotation not JSON',
      { [ENV]: `{app: ${canary}}` },
      undefined,
      /^envhook: annotation "envhook\.io\/env" is not valid JSON( \(at offset \d+\))?$/,
    ],
    [
      'annotation truncated',
      { [ENV]: `{"app":[{"name":"A","value":"${canary}` },
      undefined,
      /^envhook: annotation "envhook\.io\/env" is not valid JSON \(at offset \d+\)$/,
    ],
    ['annotation empty', { [ENV]: '' }, undefined, /^envhook: annotation "envhook\.io\/env" is not valid JSON \(empty\)$/],
    ['annotation a string', { [ENV]: JSON.stringify(canary) }, undefined, /^envhook: annotation "envhook\.io\/env": \/: must be object$/],
    [
      'annotation an array',
      { [ENV]: JSON.stringify([{ name: 'A', value: canary }]) },
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/: must be object$/,
    ],
    [
      'entry list an object',
      env({ name: 'A', value: canary }),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app: must be array$/,
    ],
    [
      'value a number',
      env([{ name: 'A', value: 1 }]),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/value: must be string$/,
    ],
    [
      'value an object',
      env([{ name: 'A', value: { v: canary } }]),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/value: must be string$/,
    ],
    [
      'name a number',
      env([{ name: 7, value: canary }]),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/name: must be string$/,
    ],
    [
      'optional a string',
      fileRef({ optional: 'yes' }),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/valueFrom\/fileKeyRef\/optional: must be boolean$/,
    ],
    [
      'annotation 1 MiB',
      { [ENV]: JSON.stringify({ app: [{ name: 'A', value: canary + 'x'.repeat(1024 * 1024) }] }) },
      undefined,
      /^envhook: annotation "envhook\.io\/env": larger than \d+ bytes$/,
    ],
    [
      'annotation nests 10,000 levels',
      { [ENV]: deepArray },
      undefined,
      /^envhook: annotation "envhook\.io\/env" nests deeper than 512 levels$/,
    ],
    [
      'annotation value nests 10,000 levels',
      { [ENV]: `{"app":[{"name":"A","value":${deepArray}}]}` },
      undefined,
      /^envhook: annotation "envhook\.io\/env" nests deeper than 512 levels$/,
    ],
    [
      'annotation object nests 10,000 levels',
      { [ENV]: '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000) },
      undefined,
      /^envhook: annotation "envhook\.io\/env" nests deeper than 512 levels$/,
    ],
    [
      'volumeName with /',
      fileRef({ volumeName: 'cfg/../../etc' }),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/valueFrom\/fileKeyRef\/volumeName: must be a DNS label/,
    ],
    [
      'volumeName ..',
      fileRef({ volumeName: '..' }),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/valueFrom\/fileKeyRef\/volumeName: must be a DNS label/,
    ],
    [
      'path absolute',
      fileRef({ path: '/etc/shadow' }),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/valueFrom\/fileKeyRef\/path: must be a relative path/,
    ],
    [
      'path with ..',
      fileRef({ path: 'a/../../../etc/shadow' }),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/valueFrom\/fileKeyRef\/path: must be a relative path/,
    ],
    [
      'path is ..',
      fileRef({ path: '..' }),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/valueFrom\/fileKeyRef\/path: must be a relative path/,
    ],
    [
      'path with NUL',
      fileRef({ path: 'app.env\u0000x' }),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/app\/0\/valueFrom\/fileKeyRef\/path: must be a relative path/,
    ],
    [
      'container key invalid',
      env([{ name: 'A', value: canary }], '../App'),
      undefined,
      /^envhook: annotation "envhook\.io\/env": \/\.\.~1App: container name must be a DNS label/,
    ],
    ['UID negative', owners([{ volume: 'keys', defaultUser: -1 }]), undefined, /^envhook: annotation "envhook\.io\/volumeOwners"/],
    ['UID fractional', owners([{ volume: 'keys', defaultUser: 1.5 }]), undefined, /^envhook: annotation "envhook\.io\/volumeOwners"/],
    [
      'UID above 2147483647',
      owners([{ volume: 'keys', defaultUser: 2147483648 }]),
      undefined,
      /^envhook: annotation "envhook\.io\/volumeOwners"/,
    ],
    [
      'item UID huge',
      owners([{ volume: 'keys', items: [{ path: 'k', user: 1e300 }] }]),
      undefined,
      /^envhook: annotation "envhook\.io\/volumeOwners"/,
    ],
    ['owners not JSON', { 'envhook.io/volumeOwners': `[${canary}` }, undefined, /^envhook: annotation "envhook\.io\/volumeOwners"/],
  ];
  const results = await pool(
    cases.map(([name, annotations, raw], i) => async () => {
      const { dir, vol } = injectBundle(root, `c${i}`, annotations, raw);
      const config = path.join(dir, 'config.json');
      const before = fs.existsSync(config) ? fs.readFileSync(config) : null;
      const log = path.join(dir, 'log');
      const r = await envhookCli(['inject', '--bundle', dir, '--volume', `cfg=${vol}`, '--log-file', log, '--log-level', 'debug']);
      const after = fs.existsSync(config) ? fs.readFileSync(config) : null;
      return {
        name,
        r,
        same: before === null ? after === null : after !== null && before.equals(after),
        logged: fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '',
      };
    }),
  );
  let passed = 0;
  results.forEach(({ name, r, same, logged }, i) => {
    const want = cases[i]![3];
    const ok =
      t.equal(r.code, 1, `${name}: status 1`) &&
      t.match(r.err, /^envhook: [^\n]*\n$/, `${name}: one line`) &&
      t.match(r.err.trimEnd(), want, `${name}: ${r.err.trimEnd()}`) &&
      t.equal(r.out, '', `${name}: nothing on stdout`) &&
      t.ok(same, `${name}: config.json byte-identical`) &&
      t.notMatch(r.err + logged, canary, `${name}: no canary in stderr or the debug log`);
    if (ok) passed++;
  });
  t.equal(passed, cases.length, `inject hostile input: ${passed}/${cases.length} passed`);
});

t.test('envhook inject: a container that is not in the annotation, or named like an Object property, is left alone', async (t) => {
  const root = fastTempDir('envhook-hostile-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  let passed = 0;
  // A pod-wide annotation lists some containers; the others (the init container writing the
  // file, sidecars) must start untouched, not fail.
  for (const container of ['other', 'constructor', 'prototype', 'valueof']) {
    const annotations = { ...env([{ name: 'A', value: canary }]), 'io.kubernetes.cri.container-name': container };
    const { dir, vol } = injectBundle(root, container, annotations);
    const before = fs.readFileSync(path.join(dir, 'config.json'));
    const r = await envhookCli(['inject', '--bundle', dir, '--volume', `cfg=${vol}`]);
    const ok =
      t.equal(r.code, 0, `${container}: success (${r.err.trim()})`) &&
      t.same(fs.readFileSync(path.join(dir, 'config.json')), before, `${container}: config.json byte-identical`) &&
      t.equal(r.err + r.out, '', `${container}: silent`);
    if (ok) passed++;
  }
  t.equal(passed, 4, `containers not in the annotation: ${passed}/4 untouched`);
});

t.test('a run that changes nothing never rewrites config.json, whatever its layout', async (t) => {
  const { loadSpec: load, flushSpec: flush } = await import('../../src/oci/spec.ts');
  const { runPipeline } = await import('../../src/bundle/spec-pipeline.ts');
  const { silentLogger } = await import('../../src/log.ts');
  const settings = { kubeletRoot: '/nonexistent-kubelet', runtime: 'runc', logFile: undefined, logLevel: 'silent' as const };
  const layouts = [
    '{"a":1,"b":[1,2]}',
    '{"a":1,"b":[1,2]}\n',
    '{\n\t"a": 1,\n\t"b": [1, 2]\n}',
    '{\n  "a": 1,\n  "b": [\n    1,\n    2\n  ]\n}\n',
    '{ "a" : 1 , "b" : [ 1 , 2 ] }',
    '{\r\n  "a": 1,\r\n  "b": [1, 2]\r\n}\r\n',
    '{"a":1.0,"b":[1,2e0]}',
  ];
  for (const text of layouts) {
    const dir = t.testdir({ 'config.json': text });
    const ino = fs.statSync(path.join(dir, 'config.json')).ino;
    const loaded = load(dir);
    // The whole pipeline, as inject runs it, on a spec that asks for nothing.
    flush(loaded, runPipeline(loaded.spec, { settings, stage: 'inject', log: silentLogger }).spec);
    t.equal(fs.statSync(path.join(dir, 'config.json')).ino, ino, `not rewritten: ${JSON.stringify(text)}`);
    t.equal(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'), text);
  }
});

t.test('$(VAR) expansion bombs are stopped early: bounded memory, clear line, nothing written', async (t) => {
  const root = fastTempDir('envhook-bomb-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const fromFile = { name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'big.env', key: 'A' } } };
  const bombs: [string, unknown[], RegExp][] = [
    [
      '$(A) × 8000 over a 32 KiB value (256 MiB)',
      [fromFile, { name: 'B', value: '$(A)'.repeat(8000) }],
      /^envhook: env "B": longer than 131071 bytes after \$\(VAR\) expansion/,
    ],
    [
      'chained: B = $(A)×3, C = $(B)×8000',
      [fromFile, { name: 'B', value: '$(A)'.repeat(3) }, { name: 'C', value: '$(B)'.repeat(8000) }],
      /^envhook: env "C": longer than 131071 bytes/,
    ],
    [
      '64 entries of 96 KiB (6 MiB total)',
      [fromFile, ...Array.from({ length: 64 }, (_, i) => ({ name: `V${i}`, value: '$(A)'.repeat(3) }))],
      /^envhook: the container's environment would be larger than 6291456 bytes/,
    ],
  ];
  const results = await pool(
    bombs.map(([name, list], i) => async () => {
      const { dir, vol } = injectBundle(root, `b${i}`, env(list));
      fs.writeFileSync(path.join(vol, 'big.env'), `A='${canary}${'x'.repeat(32 * 1024 - canary.length)}'\n`);
      const before = fs.readFileSync(path.join(dir, 'config.json'));
      // GNU time is not everywhere: measure the peak RSS with Node's own resource usage.
      const r = await runAsync(NODE24, [
        '-e',
        `process.argv.splice(1, 0, ${JSON.stringify(CLI)}); require(${JSON.stringify(
          CLI,
        )}); process.on('exit', () => process.stderr.write('maxrss=' + process.resourceUsage().maxRSS + '\\n'))`,
        '--',
        'inject',
        '--bundle',
        dir,
        '--volume',
        `cfg=${vol}`,
      ]);
      return { name, r, same: before.equals(fs.readFileSync(path.join(dir, 'config.json'))) };
    }),
  );
  results.forEach(({ name, r, same }, i) => {
    const [line, rss] = r.err.split('\n');
    t.equal(r.code, 1, `${name}: status 1`);
    t.match(line, bombs[i]![2], `${name}: ${line}`);
    t.ok(same, `${name}: config.json byte-identical`);
    t.notMatch(r.err, canary, `${name}: no canary`);
    const kb = Number(/maxrss=(\d+)/.exec(rss ?? '')?.[1]);
    t.ok(kb < 200 * 1024, `${name}: peak RSS ${Math.round(kb / 1024)} MiB`);
  });
});

t.test('control characters from annotations never reach stderr raw (terminal escapes, line separators)', async (t) => {
  const root = fastTempDir('envhook-ctl-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const nasty = '\u001b[31mX\u0007\r\n\u0085\u2028\u2029\u009b';
  const cases: Record<string, string>[] = [
    { [ENV]: JSON.stringify({ [nasty]: [] }) },
    { [ENV]: JSON.stringify({ app: [{ name: 'A', value: 'v', [nasty]: 1 }] }) },
    { 'envhook.io/volumeOwners': JSON.stringify([{ volume: nasty, defaultUser: 1 }]) },
    { 'envhook.io/volumeOwners': JSON.stringify([{ volume: 'keys', items: [{ path: `a/${nasty}/..`, user: 1 }] }]) },
    { [ENV]: JSON.stringify({ app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: `${nasty}.env`, key: 'A' } } }] }) },
  ];
  const results = await pool(
    cases.map(
      (a, i) => async () =>
        envhookCli(['inject', '--bundle', injectBundle(root, `n${i}`, a).dir, '--volume', `cfg=${path.join(root, `n${i}`, 'cfg')}`]),
    ),
  );
  results.forEach((r, i) => {
    t.equal(r.code, 1, `case ${i}: status 1`);
    t.notMatch(r.err.slice(0, -1), /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/, `case ${i}: no control character: ${JSON.stringify(r.err)}`);
  });
});

t.test('runtime entry points on hostile input: hook state, precreate stdin, shim config.json', async (t) => {
  const root = fastTempDir('envhook-rt-hostile-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const deep = '['.repeat(10_000) + ']'.repeat(10_000);
  const good = {
    [ENV]: JSON.stringify({ app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'app.env', key: 'A' } } }] }),
  };
  type Run = (b: RuntimeBundle) => Promise<CliResult & { same?: boolean }>;
  /** The front's create; `same`: config.json byte-identical to what it was just before. */
  const shimChecked = async (b: RuntimeBundle) => {
    const before = fs.existsSync(b.config) ? fs.readFileSync(b.config) : null;
    const r = await frontCreate(b);
    const after = fs.existsSync(b.config) ? fs.readFileSync(b.config) : null;
    return { ...r, same: before === null ? after === null : after !== null && before.equals(after) };
  };
  const state = (o: unknown) => (typeof o === 'string' ? o : JSON.stringify(o));
  const cases: [string, Run, RegExp][] = [
    ['hook: state empty', (b) => hookRun(b, ''), /^envhook: container state on stdin is not valid JSON \(empty\)$/],
    ['hook: state malformed', (b) => hookRun(b, `{bundle: ${canary}}`), /^envhook: container state on stdin is not valid JSON/],
    [
      'hook: state truncated',
      (b) => hookRun(b, `{"ociVersion":"1.0.2","id":"c1","bundle":"${b.bundle}`),
      /^envhook: container state on stdin is not valid JSON/,
    ],
    [
      'hook: state missing bundle',
      (b) => hookRun(b, state({ id: 'c1', annotations: { a: canary } })),
      /^envhook: container state on stdin: \/: missing field "bundle"$/,
    ],
    ['hook: state not an object', (b) => hookRun(b, '[1]'), /^envhook: container state on stdin: \/: must be object$/],
    [
      'hook: state nests 10,000 levels',
      (b) => hookRun(b, `{"bundle":"${b.bundle}","x":${deep}}`),
      /^envhook: container state on stdin nests deeper than 512 levels$/,
    ],
    [
      'hook: bundle does not exist',
      (b) => hookRun(b, state({ bundle: path.join(b.dir, 'nope') })),
      /^envhook: cannot read \S+\/nope\/config\.json: no such file or directory \(ENOENT\)$/,
    ],
    [
      'hook: env requested, not applied',
      (b) => hookRun(b),
      /^envhook: env requested by annotation "envhook\.io\/env" was not applied before the runtime's create: /,
    ],
    [
      'hook: forged applied mark',
      async (b) => {
        const s = JSON.parse(fs.readFileSync(b.config, 'utf8'));
        s.annotations['envhook.io/applied'] = 'sha256:' + '0'.repeat(32);
        fs.writeFileSync(b.config, JSON.stringify(s));
        return hookRun(b);
      },
      /belongs to other annotations/,
    ],
    ['precreate: empty stdin', (b) => precreateRun(b, ''), /^envhook: config on stdin is not valid JSON \(empty\)$/],
    ['precreate: truncated', (b) => precreateRun(b, `{"process":{"env":["A=${canary}`), /^envhook: config on stdin is not valid JSON/],
    ['precreate: not an object', (b) => precreateRun(b, JSON.stringify([canary])), /^envhook: config on stdin: not a JSON object$/],
    ['precreate: nests 10,000 levels', (b) => precreateRun(b, `{"x":${deep}}`), /^envhook: config on stdin nests deeper than 512 levels$/],
    [
      'precreate: annotation not JSON',
      (b) => precreateRun(b, fs.readFileSync(b.config, 'utf8').replace(/"envhook\.io\/env": "[^\n]*"/, `"envhook.io/env": "{${canary}"`)),
      /^envhook: annotation "envhook\.io\/env" is not valid JSON/,
    ],
    [
      'shim: config.json missing',
      async (b) => {
        fs.rmSync(b.config);
        return shimChecked(b);
      },
      /^envhook: cannot read \S+\/config\.json: no such file or directory \(ENOENT\)$/,
    ],
    // The front hands envhook only a config.json that may hold an envhook.io/ key (a broken one
    // without it is the runtime's to report): these carry the key before the damage.
    [
      'shim: config.json truncated',
      async (b) => {
        fs.writeFileSync(b.config, `{"annotations":{"envhook.io/env":"{}"},"process":{"env":["A=${canary}`);
        return shimChecked(b);
      },
      /^envhook: \S+\/config\.json is not valid JSON/,
    ],
    [
      'shim: config.json not an object',
      async (b) => {
        fs.writeFileSync(b.config, '["envhook.io/env"]');
        return shimChecked(b);
      },
      /^envhook: \S+\/config\.json: not a JSON object$/,
    ],
    [
      'shim: annotation 1 MiB',
      async (b) => {
        const s = JSON.parse(fs.readFileSync(b.config, 'utf8'));
        s.annotations[ENV] = JSON.stringify({ app: [{ name: 'A', value: canary + 'x'.repeat(1 << 20) }] });
        fs.writeFileSync(b.config, JSON.stringify(s));
        return shimChecked(b);
      },
      /^envhook: annotation "envhook\.io\/env": larger than \d+ bytes$/,
    ],
    [
      'shim: path with ..',
      async (b) => {
        const s = JSON.parse(fs.readFileSync(b.config, 'utf8'));
        s.annotations[ENV] = JSON.stringify({
          app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: '../../../../etc/shadow', key: 'A' } } }],
        });
        fs.writeFileSync(b.config, JSON.stringify(s));
        return shimChecked(b);
      },
      /path: must be a relative path/,
    ],
    [
      'shim: pod UID annotation disagrees',
      async (b) => {
        const s = JSON.parse(fs.readFileSync(b.config, 'utf8'));
        s.annotations['io.kubernetes.cri.sandbox-uid'] = 'other-pod';
        fs.writeFileSync(b.config, JSON.stringify(s));
        return shimChecked(b);
      },
      /^envhook: pod UID annotation "other-pod" disagrees with the kubelet mounts/,
    ],
    [
      'shim: UID above 2147483647',
      async (b) => {
        const s = JSON.parse(fs.readFileSync(b.config, 'utf8'));
        s.annotations['envhook.io/volumeOwners'] = JSON.stringify([{ volume: 'keys', defaultUser: 2147483648 }]);
        fs.writeFileSync(b.config, JSON.stringify(s));
        return shimChecked(b);
      },
      /^envhook: annotation "envhook\.io\/volumeOwners": \/0\/defaultUser: /,
    ],
  ];
  const results = await pool(
    cases.map(([name, run], i) => async () => {
      const b = runtimeBundle(path.join(root, `r${i}`), `A='${canary}'\n`, good);
      const r = await run(b);
      const after = fs.existsSync(b.config) ? fs.readFileSync(b.config) : null;
      return { name, r, b, after };
    }),
  );
  let passed = 0;
  for (const [i, { name, r, b }] of results.entries()) {
    const isShim = name.startsWith('shim');
    const runcLog = readIf(b.runcLog);
    const ok =
      t.equal(r.code, 1, `${name}: status 1`) &&
      t.match(r.err, /^envhook: [^\n]*\n$/, `${name}: one line`) &&
      t.match(r.err.trimEnd(), cases[i]![2], `${name}: ${r.err.trimEnd()}`) &&
      t.equal(r.out, '', `${name}: nothing on stdout`) &&
      t.notMatch(r.err + runcLog + readIf(b.pinoLog), canary, `${name}: no canary`) &&
      (!isShim ||
        (t.notOk(fs.existsSync(b.ran), `${name}: the real runtime did not run`) &&
          t.equal(r.same, true, `${name}: config.json byte-identical`) &&
          t.match(runcLog, /^\{"level":"error","msg":"envhook: [^\n]*\n$/, `${name}: error line in runc --log`)));
    if (ok) passed++;
  }
  t.equal(passed, cases.length, `runtime entry points hostile input: ${passed}/${cases.length} passed`);
});
