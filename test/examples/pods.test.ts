// The example manifests' envhook annotations are valid (schema) and select the right containers.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/bundle.ts';
import { readEnv, readEnvFrom, readServiceLinks } from '../../src/k8s/annotations.ts';
import { envRequest } from '../../src/plan/request.ts';

/** envhook.io/* annotations of a manifest: `key: |` blocks and `key: '…'` one-liners (no YAML library). */
function annotations(file: string): Record<string, string> {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const out: Record<string, string> = {};
  lines.forEach((line, i) => {
    const m = /^(\s*)(envhook\.io\/\w+): (.*)$/.exec(line);
    if (!m) return;
    if (m[3] !== '|') return void (out[m[2]!] = m[3]!.replace(/^'(.*)'$/, '$1'));
    const body: string[] = [];
    for (let j = i + 1; j < lines.length && (lines[j]!.startsWith(m[1]! + '  ') || lines[j] === ''); j++) body.push(lines[j]!);
    out[m[2]!] = body.join('\n');
  });
  return out;
}

for (const [name, container] of [
  ['kep-3721-story1.yaml', 'use-envfile'],
  ['kep-3721-story2.yaml', 'main'],
] as const) {
  t.test(name, async (t) => {
    const a = annotations(path.join(REPO, 'examples/pods', name));
    t.ok(readEnv(a), 'env annotation valid');
    readEnvFrom(a);
    readServiceLinks(a);
    const req = envRequest({ annotations: a, container });
    t.ok(req && req.env.length > 0, `env for ${container}`);
    t.equal(envRequest({ annotations: a, container: 'init' })?.env.length ?? 0, 0, 'nothing for the init container');
  });
}

t.test('examples/bundle/annotations.json', async (t) => {
  const raw = JSON.parse(fs.readFileSync(path.join(REPO, 'examples/bundle/annotations.json'), 'utf8'));
  const a = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, JSON.stringify(v)]));
  t.equal(envRequest({ annotations: a, container: 'main' })?.env.length, 4);
});
