import t from 'tap';
import { writeAnnotation } from '../../src/convert/write-annotation.ts';
import { podOf } from '../helpers/convert-pod.ts';

function write(yaml: string, key: string, value: unknown): string {
  const { doc, facts } = podOf(yaml);
  writeAnnotation(doc, facts, key, value);
  return doc.toString({ lineWidth: 0 });
}

t.test('a new annotation is compact JSON, single-quoted; a missing metadata is created before spec', async (t) => {
  t.equal(
    write('apiVersion: v1\nkind: Pod\nspec: {}\n', 'envhook.io/serviceLinks', { '*': false }),
    `apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n    envhook.io/serviceLinks: '{"*":false}'\nspec: {}\n`,
  );
  t.equal(
    write('kind: Pod\n', 'envhook.io/serviceLinks', { '*': false }),
    `kind: Pod\nmetadata:\n  annotations:\n    envhook.io/serviceLinks: '{"*":false}'\n`,
    'no spec: last',
  );
  t.equal(
    write('kind: Pod\nmetadata:\n  name: p\nspec: {}\n', 'envhook.io/volumeOwners', [{ volume: 'v', defaultUser: 1 }]),
    `kind: Pod\nmetadata:\n  name: p\n  annotations:\n    envhook.io/volumeOwners: '[{"volume":"v","defaultUser":1}]'\nspec: {}\n`,
  );
});

t.test('an existing annotation keeps its scalar style: double-quoted, and a block stays a literal block', async (t) => {
  t.equal(
    write(`kind: Pod\nmetadata:\n  annotations:\n    envhook.io/serviceLinks: "{}"\nspec: {}\n`, 'envhook.io/serviceLinks', { a: true }),
    `kind: Pod\nmetadata:\n  annotations:\n    envhook.io/serviceLinks: "{\\"a\\":true}"\nspec: {}\n`,
  );
  t.equal(
    write(
      `kind: Pod\nmetadata:\n  annotations:\n    envhook.io/serviceLinks: >\n      {"a": false}\nspec: {}\n`,
      'envhook.io/serviceLinks',
      { a: true },
    ),
    `kind: Pod\nmetadata:\n  annotations:\n    envhook.io/serviceLinks: |\n      {"a":true}\nspec: {}\n`,
  );
});

t.test('an empty value or undefined removes the key, and an annotations map left empty goes with it', async (t) => {
  const two = `kind: Pod\nmetadata:\n  name: p\n  annotations:\n    other: x\n    envhook.io/env: '{"a":[]}'\nspec: {}\n`;
  t.equal(write(two, 'envhook.io/env', {}), `kind: Pod\nmetadata:\n  name: p\n  annotations:\n    other: x\nspec: {}\n`);
  const one = `kind: Pod\nmetadata:\n  name: p\n  annotations:\n    envhook.io/volumeOwners: '[]'\nspec: {}\n`;
  t.equal(write(one, 'envhook.io/volumeOwners', []), `kind: Pod\nmetadata:\n  name: p\nspec: {}\n`);
  t.equal(write(one, 'envhook.io/volumeOwners', undefined), `kind: Pod\nmetadata:\n  name: p\nspec: {}\n`);
  t.equal(write('kind: Pod\nspec: {}\n', 'envhook.io/env', undefined), 'kind: Pod\nspec: {}\n', 'nothing created to remove nothing');
});
