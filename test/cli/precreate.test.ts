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

t.test('lossless: layout, unknown fields and big integers kept; marked applied', async (t) => {
  const input =
    '{\n\t"ociVersion": "1.0.2",\n\t"process": {\n\t\t"env": [\n\t\t\t"PATH=/bin"\n\t\t],\n\t\t"rlimits": [\n\t\t\t{\n\t\t\t\t"type": "RLIMIT_NOFILE",\n\t\t\t\t"hard": 18446744073709551615,\n\t\t\t\t"soft": 1.0\n\t\t\t}\n\t\t]\n\t},\n\t"x-vendor": {\n\t\t"k": [\n\t\t\t1e3\n\t\t]\n\t}\n}\n';
  const r = precreate(input);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
  const expected = input.replace('\n}\n', ',\n\t"annotations": {\n\t\t"envhook.io/applied": "precreate"\n\t}\n}\n');
  t.equal(r.stdout, expected);
  const compact = precreate('{"ociVersion":"1.0.2","annotations":{"a":"b"}}');
  t.equal(compact.stdout, '{"ociVersion":"1.0.2","annotations":{"a":"b","envhook.io/applied":"precreate"}}');
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
    ['{"annotations": {"envhook.io/env": "{\\"*\\": []}"}}', /^envhook: annotation "envhook\.io\/env"/],
  ] as const) {
    const r = precreate(input);
    t.equal(r.status, 1, input);
    t.equal(r.stdout, '');
    t.match(r.stderr, message);
    t.notMatch(r.stderr, /CANARY/);
  }
});
