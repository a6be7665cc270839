// Reading manifests: YAML 1.1 as Kubernetes reads it, several documents, JSON noticed, positions
// 1-based, and a file that is too large or not a regular file refused with one line.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { isMap, type YAMLMap } from 'yaml';
import { MAX_MANIFEST_BYTES, parseManifest, positionAt, readManifest } from '../../src/manifest/read.ts';

const first = (text: string) => parseManifest('m.yaml', text).docs[0]!.contents as YAMLMap;

t.test('YAML 1.1: a leading zero is octal, as sigs.k8s.io/yaml reads it', async (t) => {
  const m = first('defaultMode: 0400\nother: 0644\nplain: 400\n');
  t.equal(m.get('defaultMode'), 256);
  t.equal(m.get('other'), 420);
  t.equal(m.get('plain'), 400);
});

t.test('several documents; JSON is told apart from YAML; empty input has none', async (t) => {
  const m = parseManifest('m.yaml', 'kind: Pod\n---\nkind: Service\n---\n');
  t.same(
    m.docs.map((d) => (isMap(d.contents) ? d.contents.get('kind') : null)),
    ['Pod', 'Service', null],
  );
  t.equal(m.json, false);
  t.equal(parseManifest('m.json', '  {"kind": "Pod"}').json, true);
  t.equal(parseManifest('m.json', '[{"kind": "Pod"}]').json, true);
  t.same(parseManifest('e.yaml', '').docs, []);
  t.equal(parseManifest('m.yaml', 'kind: Pod').file, 'm.yaml');
});

t.test('a key twice is a document error, not a silent last-one-wins', async (t) => {
  const [doc] = parseManifest('m.yaml', 'kind: Pod\nkind: Service\n').docs;
  t.equal(doc!.errors.length, 1);
});

t.test('positions are 1-based line and column', async (t) => {
  const text = 'kind: Pod\nmetadata:\n  name: web\n';
  const m = parseManifest('m.yaml', text);
  t.same(positionAt(m, 0), { line: 1, column: 1 });
  t.same(positionAt(m, text.indexOf('name')), { line: 3, column: 3 });
});

t.test('a file: read under its own name; too large, a directory or missing: one line', async (t) => {
  const dir = t.testdir({ 'pod.yaml': 'kind: Pod\n', sub: {} });
  const m = readManifest(path.join(dir, 'pod.yaml'));
  t.equal(m.file, path.join(dir, 'pod.yaml'));
  t.equal(m.text, 'kind: Pod\n');
  const big = path.join(dir, 'big.yaml');
  fs.writeFileSync(big, '');
  fs.truncateSync(big, MAX_MANIFEST_BYTES + 1);
  t.throws(() => readManifest(big), { message: `${big}: larger than ${MAX_MANIFEST_BYTES} bytes` });
  t.throws(() => readManifest(path.join(dir, 'sub')), { message: `${path.join(dir, 'sub')}: not a regular file` });
  t.throws(() => readManifest(path.join(dir, 'none.yaml')), {
    message: `cannot read ${path.join(dir, 'none.yaml')}: no such file or directory (ENOENT)`,
  });
});
