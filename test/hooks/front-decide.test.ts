// hooks/envhook-runtime decides with grep, without Node, whether a create/run needs envhook:
// a table of tricky config.json files, each asserting that envhook ran or did not, proved by a
// counting ENVHOOK_BIN (one line a call) and by envhook's own log, under dash, busybox ash and
// bash --posix. A false "nothing to do" would start a container without its env, so every
// doubtful file must reach envhook.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { BUSYBOX, whichSync } from '../helpers/bundle.ts';
import { countingEnvhook, fakeExecutable, runFront } from '../helpers/shim/front.ts';

// About 100 runs of the front, a third of them starting envhook: more than the default 120 s on
// a machine shared with other test runs.
t.setTimeout(300_000);

const SHELLS: [string, string[] | undefined][] = [
  ['dash', whichSync('dash') ? ['dash'] : undefined],
  ['busybox ash', BUSYBOX ? [BUSYBOX, 'sh'] : undefined],
  ['bash --posix', whichSync('bash') ? ['bash', '--posix'] : undefined],
];

const ENV = JSON.stringify(JSON.stringify({ app: [{ name: 'A', value: 'CANARY-decide-71c3' }] }));
const CTRD = '"io.kubernetes.cri.container-name":"app","io.kubernetes.cri.sandbox-uid":"u1","io.kubernetes.cri.container-type":"container"';
const SANDBOX_CTRD = '"io.kubernetes.cri.container-type":"sandbox","io.kubernetes.cri.sandbox-id":"s1"';
const pretty = (spec: unknown) => JSON.stringify(spec, null, '\t');

