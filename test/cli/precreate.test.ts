// `envhook precreate` (Podman): config on stdin, the modified config on stdout and nothing
// else, laid out like the input and lossless.
import t from 'tap';
import path from 'node:path';
import { envhook } from '../helpers/bundle.ts';

// Settings from an empty config file of our own, never the machine's /etc/envhook/config.json.
const config = path.join(t.testdir({ 'config.json': '{}' }), 'config.json');
function precreate(input: string) {
  return envhook(['precreate'], { input, env: { ENVHOOK_CONFIG: config } });
}

t.test('lossless: layout, unknown fields and big integers kept; env applied and marked', async (t) => {
  const input =
    '{\n\t"ociVersion": "1.0.2",\n\t"process": {\n\t\t"env": [\n\t\t\t"PATH=/bin"\n\t\t],\n\t\t"rlimits": [\n\t\t\t{\n\t\t\t\t"type": "RLIMIT_NOFILE",\n\t\t\t\t"hard": 18446744073709551615,\n\t\t\t\t"soft": 1.0\n\t\t\t}\n\t\t]\n\t},\n\t"x-vendor": {\n\t\t"k": [\n\t\t\t1e3\n\t\t]\n\t},\n\t"annotations": {\n\t\t"io.kubernetes.cri.container-name": "app",\n\t\t"envhook.io/env": "{\\"app\\":[{\\"name\\":\\"A\\",\\"value\\":\\"$(PATH):x\\"}]}"\n\t}\n}\n';
  const r = precreate(input);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
  const expected = input
    .replace('"PATH=/bin"\n', '"PATH=/bin",\n\t\t\t"A=/bin:x"\n')
    .replace(
      /\n\t\}\n\}\n$/,
      `,\n\t\t"envhook.io/applied": "${
        JSON.parse(r.stdout).annotations['envhook.io/applied']
      }",\n\t\t"envhook.io/applied-env": "{\\"set\\":[\\"A\\"],\\"removed\\":[]}"\n\t}\n}\n`,
    );
  t.equal(r.stdout, expected);
  t.match(JSON.parse(r.stdout).annotations['envhook.io/applied'], /^sha256:/);
  const compact = precreate(
    '{"ociVersion":"1.0.2","process":{"env":[]},"annotations":{"io.kubernetes.container.name":"app","envhook.io/env":"{\\"app\\":[]}"}}',
  );
  t.match(
    compact.stdout,
    /^\{"ociVersion":"1\.0\.2","process":\{"env":\[\]\},"annotations":\{"io\.kubernetes\.container\.name":"app","envhook\.io\/env":"\{\\"app\\":\[\]\}","envhook\.io\/applied":"sha256:[0-9a-f]+","envhook\.io\/applied-env":"\{\\"set\\":\[\],\\"removed\\":\[\]\}"\}\}$/,
  );
});

t.test('nothing asked: the input comes back byte for byte', async (t) => {
  const input = '{ "ociVersion": "1.0.2",\n  "big": 18446744073709551615, "annotations": { "envhook.io/other": "x" } }';
  const r = precreate(input);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, input);
});

t.test('a sandbox passes through byte for byte', async (t) => {
  const input = '{ "ociVersion": "1.0.2", "annotations": { "io.kubernetes.cri-o.ContainerType": "sandbox" } }';
  const r = precreate(input);
  t.equal(r.status, 0);
  t.equal(r.stdout, input);
});

t.test('failures: nothing on stdout, one line on stderr', async (t) => {
  for (const [input, message] of [
    ['', /^envhook: config on stdin is not valid JSON \(empty\)\n$/],
    ['{"process": {"env": "CANARY_pc"}}', /^envhook: config on stdin: \/process\/env: must be array\n$/],
    [
      '{"annotations": {"io.kubernetes.cri.container-name": "app", "envhook.io/env": "{\\"app\\": [{\\"name\\": \\"A\\", \\"value\\": \\"CANARY_pc\\", \\"valueFrom\\": {}}]}"}}',
      /^envhook: annotation "envhook\.io\/env": \/app\/0: /,
    ],
    [
      '{"mounts": [], "annotations": {"io.kubernetes.cri.container-name": "app", "envhook.io/env": "{\\"app\\": [{\\"name\\": \\"A\\", \\"valueFrom\\": {\\"fileKeyRef\\": {\\"volumeName\\": \\"config\\", \\"path\\": \\"a.env\\", \\"key\\": \\"A\\"}}}]}"}}',
      /^envhook: volume "config" not found/,
    ],
  ] as const) {
    const r = precreate(input);
    t.equal(r.status, 1, input);
    t.equal(r.stdout, '');
    t.match(r.stderr, message);
    t.notMatch(r.stderr, /CANARY/);
  }
});
