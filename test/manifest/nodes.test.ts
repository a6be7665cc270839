// Typed access to yaml nodes: a value of another type than asked is absent, never a crash.
import t from 'tap';
import { Document, isScalar, type YAMLMap } from 'yaml';
import { parseManifest } from '../../src/manifest/read.ts';
import { getMap, getSeq, getStr, mapsOf, offsetOf, pairOf, ptr } from '../../src/manifest/nodes.ts';

const text = 'name: web\nport: 80\nmeta: {a: 1}\nlist: [x, {b: 2}, 3, {c: 4}]\n';
const root = () => parseManifest('m.yaml', text).docs[0]!.contents as YAMLMap;

t.test('each getter gives its type or undefined', async (t) => {
  const m = root();
  t.equal(getStr(m, 'name'), 'web');
  t.equal(getStr(m, 'port'), undefined, 'a number is not a string');
  t.equal(getStr(m, 'meta'), undefined);
  t.equal(getStr(m, 'missing'), undefined);
  t.equal(getMap(m, 'meta')?.get('a'), 1);
  t.equal(getMap(m, 'list'), undefined);
  t.equal(getSeq(m, 'list')?.items.length, 4);
  t.equal(getSeq(m, 'meta'), undefined);
});

t.test('mapsOf: the maps of a sequence with their index in it', async (t) => {
  t.same(
    mapsOf(getSeq(root(), 'list')).map(([map, i]) => [map.toJSON(), i]),
    [
      [{ b: 2 }, 1],
      [{ c: 4 }, 3],
    ],
  );
  t.same(mapsOf(undefined), []);
});

t.test("offsets: a node's, a pair's key, 0 for a node made rather than parsed", async (t) => {
  const m = root();
  t.equal(offsetOf(getMap(m, 'meta')), text.indexOf('{a'));
  t.equal(offsetOf(pairOf(m, 'port')), text.indexOf('port'));
  t.equal(pairOf(m, 'nope'), undefined);
  const made = new Document({ x: 1 }).contents as YAMLMap;
  t.equal(offsetOf(made), 0);
  t.equal(offsetOf(null), 0);
  t.ok(isScalar(pairOf(m, 'name')!.key));
});

t.test('ptr: a JSON pointer, ~ and / escaped (RFC 6901)', async (t) => {
  t.equal(ptr('spec', 'containers', 0, 'env'), '/spec/containers/0/env');
  t.equal(ptr('metadata', 'annotations', 'envhook.io/env'), '/metadata/annotations/envhook.io~1env');
  t.equal(ptr('a~b'), '/a~0b');
  t.equal(ptr(), '/');
});