/** [case, config.json text (undefined: no file), envhook must run]. */
const CASES: [string, string | undefined, boolean][] = [
  ['compact, envhook.io/env', `{"ociVersion":"1.0.2","annotations":{${CTRD},"envhook.io/env":${ENV}}}`, true],
  [
    'pretty (tabs), envhook.io/envFrom',
    pretty({ ociVersion: '1.0.2', annotations: { 'io.kubernetes.container.name': 'app', 'envhook.io/envFrom': '{}' } }),
    true,
  ],
  [
    'pretty (spaces), CRLF, envhook.io/serviceLinks',
    JSON.stringify({ annotations: { 'envhook.io/serviceLinks': '{"*":false}' } }, null, 2).replace(/\n/g, '\r\n'),
    true,
  ],
  ['the key with \\/', `{"annotations":{${CTRD},"envhook.io\\/env":${ENV}}}`, true],
  ['the key with \\u0065 (e)', `{"annotations":{${CTRD},"\\u0065nvhook.io/env":${ENV}}}`, true],
  ['the key with \\u002E (., upper-case hex)', `{"annotations":{${CTRD},"envhook\\u002Eio/env":${ENV}}}`, true],
  ['the key with \\u002f (/)', `{"annotations":{${CTRD},"envhook.io\\u002fenv":${ENV}}}`, true],
  ['the key with \\u006b (k)', `{"annotations":{${CTRD},"envhoo\\u006b.io/env":${ENV}}}`, true],
  [
    'a value with the text \\u0065 (an escaped backslash): doubtful, so envhook',
    `{"process":{"args":["echo","\\\\u0065"]},"annotations":{${CTRD}}}`,
    true,
  ],
  ['a value that starts with envhook.io: doubtful, so envhook', `{"annotations":{${CTRD},"docs":"envhook.io/env"}}`, true],
  [
    'envhook.io only inside values',
    `{"process":{"args":["sh","-c","curl https://envhook.io/env"],"env":["DOCS=see envhook.io/env"]},"annotations":{${CTRD},"x":"an \\"envhook.io/env\\" key"}}`,
    false,
  ],
  ['no annotations at all', '{"ociVersion":"1.0.2","process":{"args":["true"]}}', false],
  ['an unannotated containerd container', `{"annotations":{${CTRD}}}`, false],
  [
    'an unannotated CRI-O container, pretty',
    pretty({
      annotations: {
        'io.kubernetes.container.name': 'app',
        'io.kubernetes.pod.uid': 'u1',
        'io.kubernetes.cri-o.ContainerType': 'container',
      },
    }),
    false,
  ],
  [
    "Go's HTML escapes in values (\\u0026 \\u003c \\u003e)",
    `{"process":{"env":["Q=a\\u0026b\\u003c\\u003e"]},"annotations":{${CTRD}}}`,
    false,
  ],
  ['other escapes (\\u0041, \\u2028)', `{"process":{"env":["Q=\\u0041\\u2028"]},"annotations":{${CTRD}}}`, false],
  [
    "containerd's sandbox, with envhook annotations (pod_annotations copies them)",
    `{"annotations":{${SANDBOX_CTRD},"envhook.io/env":${ENV}}}`,
    false,
  ],
  ["CRI-O's sandbox, pretty", pretty({ annotations: { 'io.kubernetes.cri-o.ContainerType': 'sandbox', 'envhook.io/env': '{}' } }), false],
  [
    'a sandbox key/value spoofed inside another string',
    `{"annotations":{${CTRD},"x":"\\"io.kubernetes.cri.container-type\\":\\"sandbox\\"","envhook.io/env":${ENV}}}`,
    true,
  ],
  [
    'a sandbox spoofed inside the env annotation',
    `{"annotations":{${CTRD},"envhook.io/env":"{\\"io.kubernetes.cri.container-type\\": \\"sandbox\\"}"}}`,
    true,
  ],
  ['container-type "container"', `{"annotations":{"io.kubernetes.cri.container-type":"container","envhook.io/env":${ENV}}}`, true],
  [
    'sandbox key and value on two lines: doubtful, so envhook',
    `{"annotations":{"io.kubernetes.cri.container-type":\n"sandbox","envhook.io/env":${ENV}}}`,
    true,
  ],
  [
    'already applied (NRI, an earlier create)',
    `{"annotations":{${CTRD},"envhook.io/env":${ENV},"envhook.io/applied":"sha256:0123"}}`,
    false,
  ],
  ['"envhook.io/applied" only inside a value', `{"annotations":{${CTRD},"envhook.io/env":${ENV},"x":"\\"envhook.io/applied\\": 1"}}`, true],
  ['the names mark without the applied mark', `{"annotations":{${CTRD},"envhook.io/applied-env":"{}"}}`, true],
  ['a byte-order mark before an annotated spec', `\ufeff{"annotations":{"envhook.io/env":${ENV}}}`, true],
  ['a byte-order mark before an unannotated spec', `\ufeff{"annotations":{${CTRD}}}`, false],
  ['whitespace around an annotated spec', ` \n\t {"annotations" : { "envhook.io/env" : ${ENV} } } \n\n`, true],
  [
    'whitespace around a sandbox',
    ` \n{ "annotations" : { "io.kubernetes.cri.container-type"\t:  "sandbox" , "envhook.io/env": "{}" } }\n`,
    false,
  ],
  ['no config.json (envhook reports it)', undefined, true],
];

/** realEnvhook: the counter runs envhook itself (its log is checked too); else the counter only. */
function setup(dir: string, realEnvhook = true) {
  const runtime = fakeExecutable(path.join(dir, 'bin/real-runc'), 'runtime');
  const counting = countingEnvhook(path.join(dir, 'envhook'), { built: true, counterOnly: !realEnvhook });
  const log = path.join(dir, 'envhook.log');
  fs.writeFileSync(path.join(dir, 'envhook.json'), '{}');
  const env = {
    ENVHOOK_RUNTIME: runtime,
    ENVHOOK_BIN: counting.bin,
    ENVHOOK_CONFIG: path.join(dir, 'envhook.json'),
    ENVHOOK_LOG_FILE: log,
    ENVHOOK_KUBELET_ROOT: path.join(dir, 'kubelet'),
  };
  const logLines = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
  return { env, calls: counting.calls, logLines, log };
}

// The decision is the front's alone: envhook itself (and its log) runs under the first shell;
// under the others the counter suffices, which keeps the file within its time on a busy machine.
SHELLS.forEach(([name, shell], index) => {
  const real = index === 0;
  t.test(
    `create/run under ${name}: envhook runs exactly for the files that may need it${real ? ', its log says so' : ''}`,
    { skip: shell ? false : `${name} not installed` },
    async (t) => {
      const dir = t.testdir({});
      const s = setup(dir, real);
      CASES.forEach(([what, text, needed], i) => {
        const bundle = path.join(dir, `b${i}`);
        fs.mkdirSync(bundle);
        if (text !== undefined) fs.writeFileSync(path.join(bundle, 'config.json'), text);
        const callsBefore = s.calls().length;
        const logBefore = s.logLines().length;
        const argv = ['--root', '/r', i % 2 ? 'create' : 'run', ...(i % 3 ? ['--bundle', bundle] : [`-b=${bundle}/`]), `c${i}`];
        const r = runFront(argv, s.env, { shell: shell! });
        const ran = s.calls().length - callsBefore;
        const logged = s.logLines().slice(logBefore);
        t.equal(ran, needed ? 1 : 0, `${what}: envhook ${needed ? 'ran once' : 'did not run'}`);
        if (real) t.equal(logged.length > 0, needed, `${what}: envhook's own log ${needed ? 'has its entry' : 'is silent'}`);
        if (!needed) t.same([r.status, r.lines], [0, ['runtime', ...argv]], `${what}: the runtime at once, argv unchanged`);
        else if (r.status === 0) t.same(r.lines, ['runtime', ...argv], `${what}: then the runtime`);
        else t.match(r.stderr, /^envhook: [^\n]+\n$/, `${what}: envhook's one-line error`);
      });
      if (real) t.notMatch(fs.readFileSync(s.log, 'utf8'), /CANARY/, 'no value in the log');
    },
  );
});

t.test('the bundle as runc finds it: --bundle, -b, --bundle=, the working directory, after the id', async (t) => {
  const dir = t.testdir({});
  const s = setup(dir, false);
  const bundle = path.join(dir, 'bundle');
  fs.mkdirSync(bundle);
  fs.writeFileSync(path.join(bundle, 'config.json'), `{"annotations":{"envhook.io/env":${ENV}}}`);
  const plain = path.join(dir, 'plain');
  fs.mkdirSync(plain);
  fs.writeFileSync(path.join(plain, 'config.json'), `{"annotations":{${CTRD}}}`);
  const cases: [string[], string | undefined, boolean][] = [
    [['create', '--bundle', bundle, 'x'], undefined, true],
    [['create', '-b', plain, 'x'], undefined, false],
    [['run', '--bundle=' + plain, '--detach', 'x'], undefined, false],
    [['create', 'x'], bundle, true],
    [['create', 'x'], plain, false],
    [['create', '--bundle=', 'x'], plain, false],
    [['create', '--pid-file', '/p', 'x', '--bundle', plain], undefined, false],
    [['create', '-b', bundle, '-b', plain, 'x'], undefined, false],
    [['create', '--console-socket', '-b', 'x'], plain, false],
    [['run', '-d', '--keep', '--no-subreaper', '--no-pivot', '--no-new-keyring', '--preserve-fds=1', '-b', plain, 'x'], undefined, false],
    [['create', '--detach', '-b', plain, 'x'], undefined, true], // runc refuses it: envhook says so
    [['create', '--frobnicate', '-b', plain, 'x'], undefined, true],
    [['create', '-b'], plain, true],
    [['create', '--', '-b', plain], plain, false],
  ];
  for (const [argv, cwd, needed] of cases) {
    const before = s.calls().length;
    runFront(argv, s.env, { cwd: cwd ?? dir });
    t.equal(
      s.calls().length - before,
      needed ? 1 : 0,
      `${JSON.stringify(argv)} in ${cwd === bundle ? 'the bundle' : cwd === plain ? 'a plain bundle' : 'elsewhere'}`,
    );
  }
});
